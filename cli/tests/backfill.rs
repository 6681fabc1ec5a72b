//! `dragnet backfill` and `dragnet backfills` through `dragnet serve`
//! (issue 25 §2): a dry run lists a window's ticks in their zone across a
//! daylight-saving change and runs nothing; a backfill followed to its end
//! runs each tick once and exits 0; it is listed and shown with its runs,
//! which say `backfill` as their trigger.

mod common;

use common::{
    acme_token, client, command, fresh_db, scratch, serve_with, shop, stderr, stdout, stdout_json,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_is_listed_dry_then_run_and_followed() {
    let shop = shop().await;
    let db = fresh_db();
    let token = acme_token(&db);
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = format!(
        "name: daily
providers:
  shop:
    openapi: openapi.yaml
    base_url: {}
triggers:
  - cron: \"30 2 * * *\"
    timezone: Europe/Berlin
steps:
  - id: orders
    tool: shop.listOrders
    input: {{status: cancelled, per_page: 100}}
    loop: {{all_pages: true, fields: [id]}}
",
        shop.base_url()
    );
    std::fs::write(dir.join("daily.yaml"), yaml).unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    let file = dir.join("daily.yaml").display().to_string();
    let (server, addr) = serve_with(command(&db));
    let (db2, addr2, token2) = (db.clone(), addr.clone(), token.clone());
    let outputs = tokio::task::spawn_blocking(move || {
        let client = client(&db2, &addr2, &token2);
        let pushed = client(&["workflows", "push", &file]);
        assert!(pushed.status.success(), "{}", stderr(&pushed));
        let window = [
            "--from",
            "2026-03-28T00:00:00Z",
            "--to",
            "2026-03-30T23:00:00Z",
        ];
        let mut dry = vec!["backfill", "daily", "--dry-run"];
        dry.extend(window);
        let dry = client(&dry);
        let before = client(&["runs", "list", "--json"]);
        let mut run = vec!["backfill", "daily", "--concurrency", "2", "--follow"];
        run.extend(window);
        let run = client(&run);
        let list = client(&["backfills", "list", "--json"]);
        let id = stdout_json(&list)[0]["backfill_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let show = client(&["backfills", "show", &id]);
        let runs = client(&["runs", "list", "--trigger", "backfill", "--json"]);
        let cancel = client(&["backfills", "cancel", &id]);
        [dry, before, run, list, show, runs, cancel]
    })
    .await
    .unwrap();
    drop(server);
    let [dry, before, run, list, show, runs, cancel] = outputs;
    assert!(dry.status.success(), "{}", stderr(&dry));
    let said = stdout(&dry);
    assert!(
        said.contains("3 ticks of `daily` (dry run: nothing runs)"),
        "{said}"
    );
    for local in [
        "2026-03-28T02:30:00+01:00",
        "2026-03-29T03:00:00+02:00",
        "2026-03-30T02:30:00+02:00",
    ] {
        assert!(said.contains(local), "{said}");
    }
    assert_eq!(stdout_json(&before), serde_json::json!([]));
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let shown = stdout(&run);
    assert!(
        shown.contains("succeeded: 3 of 3 ticks done (3 succeeded)"),
        "{shown}"
    );
    assert!(stderr(&run).contains("ticks done"), "{}", stderr(&run));
    let listed = stdout_json(&list);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["status"], "succeeded", "{listed}");
    let shown = stdout(&show);
    assert!(shown.contains("2026-03-29T01:00:00Z  started"), "{shown}");
    assert_eq!(stdout_json(&runs).as_array().map(Vec::len), Some(3));
    assert!(!cancel.status.success());
    assert!(stderr(&cancel).contains("has ended"), "{}", stderr(&cancel));
    shop.shutdown().await;
}
