//! An upstream MCP server as a provider: a server written in the test with
//! the Python SDK (`tests/mcp/upstream_server.py`), whose tool list comes
//! in pages, used by `dragnet mcp` as a supervised child process over
//! stdio and as a streamable HTTP server. The gateway reads its whole tool
//! list, guards its tools, walks the one with paging arguments to the
//! end, passes its progress on, and never sends it a reserved argument.
//! The client is the Python `mcp` package, over stdio.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{binary, fresh_db, mcp_plan, python, recorded, scratch};
use serde_json::{json, Value};

fn script(name: &str) -> String {
    format!("{}/tests/mcp/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// An agent configuration with the upstream MCP server `server` (YAML).
fn config(server: &str) -> std::path::PathBuf {
    let path = scratch("yaml");
    std::fs::write(
        &path,
        format!(
            "organisation: acme
size_budget_tokens: 20000
providers:
  tickets:
    mcp: {server}
agents:
  support:
    agentTools:
      - {{ tool_id: list_tickets, provider_id: tickets, loop_responses: true }}
      - {{ tool_id: ticket_note, provider_id: tickets, loop_responses: false }}
      - {{ tool_id: crash, provider_id: tickets, loop_responses: false }}
      - {{ tool_id: close_ticket, provider_id: tickets, loop_responses: false }}
"
        ),
    )
    .unwrap();
    path
}

/// Runs `steps` with the Python client against `dragnet mcp --stdio`.
fn through_gateway(config: &Path, steps: Value) -> Vec<Value> {
    let plan = json!({
        "stdio": {
            "command": binary().display().to_string(),
            "args": ["mcp", "--config", config.display().to_string(), "--agent", "support", "--stdio"],
            "env": {"DATABASE_URL": fresh_db(), "DRAGNET_LOG": "warn", "TEST_UPSTREAM_KEY": "k-123"},
        },
        "mode": "legacy",
        "steps": steps,
    });
    mcp_plan(&plan)
}

/// Walks, notes and checks what reached the upstream; `key` is the
/// `X-Upstream-Key` it must have seen (read from the environment).
fn check(config: &Path, record: &Path, key: Option<&str>) {
    let seen = through_gateway(
        config,
        json!([
            {"list": true},
            {"call": "list_tickets", "args": {"per_page": 50, "_all_pages": true, "_fields": ["id"]}},
            {"call": "ticket_note", "args": {"id": 7}},
            {"call": "ticket_note", "args": {"id": 7, "_all_pages": true}},
        ]),
    );
    // `list_tickets` is on the upstream's last page of tools.
    let tools = seen[0]["tools"].as_object().unwrap();
    assert!(seen[0]["next_cursor"].is_null(), "one complete page");
    assert!(tools["list_tickets"]
        .as_array()
        .unwrap()
        .contains(&json!("_all_pages")));
    assert!(tools.contains_key("ticket_note") && tools.contains_key("queryToolResult"));
    let walk = &seen[1]["json"];
    assert_eq!(seen[1]["error"], false, "{}", seen[1]);
    assert_eq!(walk["_pagingComplete"], true, "{walk}");
    let rows = walk
        .get("tickets")
        .or_else(|| walk.get("items"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no rows in {walk}"));
    assert_eq!(rows.len(), 230, "{walk}");
    assert_eq!(rows[0], json!({"id": 1}));
    // The upstream's own progress came through, and the walk's, as one
    // rising series counted in requests: the walk's total (its request
    // bound) is the only total, so the unit never changes. Which of the
    // upstream's reports arrive is up to the transport (one may land after
    // its answer), so any of them will do.
    let progress = seen[1]["progress"].as_array().unwrap();
    assert!(
        progress.iter().any(|p| p["message"]["upstream"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("read page "))),
        "{progress:?}"
    );
    let done: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(done.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    for p in progress {
        let total = p["total"].as_f64();
        match p["message"].get("requestsMax") {
            Some(max) => assert_eq!(total, max.as_f64(), "{p}"),
            None => assert!(total.is_none() || total == Some(60.0), "{p}"),
        }
    }
    // Prose is answered as one string; a reserved argument on a tool
    // bound without looping is refused before any call.
    assert_eq!(seen[2]["error"], false, "{}", seen[2]);
    assert!(seen[2]["text"].as_str().unwrap().contains("Ticket 7"));
    assert_eq!(seen[3]["error"], true, "{}", seen[3]);
    // Exactly the five pages and one note reached the upstream, with no
    // reserved argument.
    let calls = recorded(record);
    let pages: Vec<i64> = calls
        .iter()
        .filter(|c| c["tool"] == "list_tickets")
        .map(|c| c["arguments"]["page"].as_i64().unwrap())
        .collect();
    assert_eq!(pages, vec![1, 2, 3, 4, 5], "{calls:?}");
    assert_eq!(
        calls.iter().filter(|c| c["tool"] == "ticket_note").count(),
        1
    );
    for c in &calls {
        let args = c["arguments"].as_object().unwrap();
        assert!(args.keys().all(|k| !k.starts_with('_')), "{c}");
        assert_eq!(c["key"].as_str(), key, "{c}");
    }
}

#[test]
fn a_stdio_upstream_mcp_server_is_listed_whole_guarded_and_walked() {
    let record = scratch("jsonl");
    let server =
        json!({"command": [python(), script("upstream_server.py"), record.display().to_string()]});
    let config = config(&server.to_string());
    check(&config, &record, None);
    let _ = std::fs::remove_file(&config);
    let _ = std::fs::remove_file(&record);
}

#[test]
fn an_upstream_child_that_exits_is_started_again() {
    let record = scratch("jsonl");
    let server =
        json!({"command": [python(), script("upstream_server.py"), record.display().to_string()]});
    let config = config(&server.to_string());
    let seen = through_gateway(
        &config,
        json!([
            {"call": "ticket_note", "args": {"id": 1}},
            {"call": "crash", "args": {}},
            {"sleep": 2.5},
            {"call": "ticket_note", "args": {"id": 2}},
            {"call": "close_ticket", "args": {"id": 7}},
        ]),
    );
    // A tool error on a binding without looping reaches the agent as the
    // tool said it (it read "upstream answered HTTP 422" before).
    assert_eq!(seen[4]["error"], true, "{seen:?}");
    assert_eq!(
        seen[4]["content"],
        json!([{"type": "text", "text": "ticket 7 cannot be closed: it has open tasks"}]),
        "{seen:?}"
    );
    assert_eq!(seen[0]["error"], false, "{seen:?}");
    assert_eq!(
        seen[1]["error"], true,
        "the crash is a tool error: {seen:?}"
    );
    assert_eq!(seen[3]["error"], false, "restarted: {seen:?}");
    assert!(seen[3]["text"].as_str().unwrap().contains("Ticket 2"));
    let notes = recorded(&record)
        .iter()
        .filter(|c| c["tool"] == "ticket_note")
        .count();
    assert_eq!(notes, 2);
    let _ = std::fs::remove_file(&config);
    let _ = std::fs::remove_file(&record);
}

/// The upstream over HTTP, killed when dropped.
struct Upstream(Child);

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_streamable_http_upstream_mcp_server_is_walked_the_same_way() {
    let record = scratch("jsonl");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _upstream = Upstream(
        Command::new(python())
            .arg(script("upstream_server.py"))
            .arg(&record)
            .args(["--http", &port.to_string()])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let up = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "the upstream did not start listening");
    // The secret header comes from the environment, not the file.
    let server = json!({
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers_env": {"X-Upstream-Key": "TEST_UPSTREAM_KEY"},
    });
    let config = config(&server.to_string());
    assert!(!std::fs::read_to_string(&config).unwrap().contains("k-123"));
    check(&config, &record, Some("k-123"));
    let _ = std::fs::remove_file(&config);
    let _ = std::fs::remove_file(&record);
}
