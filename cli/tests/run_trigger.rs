//! `dragnet runs` says what started each run (issue 21): a local `dragnet
//! run` is recorded `manual` in its own store, a run triggered on a server
//! `api` with the token's id; `runs list --trigger KIND` filters, locally
//! and through a server; `runs show` prints the trigger; a kind that is
//! none is a usage error naming the kinds.

mod common;

use common::{
    acme_token, client, command, dragnet_on, example, fresh_db, scratch, serve_with, shop, stderr,
    stdout, stdout_json,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_run_is_manual_and_listed_by_its_trigger() {
    let shop = shop().await;
    let base = format!("shop={}", shop.base_url());
    let nightly = example("nightly-open-orders.workflow.yaml");
    let db = fresh_db();
    let (run, manual, api, show, bad) = tokio::task::spawn_blocking(move || {
        let run = dragnet_on(&db, &["run", &nightly, "--base-url", &base, "--json"]);
        let manual = dragnet_on(&db, &["runs", "list", "--trigger", "manual", "--json"]);
        let api = dragnet_on(&db, &["runs", "list", "--trigger", "api", "--json"]);
        let id = stdout_json(&run)["run_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let show = dragnet_on(&db, &["runs", "show", &id]);
        let bad = dragnet_on(&db, &["runs", "list", "--trigger", "hourly"]);
        (run, manual, api, show, bad)
    })
    .await
    .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let record = stdout_json(&run);
    assert_eq!(record["trigger"]["kind"], "manual", "{record}");
    let rows = stdout_json(&manual);
    assert_eq!(rows[0]["run_id"], record["run_id"], "{rows}");
    assert_eq!(rows[0]["trigger"], "manual", "{rows}");
    assert_eq!(stdout_json(&api), serde_json::json!([]));
    assert!(
        stdout(&show).contains("trigger: manual"),
        "{}",
        stdout(&show)
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("manual, api, schedule, rerun"),
        "{}",
        stderr(&bad)
    );
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_run_says_who_triggered_it() {
    let shop = shop().await;
    let db = fresh_db();
    let token = acme_token(&db);
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(example("nightly-open-orders.workflow.yaml"))
        .unwrap()
        .replace("http://127.0.0.1:8080", shop.base_url());
    std::fs::write(dir.join("nightly.yaml"), text).unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    let file = dir.join("nightly.yaml").display().to_string();

    let (server, addr) = serve_with(command(&db));
    let (db2, addr2, token2) = (db.clone(), addr.clone(), token.clone());
    let (run, api, scheduled, show) = tokio::task::spawn_blocking(move || {
        let client = client(&db2, &addr2, &token2);
        let pushed = client(&["workflows", "push", &file]);
        assert!(pushed.status.success(), "{}", stderr(&pushed));
        let run = client(&["trigger", "nightly-open-orders", "--follow"]);
        let api = client(&["runs", "list", "--trigger", "api", "--json"]);
        let scheduled = client(&["runs", "list", "--trigger", "schedule", "--json"]);
        let id = stdout_json(&api)[0]["run_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let show = client(&["runs", "show", &id]);
        (run, api, scheduled, show)
    })
    .await
    .unwrap();
    drop(server);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let rows = stdout_json(&api);
    assert_eq!(rows[0]["trigger"], "api", "{rows}");
    assert_eq!(stdout_json(&scheduled), serde_json::json!([]));
    let shown = stdout(&show);
    assert!(
        shown.contains("trigger: api by token:tok_") && !shown.contains(&token),
        "{shown}"
    );
    shop.shutdown().await;
}
