//! Scale-out with the built binary, as processes on one PostgreSQL
//! database (SPEC §9): an API-only `dragnet serve` (no slots of its own)
//! and three `dragnet worker`s.
//!
//! - A schedule firing every second, with four schedulers racing for each
//!   tick: one run per tick, no tick skipped between the first and the
//!   last, every run finished.
//! - A worker killed with SIGKILL in the middle of a slow walk: another
//!   takes the run over once (attempt 2) and resumes the walk; the shop's
//!   log shows the pages fetched before the kill were not fetched again
//!   (only the page in flight at the kill may be), and the verdict says
//!   the walk resumed.
//! - A worker stopped with SIGSTOP past its lease: another takes the run
//!   over; after SIGCONT the stopped worker's writes are refused, it says
//!   it gives the run up, and the run ends as the other ran it.
//! - A `dragnet serve` that runs its own runs, killed with SIGKILL while a
//!   run's second (slow) step is under way: a `dragnet worker` takes the
//!   run over once its lease has expired and resumes it after its finished
//!   first step, which the shop saw once.

mod common;

use std::collections::HashSet;
use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::postgres::Schema;
use common::{acme_token, address_in, client, command, scratch, shop, stderr, stdout};
use serde_json::Value;

/// A process, killed when dropped; what it logged goes to `log`.
struct Process {
    child: Child,
    log: std::path::PathBuf,
}

