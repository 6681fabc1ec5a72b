//! With `--json`, a failed command still prints one JSON document on
//! stdout, `{"error": {"kind", "message", …}}`, and the usual line on
//! stderr; and every message says each thing once.

mod common;

use std::process::Output;

use common::{call_args, dragnet, fresh_db, run_blocking, scratch, shop, stderr, stdout_json};
use serde_json::Value;

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// The error document on stdout, after checking the exit code and that
/// stderr says the same message.
fn error_document(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    let doc = stdout_json(o);
    let message = doc["error"]["message"].as_str().expect("a message");
    assert!(doc["error"]["kind"].is_string(), "{doc}");
    let err = stderr(o);
    assert!(err.contains(&format!("error: {message}")), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    doc
}

#[tokio::test(flavor = "multi_thread")]
async fn call_errors_are_json_with_their_kind_and_fields() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let cases: Vec<(Vec<&str>, &str, &str, Value)> = vec![
        (
            vec!["listOrdrs"],
            "unknown_tool",
            "tool",
            "listOrdrs".into(),
        ),
        (
            vec!["listOrders", "page=abc"],
            "invalid_argument",
            "argument",
            "page".into(),
        ),
        (
            vec!["listOrders", "--max-seconds", "18446744073709551615"],
            "invalid_limit",
            "argument",
            "--max-seconds".into(),
        ),
        (
            vec!["listOrders", "--for-each", "store=1,2"],
            "invalid_for_each_key",
            "key",
            "store".into(),
        ),
        (
            vec!["listOrders", "--header", "X-Shop-Fault: status=1:404"],
            "upstream_status",
            "status",
            404.into(),
        ),
    ];
    for (extra, kind, field, value) in cases {
        let mut args = extra.clone();
        args.push("--json");
        let o = run_blocking(fresh_db(), call_args(&base, &args)).await;
        let doc = error_document(&o);
        assert_eq!(doc["error"]["kind"], kind, "{extra:?}: {doc}");
        assert_eq!(doc["error"][field], value, "{extra:?}: {doc}");
    }
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn run_runs_tools_and_config_errors_are_json() {
    let missing = scratch("workflow.yaml").display().to_string();
    let o = run_blocking(fresh_db(), owned(&["run", &missing, "--json"])).await;
    let doc = error_document(&o);
    assert_eq!(doc["error"]["kind"], "invalid_workflow", "{doc}");
    assert_eq!(doc["error"]["diagnostics"][0]["file"], missing.as_str());

    let o = run_blocking(fresh_db(), owned(&["runs", "show", "nope", "--json"])).await;
    let doc = error_document(&o);
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no run `nope`"));

    let o = dragnet(&["tools", "--spec", "/nonexistent/spec.yaml", "--json"]);
    let doc = error_document(&o);
    assert_eq!(doc["error"]["kind"], "read_document", "{doc}");
    assert_eq!(doc["error"]["file"], "/nonexistent/spec.yaml");

    let bad = scratch("toml");
    std::fs::write(&bad, "colour = 1\n").unwrap();
    let o = dragnet(&["--config", bad.to_str().unwrap(), "runs", "list", "--json"]);
    let doc = error_document(&o);
    assert_eq!(doc["error"]["kind"], "invalid_config", "{doc}");
    assert_eq!(
        doc["error"]["argument"],
        format!("{}:1:1", bad.display()).as_str()
    );

    // Without --json, stdout stays empty.
    let o = dragnet(&["tools", "--spec", "/nonexistent/spec.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_error_is_said_once() {
    let shop = shop().await;
    let args = call_args(
        shop.base_url(),
        &["listOrders", "--header", "X-Shop-Fault: status=1:404"],
    );
    let o = run_blocking(fresh_db(), args).await;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("upstream answered HTTP 404").count(),
        1,
        "{err}"
    );
    assert_eq!(err.matches("injected fault").count(), 1, "{err}");
    shop.shutdown().await;
}
