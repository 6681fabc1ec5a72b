//! A reader that goes away (`dragnet … | head -1`) ends the program
//! quietly: exit 0, nothing on stderr, never a panic.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{ExitStatus, Stdio};

use common::{call_args, command, fresh_db, scratch, shop};

/// Runs the binary with stdout on a pipe, reads `lines` lines from it (none:
/// the pipe is closed before the program has written anything), closes it
/// and waits. Returns the exit status and what went to stderr.
fn closed_after(db: &str, args: &[String], lines: usize) -> (ExitStatus, String) {
    let mut child = command(db)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    if lines > 0 {
        let mut reader = BufReader::new(stdout);
        for _ in 0..lines {
            let mut line = String::new();
            reader.read_line(&mut line).expect("a line arrives");
            assert!(!line.is_empty(), "the program printed a line");
        }
    } else {
        drop(stdout);
    }
    let out = child.wait_with_output().expect("the binary ends");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_quiet(what: &str, (status, err): (ExitStatus, String)) {
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_ne!(status.code(), Some(101), "{what}: {err}");
    assert_eq!(status.code(), Some(0), "{what}: {err}");
    assert!(err.trim().is_empty(), "{what}: nothing said: {err}");
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// An OpenAPI document with `n` operations, so `tools` prints far more
/// than a pipe holds.
fn big_spec(n: usize) -> String {
    let paths: serde_json::Map<String, serde_json::Value> = (0..n)
        .map(|i| {
            (
                format!("/things{i}"),
                serde_json::json!({"get": {
                    "operationId": format!("listThings{i}"),
                    "parameters": [
                        {"name": "page", "in": "query", "schema": {"type": "integer"}},
                        {"name": "per_page", "in": "query", "schema": {"type": "integer"}}
                    ],
                    "responses": {"200": {"description": "ok"}}
                }}),
            )
        })
        .collect();
    let doc = serde_json::json!({
        "openapi": "3.0.3",
        "info": {"title": "big", "version": "1"},
        "paths": paths,
    });
    let path = scratch("json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn schema_and_runs_list_end_quietly_on_a_closed_pipe() {
    let db = fresh_db();
    assert_quiet("schema", closed_after(&db, &owned(&["schema"]), 0));
    assert_quiet("runs list", closed_after(&db, &owned(&["runs", "list"]), 0));
    assert_quiet(
        "runs list --json",
        closed_after(&db, &owned(&["runs", "list", "--json"]), 0),
    );
}

#[test]
fn tools_ends_quietly_after_the_first_line() {
    let spec = big_spec(4000);
    let db = fresh_db();
    assert_quiet(
        "tools",
        closed_after(&db, &owned(&["tools", "--spec", &spec]), 1),
    );
    assert_quiet(
        "tools --json",
        closed_after(&db, &owned(&["tools", "--spec", &spec, "--json"]), 1),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn call_ends_quietly_after_the_first_row() {
    let shop = shop().await;
    let args = call_args(
        shop.base_url(),
        &[
            "listOrders",
            "per_page=100",
            "--all-pages",
            "--max-pages",
            "100",
            "--max-requests",
            "200",
            "--max-items",
            "10000",
        ],
    );
    let db = fresh_db();
    let outcome = tokio::task::spawn_blocking(move || closed_after(&db, &args, 1))
        .await
        .unwrap();
    assert_quiet("call", outcome);
    assert!(
        shop.requests().len() >= 60,
        "the walk ran before the rows were printed"
    );
    shop.shutdown().await;
}
