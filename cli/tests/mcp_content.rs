//! Answers arrive as they were said (issue 24 §1): a real MCP server from
//! npm (`@modelcontextprotocol/server-everything`, pinned by
//! `.ci/node.sh`) behind `dragnet mcp --stdio`, its tools bound without
//! looping, called by the Python `mcp` client in both of its modes. Text,
//! images, resource links, annotations and `structuredContent` reach the
//! agent unchanged; an answer that is not a collection is not wrapped in a
//! verdict; an answer over the size budget is still cut and stored.

mod common;

use std::path::PathBuf;

use common::{binary, fresh_db, mcp_plan, scratch};
use serde_json::{json, Value};

fn everything() -> PathBuf {
    let modules = std::env::var("DRAGNET_NODE_MODULES").expect(
        "DRAGNET_NODE_MODULES names the pinned Node.js peers; `bash .ci/test` sets it \
         (or run `export DRAGNET_NODE_MODULES=$(bash .ci/node.sh)`)",
    );
    PathBuf::from(modules).join("@modelcontextprotocol/server-everything/dist/index.js")
}

/// agent.yaml with server-everything's tools bound without looping.
fn config() -> PathBuf {
    let path = scratch("yaml");
    let tools = [
        "echo",
        "get-tiny-image",
        "get-resource-links",
        "get-structured-content",
        "get-annotated-message",
    ];
    let bindings: String = tools
        .iter()
        .map(|t| {
            format!("      - {{ tool_id: {t}, provider_id: everything, loop_responses: false }}\n")
        })
        .collect();
    std::fs::write(
        &path,
        format!(
            "organisation: acme
size_budget_tokens: 3000
providers:
  everything:
    mcp:
      command: [node, {}, stdio]
agents:
  support:
    agentTools:
{bindings}",
            everything().display()
        ),
    )
    .unwrap();
    path
}

fn calls(mode: &str) -> Vec<Value> {
    let plan = json!({
        "stdio": {
            "command": binary().display().to_string(),
            "args": ["mcp", "--config", config().display().to_string(), "--agent", "support", "--stdio"],
            "env": {"DATABASE_URL": fresh_db(), "DRAGNET_LOG": "warn"},
        },
        "mode": mode,
        "steps": [
            {"call": "echo", "args": {"message": "hello"}},
            {"call": "get-tiny-image", "args": {}},
            {"call": "get-resource-links", "args": {"count": 3}},
            {"call": "get-structured-content", "args": {"location": "Chicago"}},
            {"call": "get-annotated-message", "args": {"messageType": "error", "includeImage": false}},
            {"call": "echo", "args": {"message": "x".repeat(20000)}},
        ],
    });
    mcp_plan(&plan)
}

fn check(seen: &[Value]) {
    // Not a collection: the upstream's words, unwrapped.
    assert_eq!(seen[0]["error"], false, "{}", seen[0]);
    assert_eq!(
        seen[0]["content"],
        json!([{"type": "text", "text": "Echo: hello"}]),
        "{}",
        seen[0]
    );
    // An image arrives as an image.
    let image = seen[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image in {}", seen[1]));
    assert_eq!(image["mimeType"], "image/png", "{image}");
    assert!(image["data"].as_str().unwrap().len() > 100, "{image}");
    // Resource links arrive as links, after their text.
    let links: Vec<&Value> = seen[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "resource_link")
        .collect();
    assert_eq!(links.len(), 3, "{}", seen[2]);
    assert!(
        links.iter().all(|l| l["uri"].as_str().is_some()),
        "{links:?}"
    );
    assert_eq!(seen[2]["content"][0]["type"], "text");
    // Structured content beside its text.
    assert_eq!(
        seen[3]["structured"],
        json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}),
        "{}",
        seen[3]
    );
    // Annotations on a block.
    let annotated = &seen[4]["content"][0];
    assert!(
        annotated["annotations"]["priority"].as_f64().is_some(),
        "{annotated}"
    );
    // Over the budget: cut and stored as any answer is.
    assert_eq!(seen[5]["error"], false, "{}", seen[5]);
    let cut = &seen[5]["json"];
    assert!(cut["_resultId"].as_str().is_some(), "{cut}");
}

#[test]
fn content_reaches_a_legacy_client_as_it_was_said() {
    check(&calls("legacy"));
}

#[test]
fn content_reaches_a_2026_client_as_it_was_said() {
    check(&calls("2026-07-28"));
}
