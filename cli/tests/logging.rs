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
        &[("DRAGNET_LOG", "dragnet_http=debug")],
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

/// Log lines written to a file or a pipe (as `dragnet serve > serve.log`
/// does) carry no colour codes; `NO_COLOR` is honoured; `--log-format json`
/// and `DRAGNET_LOG_FORMAT=json` give one JSON object per line; a bad
/// `[log] format` in the configuration file is located.
#[tokio::test(flavor = "multi_thread")]
async fn log_lines_to_a_pipe_are_plain_or_json_never_coloured() {
    let shop = shop().await;
    let base = shop.base_url().to_string();

    let o = retrying_call(&base, "plain", &[("DRAGNET_LOG", "debug")]).await;
    assert!(stderr(&o).contains(RETRY_LINE), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains('\u{1b}'),
        "no escape codes in a pipe: {:?}",
        stderr(&o)
    );

    for (session, env) in [
        (
            "json-env",
            vec![("DRAGNET_LOG", "debug"), ("DRAGNET_LOG_FORMAT", "json")],
        ),
        (
            "no-color",
            vec![("DRAGNET_LOG", "debug"), ("NO_COLOR", "1")],
        ),
    ] {
        let json = env.iter().any(|(k, _)| *k == "DRAGNET_LOG_FORMAT");
        let o = retrying_call(&base, session, &env).await;
        let text = stderr(&o);
        assert!(text.contains(RETRY_LINE), "{text}");
        assert!(!text.contains('\u{1b}'), "{text:?}");
        if json {
            let lines: Vec<&str> = text.lines().filter(|l| l.starts_with('{')).collect();
            assert!(!lines.is_empty(), "{text}");
            for line in &lines {
                let v: serde_json::Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not one JSON object per line ({e}): {line}"));
                assert!(v["level"].is_string() && v["timestamp"].is_string(), "{v}");
            }
            assert!(
                lines.iter().any(|l| l.contains(RETRY_LINE)),
                "the retry line is JSON: {text}"
            );
        }
    }

    let mut args = call_args(&base, &["listOrders"]);
    args.splice(0..0, ["--log-format".to_string(), "json".to_string()]);
    for header in ["X-Shop-Fault: status=1:500", "X-Shop-Session: json-flag"] {
        args.push("--header".into());
        args.push(header.into());
    }
    let o = tokio::task::spawn_blocking(move || {
        command(&fresh_db())
            .args(&args)
            .env("DRAGNET_LOG", "debug")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = stderr(&o);
    assert!(
        text.lines()
            .any(|l| l.starts_with('{') && l.contains(RETRY_LINE)),
        "--log-format json: {text}"
    );

    let config = common::scratch("toml");
    std::fs::write(&config, "[log]\nformat = \"yaml\"\n").unwrap();
    let args = call_args(&base, &["listOrders"]);
    let path = config.clone();
    let o = tokio::task::spawn_blocking(move || {
        command(&fresh_db())
            .arg("--config")
            .arg(&path)
            .args(&args)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stderr(&o);
    assert!(
        text.contains(":2:") && text.contains("log.format") && text.contains("yaml"),
        "located: {text}"
    );
    shop.shutdown().await;
}
