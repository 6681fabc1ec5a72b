//! What the binary's tests share: running `dragnet` on a database of its
//! own, the demo shop on a free port, and reading what the binary printed.
#![allow(dead_code)] // each test file uses the part it needs

pub mod mcp_http;
pub mod postgres;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The binary under test: cargo's build of it, or `DRAGNET_TEST_BIN` when
/// set (a copy taken when several checkouts share one target directory and
/// so overwrite each other's `target/debug/dragnet`).
pub fn binary() -> PathBuf {
    std::env::var_os("DRAGNET_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_dragnet")))
}

/// The binary with a clean environment: no configuration file or database
/// URL inherited from the machine, no log filter.
pub fn command(db: &str) -> Command {
    let mut c = Command::new(binary());
    c.env("DATABASE_URL", db)
        .env_remove("DRAGNET_DATABASE_URL")
        .env_remove("DRAGNET_CONFIG")
        .env_remove("DRAGNET_CACHE_MODE")
        .env_remove("DRAGNET_LOG")
        .env_remove("DRAGNET_LOG_FORMAT")
        .env_remove("NO_COLOR")
        .env_remove("DRAGNET_SERVER")
        .env_remove("DRAGNET_TOKEN")
        .env_remove("DRAGNET_BIND")
        .env_remove("DRAGNET_WORKFLOWS_DIR")
        .env_remove("DRAGNET_MAX_RUNNING_RUNS")
        .env_remove("DRAGNET_LEASE_SECONDS")
        .env_remove("DRAGNET_DATABASE_POOL_SIZE")
        .env_remove("RUST_LOG");
    c
}

/// Runs the binary with a database of its own (a fresh SQLite file), so
/// tests never share state or write into the source tree.
pub fn dragnet(args: &[&str]) -> Output {
    dragnet_on(&fresh_db(), args)
}

/// A fresh SQLite database URL in the temporary folder.
pub fn fresh_db() -> String {
    format!("sqlite://{}", scratch("db").display())
}

/// A path of its own in the temporary folder, ending in `.ext`.
pub fn scratch(ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "dragnet-cli-{}-{}.{ext}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Runs the binary on the database `db`.
pub fn dragnet_on(db: &str, args: &[&str]) -> Output {
    command(db).args(args).output().expect("the binary runs")
}

/// The demo shop's OpenAPI document.
pub fn spec() -> String {
    dragnet_shop::openapi_path().display().to_string()
}

/// An example workflow next to the shop's document.
pub fn example(name: &str) -> String {
    dragnet_shop::openapi_path()
        .parent()
        .unwrap()
        .join(name)
        .display()
        .to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

/// The demo shop on a free port of 127.0.0.1.
pub async fn shop() -> dragnet_shop::ShopHandle {
    dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
}

/// `call --spec <shop> --base-url <base>` followed by `extra`.
pub fn call_args(base: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "call".into(),
        "--spec".into(),
        spec(),
        "--base-url".into(),
        base.into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Runs the binary with owned arguments, off the async runtime.
pub async fn run_blocking(db: String, args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        dragnet_on(&db, &refs)
    })
    .await
    .unwrap()
}

/// The python of the pinned `mcp` package (`DRAGNET_PY`, set by `bash .ci/test`).
pub fn python() -> String {
    std::env::var("DRAGNET_PY").unwrap_or_else(|_| "/tmp/dragnet-ci-venv/bin/python".into())
}

/// Runs `plan` with the Python MCP client (`tests/mcp/plan_client.py`);
/// what each of its steps saw.
pub fn mcp_plan(plan: &Value) -> Vec<Value> {
    let script = format!("{}/tests/mcp/plan_client.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .arg(script)
        .arg(plan.to_string())
        .output()
        .expect("the MCP tests need the Python `mcp` package that `bash .ci/test` installs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the client failed:\n{stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{stderr}"))
}

/// Creates team `acme` on store `db` with the binary; a token of it.
pub fn acme_token(db: &str) -> String {
    let made = command(db)
        .args(["teams", "create", "acme"])
        .output()
        .expect("teams create runs");
    assert!(made.status.success(), "{}", stderr(&made));
    let token = command(db)
        .args(["tokens", "create", "--team", "acme"])
        .output()
        .expect("tokens create runs");
    let token = stdout(&token).trim().to_string();
    assert!(token.starts_with("dnt_"), "{token}");
    token
}

/// A `dragnet serve` a test started, killed when dropped.
pub struct Served(pub std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` (made by [`command`], with what else the test sets) as
/// `dragnet serve --bind 127.0.0.1:0`; the server and its address.
pub fn serve_with(command: Command) -> (Served, String) {
    let (child, addr) = spawn_serve(command);
    (Served(child), addr)
}

/// [`serve_with`] for a test that signals or waits for the child itself.
pub fn spawn_serve(mut command: Command) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    let mut child = command
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("serve starts");
    let out = child.stdout.take().expect("its stdout");
    let mut line = String::new();
    BufReader::new(out)
        .read_line(&mut line)
        .expect("a first line");
    (child, address_in(&line))
}

/// The `http://…` address in a line a server printed.
pub fn address_in(line: &str) -> String {
    line.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in `{line}`"))
        .to_string()
}

/// The binary as a client of the server at `addr` on store `db`, with
/// `token`: runs `args` and returns what it did.
pub fn client<'a>(db: &'a str, addr: &'a str, token: &'a str) -> impl Fn(&[&str]) -> Output + 'a {
    move |args| {
        command(db)
            .args(args)
            .env("DRAGNET_SERVER", addr)
            .env("DRAGNET_TOKEN", token)
            .output()
            .expect("the client runs")
    }
}

/// What reached a test's upstream MCP server (`tests/mcp/upstream_server.py`):
/// one JSON line per call in its record file.
pub fn recorded(record: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
