//! `dragnet schedules` through a server (issue 25 §3): a pushed workflow's
//! trigger is listed with its next tick, paused with a reason (shown with
//! who paused it), refused a second pause with the server's words, and
//! resumed.

mod common;

use common::{
    acme_token, client, command, fresh_db, scratch, serve_with, stderr, stdout, stdout_json,
};

#[test]
fn a_schedule_is_listed_paused_and_resumed_from_the_command_line() {
    let db = fresh_db();
    let token = acme_token(&db);
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    let shop = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shop");
    std::fs::copy(
        shop.join("nightly-open-orders.workflow.yaml"),
        dir.join("nightly.yaml"),
    )
    .unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    let file = dir.join("nightly.yaml").display().to_string();
    let (_server, addr) = serve_with(command(&db));
    let client = client(&db, &addr, &token);
    let pushed = client(&["workflows", "push", &file]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));

    let listed = stdout_json(&client(&["schedules", "list", "--json"]));
    let id = listed[0]["schedule_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(id.starts_with("sch_"), "{listed}");
    assert_eq!(listed[0]["cron"], "0 2 * * *", "{listed}");

    let no_reason = client(&["schedules", "pause", &id]);
    assert_eq!(no_reason.status.code(), Some(2), "{}", stderr(&no_reason));
    let paused = client(&[
        "schedules",
        "pause",
        &id,
        "--reason",
        "the shop moves on Friday",
    ]);
    assert!(paused.status.success(), "{}", stderr(&paused));
    let said = stdout(&paused);
    assert!(
        said.contains("paused since")
            && said.contains("by token:tok_")
            && said.contains("the shop moves on Friday"),
        "{said}"
    );
    assert!(!said.contains(&token), "{said}");
    let table = stdout(&client(&["schedules", "list"]));
    assert!(
        table.contains(&id) && table.contains("paused since"),
        "{table}"
    );
    let again = client(&["schedules", "pause", &id, "--reason", "twice"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("paused already"),
        "{}",
        stderr(&again)
    );

    let resumed = client(&["schedules", "resume", &id]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let said = stdout(&resumed);
    assert!(
        said.contains("resumed (catch_up: last): next tick"),
        "{said}"
    );
    let again = client(&["schedules", "resume", &id]);
    assert!(
        stderr(&again).contains("is not paused"),
        "{}",
        stderr(&again)
    );
}
