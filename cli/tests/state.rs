//! `dragnet state` (issue 25 §1): a local `dragnet run` of the example
//! incremental workflow sets its step's watermark in the local store, the
//! next run reads only the window after it, `runs show` says so, and
//! `state list|show|reset` read and reset it; through a server the same
//! commands read the team's.

mod common;

use common::{
    acme_token, client, command, dragnet_on, example, fresh_db, scratch, serve_with, shop, stderr,
    stdout, stdout_json,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_watermark_is_listed_shown_and_reset() {
    let shop = shop().await;
    let base = format!("shop={}", shop.base_url());
    let file = example("changed-tickets.workflow.yaml");
    let db = fresh_db();
    let outputs = tokio::task::spawn_blocking(move || {
        let run = |db: &str| dragnet_on(db, &["run", &file, "--base-url", &base, "--json"]);
        let first = run(&db);
        let second = run(&db);
        let id = stdout_json(&second)["run_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let shown_run = dragnet_on(&db, &["runs", "show", &id]);
        let list = dragnet_on(&db, &["state", "list", "--json"]);
        let show = dragnet_on(&db, &["state", "show", "changed-tickets", "changed"]);
        let reset = dragnet_on(&db, &["state", "reset", "changed-tickets", "changed"]);
        let after = dragnet_on(&db, &["state", "show", "changed-tickets", "changed"]);
        let table = dragnet_on(&db, &["state", "list"]);
        [first, second, shown_run, list, show, reset, after, table]
    })
    .await
    .unwrap();
    let [first, second, shown_run, list, show, reset, after, table] = outputs;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let first = stdout_json(&first);
    let rows = |r: &serde_json::Value| r["steps"][0]["output"].clone();
    assert_eq!(rows(&first)["data"].as_array().map(Vec::len), Some(40));
    let second = stdout_json(&second);
    let out = rows(&second);
    assert_eq!(out["data"], serde_json::json!([]), "{out}");
    assert_eq!(out["_loop"]["incremental"]["from"], "2026-01-05T21:00:00Z");
    assert_eq!(out["_loop"]["incremental"]["deduped"], 1);
    let said = stdout(&shown_run);
    assert!(
        said.contains("incremental from 2026-01-05T21:00:00Z (asked from 2026-01-05T20:50:00Z): watermark stays: nothing newer was read; dropped 1 row read at it before"),
        "{said}"
    );
    let listed = stdout_json(&list);
    assert_eq!(listed[0]["workflow"], "changed-tickets", "{listed}");
    assert_eq!(listed[0]["value"], "2026-01-05T21:00:00Z", "{listed}");
    assert_eq!(listed[0]["run_id"], first["run_id"], "{listed}");
    let shown = stdout(&show);
    assert!(
        shown.contains("watermark  2026-01-05T21:00:00Z (time)"),
        "{shown}"
    );
    assert!(reset.status.success(), "{}", stderr(&reset));
    assert!(stdout(&reset).contains("starts from its `initial`"));
    assert_eq!(after.status.code(), Some(1));
    assert!(
        stderr(&after).contains("no watermark for step `changed` of `changed-tickets`"),
        "{}",
        stderr(&after)
    );
    assert!(
        stdout(&table).contains("no watermarks"),
        "{}",
        stdout(&table)
    );
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_watermark_is_read_and_reset_through_the_api() {
    let shop = shop().await;
    let db = fresh_db();
    let token = acme_token(&db);
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(example("changed-tickets.workflow.yaml"))
        .unwrap()
        .replace("http://127.0.0.1:8080", shop.base_url());
    std::fs::write(dir.join("changed.yaml"), text).unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    let file = dir.join("changed.yaml").display().to_string();
    let (server, addr) = serve_with(command(&db));
    let (db2, addr2, token2) = (db.clone(), addr.clone(), token.clone());
    let outputs = tokio::task::spawn_blocking(move || {
        let client = client(&db2, &addr2, &token2);
        let pushed = client(&["workflows", "push", &file]);
        assert!(pushed.status.success(), "{}", stderr(&pushed));
        let run = client(&["trigger", "changed-tickets", "--follow"]);
        let list = client(&["state", "list", "--json"]);
        let show = client(&["state", "show", "changed-tickets", "changed", "--json"]);
        let reset = client(&["state", "reset", "changed-tickets", "changed"]);
        let again = client(&["state", "reset", "changed-tickets", "changed"]);
        [run, list, show, reset, again]
    })
    .await
    .unwrap();
    drop(server);
    let [run, list, show, reset, again] = outputs;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let listed = stdout_json(&list);
    assert_eq!(listed[0]["value"], "2026-01-05T21:00:00Z", "{listed}");
    assert_eq!(stdout_json(&show)["step"], "changed");
    assert!(reset.status.success(), "{}", stderr(&reset));
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("404") && stderr(&again).contains("watermark"),
        "{}",
        stderr(&again)
    );
    shop.shutdown().await;
}
