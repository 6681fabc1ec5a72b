//! Answers arrive as they were said (issue 24 §1): a real MCP server from
//! npm (`@modelcontextprotocol/server-everything`, pinned by
//! `.ci/node.sh`) behind `dragnet mcp --stdio`, its tools bound without
//! looping, called by the Python `mcp` client in both of its modes. Text,
//! images, resource links, annotations and `structuredContent` reach the
//! agent unchanged; an answer that is not a collection is not wrapped in a
//! verdict; an answer over the size budget is still cut and stored, with a
//! `resource_link` to it that `resources/read` answers (issue 24 §3) for
//! its own thread only, and reading it lifts the retrieval rule. An image
//! that alone is over the budget is stored and linked in its place.

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

/// agent.yaml with server-everything's tools bound without looping, and
/// answers held to `budget` tokens.
fn config(budget: usize) -> PathBuf {
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
size_budget_tokens: {budget}
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

/// `steps` in one stdio session of `dragnet mcp` over `db`.
fn session(mode: &str, budget: usize, db: &str, steps: Value) -> Vec<Value> {
    let plan = json!({
        "stdio": {
            "command": binary().display().to_string(),
            "args": ["mcp", "--config", config(budget).display().to_string(), "--agent", "support", "--stdio"],
            "env": {"DATABASE_URL": db, "DRAGNET_LOG": "warn"},
        },
        "mode": mode,
        "steps": steps,
    });
    mcp_plan(&plan)
}

fn calls(mode: &str) -> Vec<Value> {
    let steps = json!([
        {"call": "echo", "args": {"message": "hello"}},
        {"call": "get-tiny-image", "args": {}},
        {"call": "get-resource-links", "args": {"count": 3}},
        {"call": "get-structured-content", "args": {"location": "Chicago"}},
        {"call": "get-annotated-message", "args": {"messageType": "error", "includeImage": false}},
        {"call": "echo", "args": {"message": "x".repeat(20000)}},
        {"call": "echo", "args": {"message": "too soon"}},
        {"read_link_of": 5},
        {"call": "echo", "args": {"message": "after reading"}},
    ]);
    session(mode, 3000, &fresh_db(), steps)
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
    // Over the budget: cut and stored as any answer is, with a link to it.
    assert_eq!(seen[5]["error"], false, "{}", seen[5]);
    let cut = &seen[5]["json"];
    let id = cut["_resultId"].as_str().unwrap_or_else(|| panic!("{cut}"));
    let link = &seen[5]["content"][1];
    assert_eq!(link["type"], "resource_link", "{}", seen[5]);
    assert_eq!(link["uri"], format!("dragnet://results/{id}"), "{link}");
    assert_eq!(link["mimeType"], "text/plain", "{link}");
    let said = format!("Echo: {}", "x".repeat(20000));
    assert_eq!(link["size"], said.len(), "{link}");
    // Until it is read, only retrieval is let through.
    assert_eq!(seen[6]["error"], true, "{}", seen[6]);
    assert!(
        seen[6]["text"].as_str().unwrap().contains(id),
        "{}",
        seen[6]
    );
    // resources/read answers the whole text, and counts as reading it.
    let read = &seen[7]["contents"];
    assert_eq!(read[0]["text"], said.as_str(), "{}", seen[7]);
    assert_eq!(read[0]["mimeType"], "text/plain", "{}", seen[7]);
    assert_eq!(read[0]["uri"], link["uri"], "{}", seen[7]);
    assert_eq!(
        seen[8]["content"],
        json!([{"type": "text", "text": "Echo: after reading"}]),
        "{}",
        seen[8]
    );
}

/// An image larger than the budget on its own is stored and replaced by a
/// note and a link; the link reads back as the image's bytes, in its own
/// thread only.
fn an_image_over_the_budget_is_linked(mode: &str) {
    let db = fresh_db();
    let steps = json!([
        {"call": "get-tiny-image", "args": {}},
        {"read_link_of": 0},
        {"call": "echo", "args": {"message": "on"}},
    ]);
    let seen = session(mode, 1000, &db, steps);
    let content = seen[0]["content"].as_array().unwrap();
    assert!(content.iter().all(|b| b["type"] != "image"), "{}", seen[0]);
    let link = content
        .iter()
        .find(|b| b["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no link in {}", seen[0]));
    assert_eq!(link["mimeType"], "image/png", "{link}");
    let uri = link["uri"].as_str().unwrap();
    assert!(
        content
            .iter()
            .any(|b| b["text"].as_str().is_some_and(|t| t.contains(uri))),
        "a note names the link: {}",
        seen[0]
    );
    // The upstream's own words around the image pass as they were.
    assert_eq!(
        content[0]["text"], "Here's the image you requested:",
        "{}",
        seen[0]
    );
    let blob = &seen[1]["contents"][0];
    assert_eq!(blob["mimeType"], "image/png", "{}", seen[1]);
    let original = session(
        mode,
        3000,
        &db,
        json!([{"call": "get-tiny-image", "args": {}}]),
    );
    let image = original[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .cloned()
        .unwrap_or_else(|| panic!("{}", original[0]));
    assert_eq!(blob["blob"], image["data"], "the image's bytes, whole");
    assert_eq!(
        link["size"],
        image["data"].as_str().unwrap().len(),
        "{link}"
    );
    // No collection was cut: the thread goes on without retrieving it.
    assert_eq!(seen[2]["error"], false, "{}", seen[2]);
    // Another session is another thread: the link reads as unknown there.
    let elsewhere = session(mode, 1000, &db, json!([{"read": uri}]));
    let refused = elsewhere[0]["read_error"].as_str().unwrap_or_default();
    assert!(refused.contains("no stored result"), "{}", elsewhere[0]);
}

#[test]
fn content_reaches_a_legacy_client_as_it_was_said() {
    check(&calls("legacy"));
}

#[test]
fn content_reaches_a_2026_client_as_it_was_said() {
    check(&calls("2026-07-28"));
}

#[test]
fn an_image_over_the_budget_is_linked_for_a_legacy_client() {
    an_image_over_the_budget_is_linked("legacy");
}

#[test]
fn an_image_over_the_budget_is_linked_for_a_2026_client() {
    an_image_over_the_budget_is_linked("2026-07-28");
}
