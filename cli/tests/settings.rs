//! One configuration for every command: the file's `[limits]` reach `call`,
//! `run` and `demo` (flags override them), a bad file is an error naming
//! it with the line, and every bound is checked once with a clear error —
//! never the panic a huge `--max-seconds` used to cause.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{call_args, command, example, fresh_db, run_blocking, scratch, shop, stderr, stdout};

fn write_config(text: &str) -> PathBuf {
    let path = scratch("toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn with_config(path: &Path, args: Vec<String>) -> Vec<String> {
    let mut all = vec!["--config".to_string(), path.display().to_string()];
    all.extend(args);
    all
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn assert_error(o: &Output, code: i32, expected: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for e in expected {
        assert!(err.contains(e), "expected `{e}` in {err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn huge_bounds_are_clear_errors_not_panics() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let walk = |extra: &[&str]| {
        let mut args = vec!["listOrders", "--all-pages"];
        args.extend_from_slice(extra);
        call_args(&base, &args)
    };
    let o = run_blocking(fresh_db(), walk(&["--max-seconds", "18446744073709551615"])).await;
    assert_error(
        &o,
        1,
        &[
            "--max-seconds 18446744073709551615",
            "limit `wall_clock`",
            "from 1 ms to 24 h",
        ],
    );
    let o = run_blocking(fresh_db(), walk(&["--max-pages", "0"])).await;
    assert_error(&o, 1, &["--max-pages 0", "from 1 to 100000"]);
    let o = run_blocking(fresh_db(), walk(&["--max-bytes", "18446744073709551615"])).await;
    assert_error(&o, 1, &["--max-bytes", "17179869184 bytes"]);

    let file = write_config("[limits]\nwall_clock_seconds = 18446744073709551615\n");
    let expected = format!("{}:2:22: `limits.wall_clock_seconds`", file.display());
    let o = run_blocking(fresh_db(), with_config(&file, walk(&[]))).await;
    assert_error(&o, 1, &[&expected, "24 h"]);
    let run = owned(&["run", &example("all-orders-audit.workflow.yaml")]);
    let o = run_blocking(fresh_db(), with_config(&file, run)).await;
    assert_error(&o, 1, &[&expected]);
    assert!(
        shop.requests().is_empty(),
        "a bad bound stops everything before the first request"
    );
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn call_applies_the_configuration_and_flags_override_it() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let walk = call_args(
        &base,
        &["listOrders", "per_page=10", "--all-pages", "--json"],
    );
    let file = write_config("[limits]\nmax_pages = 2\n");

    let o = run_blocking(fresh_db(), with_config(&file, walk.clone())).await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("pages-per-collection"),
        "{}",
        stdout(&o)
    );
    assert_eq!(shop.requests().len(), 2, "the file's max_pages bounds call");
    shop.clear_requests();

    let mut flagged = walk.clone();
    flagged.extend(owned(&["--max-pages", "3"]));
    let o = run_blocking(fresh_db(), with_config(&file, flagged)).await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(shop.requests().len(), 3, "--max-pages overrides the file");
    shop.clear_requests();

    // The default file, .dragnet/config.toml in the working directory.
    let dir = scratch("dir");
    std::fs::create_dir_all(dir.join(".dragnet")).unwrap();
    std::fs::write(
        dir.join(".dragnet/config.toml"),
        "[limits]\nmax_pages = 1\n",
    )
    .unwrap();
    let db = fresh_db();
    let o = tokio::task::spawn_blocking(move || {
        command(&db).args(&walk).current_dir(&dir).output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(shop.requests().len(), 1, "the default file bounds call");
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_toml_stops_every_command_that_uses_settings() {
    let shop = shop().await;
    let file = write_config("org = \"acme\"\nconcurrency = \"many\"\n");
    let located = format!("{}:2:15: invalid configuration", file.display());
    let audit = example("all-orders-audit.workflow.yaml");
    let commands = [
        call_args(shop.base_url(), &["listOrders"]),
        owned(&["run", &audit]),
        owned(&["demo"]),
        owned(&["migrate"]),
        owned(&["runs", "list"]),
        owned(&["cache", "list"]),
    ];
    for args in commands {
        let o = run_blocking(fresh_db(), with_config(&file, args.clone())).await;
        assert_error(&o, 1, &[&located]);
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
    }
    let syntax = write_config("[limits\nmax_pages = 2\n");
    let o = run_blocking(fresh_db(), with_config(&syntax, owned(&["runs", "list"]))).await;
    assert_error(&o, 1, &[&format!("{}:1:", syntax.display())]);
    assert!(shop.requests().is_empty());
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn run_and_demo_apply_the_configuration_limits() {
    let shop = shop().await;
    let roomy = write_config("[limits]\nmax_pages = 100\nmax_requests = 200\nmax_items = 10000\n");
    let audit = example("all-orders-audit.workflow.yaml");
    let run = owned(&[
        "run",
        &audit,
        "--base-url",
        &format!("shop={}", shop.base_url()),
    ]);
    let o = run_blocking(fresh_db(), with_config(&roomy, run.clone())).await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "the audit completes: {}",
        stderr(&o)
    );
    let mut bounded = run;
    bounded.extend(owned(&["--max-pages", "2"]));
    let o = run_blocking(fresh_db(), with_config(&roomy, bounded)).await;
    assert_eq!(
        o.status.code(),
        Some(3),
        "--max-pages overrides: {}",
        stderr(&o)
    );

    // The demo's audit runs into the default 20-page bound; with room it completes.
    let o = run_blocking(fresh_db(), with_config(&roomy, owned(&["demo"]))).await;
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    assert!(text.contains("`all-orders-audit`: Succeeded"), "{text}");
    assert!(text.contains("2 report(s) and 0 alert(s)"), "{text}");
    shop.shutdown().await;
}

#[test]
fn cache_mode_and_concurrency_are_checked() {
    let o = common::dragnet(&["--cache-mode", "sometimes", "runs", "list"]);
    assert_error(&o, 2, &["sometimes", "off", "on", "shadow"]);
    let audit = example("all-orders-audit.workflow.yaml");
    let o = common::dragnet(&["run", &audit, "--concurrency", "0"]);
    assert_error(&o, 2, &["--concurrency"]);
    let file = write_config("concurrency = 0\n");
    let path = file.display().to_string();
    let o = common::dragnet(&["--config", &path, "run", &audit]);
    assert_error(&o, 1, &[&format!("{path}:1:15: `concurrency`")]);
}