impl Process {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = signal(self.child.id(), "CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn signal(pid: u32, name: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// Starts `args` on `db` with a 2 s lease and `env`; the process and the
/// first line it printed.
fn start(db: &str, args: &[&str], env: &[(&str, &str)]) -> (Process, String) {
    let log = scratch("log");
    let mut cmd = command(db);
    cmd.env("DRAGNET_LEASE_SECONDS", "2")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(File::create(&log).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("it starts");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (Process { child, log }, line)
}

/// An API-only server and three workers on `schema`, with the team's
/// client.
struct Cluster {
    _serve: Process,
    workers: Vec<Process>,
    addr: String,
    token: String,
}

impl Cluster {
    fn start(schema: &Schema) -> Cluster {
        let token = acme_token(&schema.url);
        let (serve, line) = start(
            &schema.url,
            &["serve", "--bind", "127.0.0.1:0"],
            &[("DRAGNET_MAX_RUNNING_RUNS", "0")],
        );
        let addr = address_in(&line);
        let workers = (0..3)
            .map(|_| {
                let (w, line) = start(&schema.url, &["worker"], &[]);
                assert!(line.contains("dragnet worker"), "{line}");
                w
            })
            .collect();
        Cluster {
            _serve: serve,
            workers,
            addr,
            token,
        }
    }

    fn client(&self, db: &str, args: &[&str]) -> std::process::Output {
        client(db, &self.addr, &self.token)(args)
    }

    fn worker_with_pid(&self, pid: u32) -> Option<&Process> {
        self.workers.iter().find(|w| w.pid() == pid)
    }
}

/// A folder with the shop's document and `name.yaml` holding `yaml`.
/// A workflow that lists the shop's properties, then walks each one's
/// cancelled orders, every page `latency_ms` late (`concurrency` values at
/// a time, or the default).
fn fan_out_workflow(name: &str, base: &str, latency_ms: u64, concurrency: Option<u32>) -> String {
    let concurrency = concurrency.map_or(String::new(), |n| format!("\n        concurrency: {n}"));
    format!(
        "name: {name}
providers:
  shop:
    openapi: openapi.yaml
    base_url: {base}
    headers:
      X-Shop-Fault: \"latency={latency_ms}\"
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
        values: {{ ref: \"$.steps.properties.data[*].id\" }}{concurrency}
      fields: [id]
"
    )
}

fn workflow_dir(name: &str, yaml: &str) -> std::path::PathBuf {
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    std::fs::write(dir.join(format!("{name}.yaml")), yaml).unwrap();
    dir
}

async fn until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_schedulers_fire_each_tick_of_a_schedule_once() {
    let shop = shop().await;
    let schema = Schema::new("ticks");
    let cluster = Cluster::start(&schema);
    let workflow = |triggers: &str| {
        format!(
            "name: tick
providers:
  shop:
    openapi: openapi.yaml
    base_url: {}
{triggers}steps:
  - id: properties
    tool: shop.listProperties
",
            shop.base_url()
        )
    };
    let every_second =
        "triggers:\n  - cron: \"* * * * * *\"\n    overlap: allow\n    catch_up: all\n";
    let dir = workflow_dir("tick", &workflow(every_second));
    let file = dir.join("tick.yaml").display().to_string();
    let pushed = cluster.client(&schema.url, &["workflows", "push", &file]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    tokio::time::sleep(Duration::from_secs(6)).await;
    // A version without the trigger ends the schedule.
    std::fs::write(&file, workflow("")).unwrap();
    let pushed = cluster.client(&schema.url, &["workflows", "push", &file]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    until("every fired run ends", Duration::from_secs(30), || {
        schema.one("SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running')") == "0"
    })
    .await;

    let ticks = schema.query(
        "SELECT (EXTRACT(EPOCH FROM scheduled_for))::bigint, status, COALESCE(run_id, '') \
         FROM schedule_ticks ORDER BY scheduled_for",
    );
    assert!(ticks.len() >= 4, "{ticks:?}");
    let seconds: Vec<i64> = ticks
        .iter()
        .map(|t| t.split('|').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        seconds.windows(2).all(|w| w[1] == w[0] + 1),
        "a tick was skipped: {ticks:?}"
    );
    let runs: HashSet<&str> = ticks
        .iter()
        .map(|t| t.rsplit('|').next().unwrap())
        .collect();
    assert!(
        ticks.iter().all(|t| t.contains("|fired|")),
        "every tick fired: {ticks:?}"
    );
    assert_eq!(runs.len(), ticks.len(), "one run per tick: {ticks:?}");
    assert!(!runs.contains(""), "{ticks:?}");
    let stored = schema.one("SELECT COUNT(*) FROM runs WHERE workflow = 'tick'");
    assert_eq!(
        stored,
        ticks.len().to_string(),
        "no run without its tick: {:?} {ticks:?}",
        schema.query(
            "SELECT run_id, launch FROM runs WHERE workflow = 'tick' AND run_id NOT IN \
             (SELECT run_id FROM schedule_ticks WHERE run_id IS NOT NULL)"
        )
    );
    let succeeded =
        schema.one("SELECT COUNT(*) FROM runs WHERE workflow = 'tick' AND status = 'succeeded'");
    assert_eq!(succeeded, stored);
    // The API-only server ran none of them.
    let owners = schema.query("SELECT DISTINCT lease_owner FROM runs");
    for owner in &owners {
        let pid: u32 = owner.split(':').nth(1).unwrap().parse().unwrap();
        assert!(
            cluster.worker_with_pid(pid).is_some(),
            "{owner} is no worker"
        );
    }
}

/// The run's row: status, attempt, lease owner's pid.
fn holder(schema: &Schema, run_id: &str) -> (String, i64, Option<u32>) {
    let row = schema.one(&format!(
        "SELECT status, attempt, COALESCE(lease_owner, '') FROM runs WHERE run_id = '{run_id}'"
    ));
    let mut parts = row.split('|');
    let status = parts.next().unwrap_or_default().to_string();
    let attempt = parts.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let pid = parts
        .next()
        .and_then(|o| o.split(':').nth(1))
        .and_then(|p| p.parse().ok());
    (status, attempt, pid)
}

fn kept(schema: &Schema, run_id: &str) -> u64 {
    schema
        .one(&format!(
            "SELECT COUNT(*) FROM walk_pages WHERE run_id = '{run_id}' AND scope = 'orders'"
        ))
        .parse()
        .unwrap_or(0)
}

fn show(db: &str, run_id: &str) -> Value {
    let shown = command(db)
        .args(["runs", "show", run_id, "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&shown.stdout).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_or_stopped_mid_walk_loses_the_run_but_not_its_pages() {
    let shop = shop().await;
    let schema = Schema::new("takeover");
    let cluster = Cluster::start(&schema);
    let dir = workflow_dir(
        "slow",
        &fan_out_workflow("slow", shop.base_url(), 150, Some(1)),
    );
    let file = dir.join("slow.yaml").display().to_string();
    let pushed = cluster.client(&schema.url, &["workflows", "push", &file]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let trigger = || {
        let started = cluster.client(&schema.url, &["trigger", "slow"]);
        assert!(started.status.success(), "{}", stderr(&started));
        stdout(&started).trim().to_string()
    };

    // SIGKILL in the middle of the walk.
    let run = trigger();
    until(
        "the walk keeps three pages",
        Duration::from_secs(30),
        || kept(&schema, &run) >= 3,
    )
    .await;
    let (_, attempt, pid) = holder(&schema, &run);
    assert_eq!(attempt, 1);
    let victim = pid.expect("a holder");
    assert!(
        cluster.worker_with_pid(victim).is_some(),
        "a worker runs it"
    );
    let before_kill = shop.requests().len();
    assert!(signal(victim, "KILL"));
    let kept_at_kill = kept(&schema, &run);
    until("the run ends", Duration::from_secs(60), || {
        !matches!(holder(&schema, &run).0.as_str(), "queued" | "running")
    })
    .await;
    let (status, attempt, pid) = holder(&schema, &run);
    assert_eq!(
        (status.as_str(), attempt),
        ("succeeded", 2),
        "taken over once"
    );
    assert_ne!(pid, Some(victim));
    let log = shop.requests();
    let orders: Vec<String> = log
        .iter()
        .filter(|r| r.path.ends_with("/orders"))
        .map(|r| format!("{}?{:?}", r.path, r.query))
        .collect();
    let distinct: HashSet<&String> = orders.iter().collect();
    assert!(
        orders.len() - distinct.len() <= 1,
        "{} pages fetched twice (only the one in flight at the kill may be)",
        orders.len() - distinct.len()
    );
    assert!(log.len() > before_kill, "the new holder fetched the rest");
    let shown = show(&schema.url, &run);
    let note = shown["steps"][1]["verdict"]["note"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(note.contains("Resumed: "), "{note}");
    let resumed: u64 = note
        .split("Resumed: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(resumed >= kept_at_kill, "{note} ({kept_at_kill} kept)");

    // SIGSTOP past the lease, then SIGCONT.
    let run = trigger();
    until("the walk keeps two pages", Duration::from_secs(30), || {
        kept(&schema, &run) >= 2
    })
    .await;
    let (_, _, pid) = holder(&schema, &run);
    let paused = pid.expect("a holder");
    assert!(signal(paused, "STOP"));
    until(
        "another worker takes the run",
        Duration::from_secs(30),
        || holder(&schema, &run).1 == 2,
    )
    .await;
    assert!(signal(paused, "CONT"));
    until("the run ends", Duration::from_secs(60), || {
        !matches!(holder(&schema, &run).0.as_str(), "queued" | "running")
    })
    .await;
    let (status, attempt, pid) = holder(&schema, &run);
    assert_eq!((status.as_str(), attempt), ("succeeded", 2));
    assert_ne!(pid, Some(paused));
    let stopped = cluster.worker_with_pid(paused).expect("the stopped worker");
    until(
        "the stopped worker says it gave the run up",
        Duration::from_secs(10),
        || stopped.log().contains("gives the run up"),
    )
    .await;
    let shown = show(&schema.url, &run);
    let steps: Vec<&Value> = shown["steps"]
        .as_array()
        .map(|s| s.iter().map(|s| &s["status"]).collect())
        .unwrap_or_default();
    assert!(steps.iter().all(|s| *s == "succeeded"), "{steps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_takes_over_the_run_of_a_killed_server_and_resumes_it() {
    let shop = shop().await;
    let schema = Schema::new("workers");
    let db = schema.url.clone();
    let token = acme_token(&db);
    let dir = workflow_dir("two", &fan_out_workflow("two", shop.base_url(), 300, None));
    let (serve, line) = start(&db, &["serve", "--bind", "127.0.0.1:0"], &[]);
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
    let show = || show(&db, &run_id);
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
    let (_worker, line) = start(&db, &["worker"], &[]);
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
}
