//! `dragnet worker` beside `dragnet serve` on one PostgreSQL store, as
//! processes: serve starts a two-step run and is killed with SIGKILL while
//! the run's second (slow) step is under way; the worker, claiming every
//! second, takes the run over once its lease (1 s) has expired and resumes
//! it after its finished first step. The run ends succeeded, and the shop
//! saw the first step's request once.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{acme_token, address_in, client, command, scratch, shop, stderr, stdout};
use serde_json::Value;

/// A fresh schema of the test PostgreSQL: the database URL into it, and
/// the server's URL with the schema's name (to drop it after).
fn postgres_schema() -> (String, String, String) {
    let base = std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| u.starts_with("postgres"))
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let schema = format!("dragnet_workers_{:016x}", rand_u64());
    let made = Command::new("psql")
        .args([&base, "-q", "-c", &format!("CREATE SCHEMA {schema}")])
        .output()
        .expect("psql runs (the PostgreSQL client)");
    assert!(made.status.success(), "{}", stderr(&made));
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}options[search_path]={schema}");
    (url, base, schema)
}

fn drop_schema(base: &str, schema: &str) {
    let _ = Command::new("psql")
        .args([base, "-q", "-c", &format!("DROP SCHEMA {schema} CASCADE")])
        .output();
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish()
}

/// A process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `args` on `db` with a 1 s lease; the first line it printed.
fn start(db: &str, args: &[&str]) -> (Killed, String) {
    let mut child = command(db)
        .env("DRAGNET_LEASE_SECONDS", "1")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("it starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Killed(child), line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_takes_over_the_run_of_a_killed_server_and_resumes_it() {
    let shop = shop().await;
    let (db, base, schema) = postgres_schema();
    let token = acme_token(&db);
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    std::fs::write(
        dir.join("two.yaml"),
        format!(
            "name: two
providers:
  shop:
    openapi: openapi.yaml
    base_url: {}
    headers:
      X-Shop-Fault: \"latency=300\"
steps:
  - id: properties
    tool: shop.listProperties
  - id: orders
    tool: shop.listPropertyOrders
    input: {{ status: cancelled, per_page: 100 }}
    loop:
      all_pages: true
      for_each:
        key: property_id
        values: {{ ref: \"$.steps.properties.data[*].id\" }}
      fields: [id]
",
            shop.base_url()
        ),
    )
    .unwrap();
    let (serve, line) = start(&db, &["serve", "--bind", "127.0.0.1:0"]);
    let addr = address_in(&line);
    let client = client(&db, &addr, &token);
    let pushed = client(&[
        "workflows",
        "push",
        &dir.join("two.yaml").display().to_string(),
    ]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let started = client(&["trigger", "two"]);
    assert!(started.status.success(), "{}", stderr(&started));
    let run_id = stdout(&started).trim().to_string();
    let show = || {
        let shown = command(&db)
            .args(["runs", "show", &run_id, "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&shown.stdout).unwrap_or(Value::Null)
    };
    // The first step done, the second under way: kill the server.
    let mut midway = false;
    for _ in 0..400 {
        let run = show();
        if run["steps"][0]["status"] == "succeeded" && run["steps"][1]["status"] == "running" {
            midway = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(midway, "the run never reached its second step: {}", show());
    drop(serve);
    let (_worker, line) = start(&db, &["worker"]);
    assert!(line.contains("dragnet worker"), "{line}");
    let mut finished = Value::Null;
    for _ in 0..600 {
        let run = show();
        if run["status"] != "running" && run["status"] != "queued" && !run.is_null() {
            finished = run;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let steps: Vec<&Value> = finished["steps"]
        .as_array()
        .map(|s| s.iter().map(|s| &s["status"]).collect())
        .unwrap_or_default();
    assert_eq!(
        finished["status"], "succeeded",
        "{} {steps:?}: {}",
        finished["status"], finished["steps"][1]["verdict"]
    );
    let properties = shop
        .requests()
        .iter()
        .filter(|r| r.path == "/properties")
        .count();
    assert_eq!(properties, 1, "the finished first step was not run again");
    drop(_worker);
    drop_schema(&base, &schema);
}
