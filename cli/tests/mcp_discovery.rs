//! `dragnet mcp --http` with tool discovery and connected apps, driven by
//! the Python `mcp` client in both protocol modes: search, load and call
//! (legacy sessions hear `tools/list_changed`, stateless requests call
//! through `call_tool`), loads kept to their thread; a connected toolkit
//! acting with its user's token, sealed at rest and never logged.

mod common;

use common::mcp_http::{bearer, config, gateway, plan, token};
use common::{fresh_db, shop};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_over_http_in_both_modes_search_load_and_call() {
    let shop = shop().await;
    let db = fresh_db();
    let gw = gateway(&config("acme", shop.base_url()), &db);
    let auth = bearer(&token("acme", "ann", "scout"));
    let orders = json!({"property_id": 2, "status": "open", "_all_pages": true});
    let tools = |seen: &Value| -> Vec<String> {
        seen["tools"]
            .as_object()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    };

    // Legacy session: the loaded tool joins the list, announced.
    let seen = plan(
        &gw.url,
        auth.clone(),
        "legacy",
        json!([
            {"list": true},
            {"call": "search_tools", "args": {"query": "orders of one property"}},
            {"call": "listPropertyOrders", "args": orders},
            {"call": "load_tool", "args": {"toolName": "listPropertyOrders"}},
            {"notifications": true},
            {"list": true},
            {"call": "listPropertyOrders", "args": orders},
        ]),
    );
    let first = tools(&seen[0]);
    assert!(first.contains(&"listOrders".to_string()), "{first:?}");
    assert!(
        !first.contains(&"listPropertyOrders".to_string()),
        "pooled: {first:?}"
    );
    for meta in ["search_tools", "load_tool", "call_tool"] {
        assert!(first.contains(&meta.to_string()), "{first:?}");
    }
    assert!(
        seen[0]["instructions"]
            .as_str()
            .unwrap_or_default()
            .contains("search_tools"),
        "{}",
        seen[0]
    );
    assert_eq!(
        seen[1]["json"]["tools"][0]["name"], "listPropertyOrders",
        "{}",
        seen[1]
    );
    assert!(
        seen[2]["error"] == true,
        "not callable before it is loaded: {}",
        seen[2]
    );
    assert!(seen[3]["error"] == false, "{}", seen[3]);
    let notes = seen[4]["notifications"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        notes
            .iter()
            .any(|n| n == "notifications/tools/list_changed"),
        "{notes:?}"
    );
    assert!(tools(&seen[5]).contains(&"listPropertyOrders".to_string()));
    assert!(seen[6]["error"] == false, "{}", seen[6]);
    assert_eq!(seen[6]["json"]["_pagingComplete"], true, "{}", seen[6]);

    // Stateless: the list never changes; the loaded tool is called through
    // call_tool, in the thread that loaded it only.
    let mut in_thread = auth.clone();
    in_thread["X-Dragnet-Thread"] = json!("thread-one");
    let seen = plan(
        &gw.url,
        in_thread.clone(),
        "2026-07-28",
        json!([
            {"list": true},
            {"call": "call_tool", "args": {"toolName": "listPropertyOrders", "arguments": orders}},
            {"call": "load_tool", "args": {"toolNames": ["listPropertyOrders"]}},
            {"list": true},
            {"call": "call_tool", "args": {"toolName": "listPropertyOrders", "arguments": orders}},
        ]),
    );
    assert_eq!(
        tools(&seen[0]),
        tools(&seen[3]),
        "a stateless list never changes"
    );
    assert!(!tools(&seen[3]).contains(&"listPropertyOrders".to_string()));
    assert!(seen[1]["error"] == true, "{}", seen[1]);
    assert!(
        seen[2]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("call_tool"),
        "{}",
        seen[2]
    );
    assert!(seen[4]["error"] == false, "{}", seen[4]);
    assert_eq!(seen[4]["json"]["_pagingComplete"], true, "{}", seen[4]);
    let mut other = auth;
    other["X-Dragnet-Thread"] = json!("thread-two");
    let seen = plan(
        &gw.url,
        other,
        "2026-07-28",
        json!([{"call": "call_tool", "args": {"toolName": "listPropertyOrders", "arguments": orders}}]),
    );
    assert!(
        seen[0]["error"] == true,
        "another thread loaded nothing: {}",
        seen[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_toolkit_acts_as_its_user_and_its_credentials_stay_sealed() {
    let shop = shop().await;
    let db = fresh_db();
    let gw = gateway(&config("acme", shop.base_url()), &db);
    let ann = bearer(&token("acme", "ann", "mailer"));
    let bob = bearer(&token("acme", "bob", "mailer"));
    const MAIL_SECRET: &str = "ann-mail-token-7f3a9c";
    let seen = plan(
        &gw.url,
        ann.clone(),
        "2026-07-28",
        json!([
            {"list": true},
            {"call": "list_connections", "args": {}},
            {"call": "connect_toolkit", "args": {"toolkit": "nomail", "credentials": "x"}},
            {"call": "connect_toolkit", "args": {"toolkit": "mailapp", "credentials": MAIL_SECRET}},
            {"call": "list_connections", "args": {}},
            {"call": "listCustomers", "args": {}},
        ]),
    );
    let listed: Vec<&String> = seen[0]["tools"].as_object().unwrap().keys().collect();
    assert!(
        listed.iter().any(|t| *t == "connect_toolkit")
            && listed.iter().any(|t| *t == "list_connections"),
        "{listed:?}"
    );
    assert_eq!(
        seen[1]["json"]["toolkits"][0]["connected"], false,
        "{}",
        seen[1]
    );
    assert!(seen[2]["error"] == true, "{}", seen[2]);
    assert!(seen[3]["error"] == false, "{}", seen[3]);
    assert_eq!(
        seen[4]["json"]["toolkits"][0]["connected"], true,
        "{}",
        seen[4]
    );
    assert!(seen[5]["error"] == false, "{}", seen[5]);
    // Ann's call carried her credentials; Bob has connected nothing.
    let auth_of = |r: &dragnet_shop::RecordedRequest| {
        r.headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .map(|(_, v)| v.clone())
    };
    let customers: Vec<Option<String>> = shop
        .requests()
        .iter()
        .filter(|r| r.path == "/customers")
        .map(auth_of)
        .collect();
    assert_eq!(customers, [Some(format!("Bearer {MAIL_SECRET}"))]);
    let seen = plan(
        &gw.url,
        bob,
        "2026-07-28",
        json!([{"call": "list_connections", "args": {}}, {"call": "listCustomers", "args": {}}]),
    );
    assert_eq!(
        seen[0]["json"]["toolkits"][0]["connected"], false,
        "{}",
        seen[0]
    );
    let last = shop
        .requests()
        .into_iter()
        .rfind(|r| r.path == "/customers");
    assert_eq!(
        last.as_ref().and_then(auth_of),
        None,
        "Bob's call carries none of Ann's"
    );
    // Sealed at rest and never logged: the secret is in no byte of the
    // store (database, WAL) nor of the gateway's debug log.
    let path = db.trim_start_matches("sqlite://");
    for file in [path.to_string(), format!("{path}-wal")] {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !bytes
                .windows(MAIL_SECRET.len())
                .any(|w| w == MAIL_SECRET.as_bytes()),
            "{file} holds the secret in the clear"
        );
    }
    let log = std::fs::read_to_string(&gw.log).unwrap_or_default();
    assert!(!log.contains(MAIL_SECRET), "the log shows the secret");
    // The row itself, read back: Ann's, and sealed.
    let read = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3, sys; rows = sqlite3.connect(sys.argv[1]).execute(\
             'SELECT org, owner, provider, hex(sealed) FROM connections').fetchall(); \
             print('\\n'.join('|'.join(r) for r in rows))",
        )
        .arg(path)
        .output()
        .expect("python3 reads the store");
    let rows = String::from_utf8_lossy(&read.stdout).to_string();
    let rows: Vec<&str> = rows.lines().collect();
    assert_eq!(
        rows.len(),
        1,
        "{rows:?} {}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert!(rows[0].starts_with("acme|user:ann|mailapp|"), "{rows:?}");
    let clear_hex: String = MAIL_SECRET.bytes().map(|b| format!("{b:02X}")).collect();
    assert!(
        !rows[0].contains(&clear_hex),
        "the sealed column holds the secret"
    );
}

/// Over stdio, a 2026-07-28 client's `tools/list` is the same before and
/// after it loads a tool (each request stands alone, as over HTTP); a
/// legacy session's grows. The loaded tool is called through `call_tool`.
#[test]
fn over_stdio_a_stateless_list_never_changes_and_a_session_list_grows() {
    let config = format!(
        "{}/../examples/discovery.agent.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let tools = |seen: &Value| -> Vec<String> {
        seen["tools"]
            .as_object()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    };
    for mode in ["2026-07-28", "legacy"] {
        let seen = common::mcp_plan(&json!({
            "stdio": {
                "command": common::binary().display().to_string(),
                "args": ["mcp", "--config", config, "--agent", "concierge", "--stdio"],
                "env": {"DATABASE_URL": fresh_db(), "DRAGNET_LOG": "warn"},
            },
            "mode": mode,
            "steps": [
                {"list": true},
                {"call": "load_tool", "args": {"toolName": "listCustomers"}},
                {"list": true},
                {"call": "call_tool", "args": {"toolName": "listCustomers", "arguments": {"limit": 5}}},
            ],
        }));
        assert_eq!(seen[1]["error"], false, "{mode}: {}", seen[1]);
        assert_eq!(seen[3]["error"], false, "{mode}: {}", seen[3]);
        let (before, after) = (tools(&seen[0]), tools(&seen[2]));
        assert!(!before.contains(&"listCustomers".to_string()), "{before:?}");
        match mode {
            "legacy" => assert!(after.contains(&"listCustomers".to_string()), "{after:?}"),
            _ => assert_eq!(before, after, "a stateless list never changes"),
        }
    }
}
