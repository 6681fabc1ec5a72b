//! Tracing follows `RUST_LOG` (the ecosystem's convention) as well as
//! `DRAGNET_LOG`, which wins when both are set.

mod common;

use std::process::Output;

use common::{call_args, command, fresh_db, shop, stderr};

/// `listOrders` whose first page fails once with a 500, so the call retries.
async fn retrying_call(base: &str, session: &str, env: &[(&str, &str)]) -> Output {
    let args = call_args(
        base,
        &[
            "listOrders",
            "--header",
            "X-Shop-Fault: status=1:500",
            "--header",
            &format!("X-Shop-Session: {session}"),
        ],
    );
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    tokio::task::spawn_blocking(move || {
        command(&fresh_db()).args(&args).envs(env).output().unwrap()
    })
    .await
    .unwrap()
}

const RETRY_LINE: &str = "retrying upstream request";

#[tokio::test(flavor = "multi_thread")]
async fn rust_log_and_dragnet_log_both_set_the_filter() {
    let shop = shop().await;
    let base = shop.base_url().to_string();

    let o = retrying_call(&base, "quiet", &[]).await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!stderr(&o).contains(RETRY_LINE), "{}", stderr(&o));

    let o = retrying_call(&base, "rust-log", &[("RUST_LOG", "debug")]).await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains(RETRY_LINE), "{}", stderr(&o));
    assert!(stderr(&o).contains("DEBUG"), "{}", stderr(&o));

    let o = retrying_call(
        &base,
        "dragnet-log",
        &[("DRAGNET_LOG", "dragnet_steps=debug")],
    )
    .await;
    assert!(stderr(&o).contains(RETRY_LINE), "{}", stderr(&o));

    let o = retrying_call(
        &base,
        "both",
        &[("RUST_LOG", "debug"), ("DRAGNET_LOG", "warn")],
    )
    .await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains(RETRY_LINE),
        "DRAGNET_LOG wins: {}",
        stderr(&o)
    );
    let retried = shop
        .requests()
        .iter()
        .filter(|r| r.path == "/orders")
        .count();
    assert_eq!(retried, 8, "each of the four calls retried page 1 once");
    shop.shutdown().await;
}
