//! Several `dragnet run` processes started at once on one fresh SQLite
//! store all succeed: the first-time setup (WAL, migrations) is done by one
//! of them while the others wait, and every run is recorded.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const PROCESSES: usize = 6;
/// Fresh stores tried with an explicit URL.
const ROUNDS: usize = 7;

fn workflow() -> String {
    let dir = dragnet_shop::openapi_path()
        .parent()
        .expect("the shop's folder")
        .to_path_buf();
    dir.join("nightly-open-orders.workflow.yaml")
        .display()
        .to_string()
}

fn fresh_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "dragnet-concurrent-{tag}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    dir
}

/// `dragnet ARGS` in `cwd`, with no database chosen by the environment.
fn dragnet(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dragnet"));
    cmd.current_dir(cwd)
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("DRAGNET_DATABASE_URL")
        .env_remove("DRAGNET_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Starts every run at once, then waits for all of them.
fn run_all_at_once(cwd: &Path, args: &[&str]) -> Vec<Output> {
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| dragnet(cwd, args).spawn().expect("the binary starts"))
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("the run ends"))
        .collect()
}

fn assert_all_ran(outputs: &[Output]) {
    for (i, o) in outputs.iter().enumerate() {
        let code = o.status.code();
        assert!(
            matches!(code, Some(0 | 3)),
            "run {i} exited {code:?}:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

fn listed_runs(cwd: &Path, db: &[&str]) -> Vec<Value> {
    let mut args = vec!["runs", "list", "--json", "--limit", "100"];
    args.extend_from_slice(db);
    let o = dragnet(cwd, &args).output().expect("runs list");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let list: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    list.as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn six_runs_at_once_on_a_fresh_sqlite_file_all_succeed() {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("shop={}", shop.base_url());
    let stores = tokio::task::spawn_blocking(move || {
        let wf = workflow();
        let mut stores = Vec::new();
        // A store named on the command line, fresh each round (the race is
        // in the first moments of a new file, so it is tried a few times)…
        for _ in 0..ROUNDS {
            let dir = fresh_dir("url");
            let db = format!("sqlite://{}", dir.join("x.db").display());
            let run = ["run", &wf, "--base-url", &base, "--database-url", &db];
            assert_all_ran(&run_all_at_once(&dir, &run));
            stores.push(listed_runs(&dir, &["--database-url", &db]));
            let _ = std::fs::remove_dir_all(&dir);
        }
        // …and the default one, in a fresh working directory.
        let cwd = fresh_dir("default");
        assert_all_ran(&run_all_at_once(&cwd, &["run", &wf, "--base-url", &base]));
        assert!(cwd.join(".dragnet/dragnet.db").is_file());
        stores.push(listed_runs(&cwd, &[]));
        let _ = std::fs::remove_dir_all(&cwd);
        stores
    })
    .await
    .unwrap();
    for runs in stores {
        assert_eq!(runs.len(), PROCESSES, "{runs:#?}");
        assert!(runs
            .iter()
            .all(|r| r["workflow"] == "nightly-open-orders" && r["status"] == "succeeded"));
    }
    shop.shutdown().await;
}
