//! `dragnet mcp` driven by an independent client: the Python `mcp` package
//! (2.3.0, installed by `.ci/run` into a virtualenv; `DRAGNET_PY` names
//! its python) over stdio, in the legacy protocol mode: tools listed per
//! agent with their reserved arguments, a walk of every page (its progress
//! notified) cut to the
//! size budget with its `_resultId`, the retrieval-only refusal, a query
//! filtering on a field the answer did not show, a raw fetch, and an id
//! that is not the caller's.

mod common;

use std::process::Command;

use common::{binary, fresh_db, python, scratch};
use serde_json::Value;

/// The python of the older client (`mcp` 1.9.4).
fn python_v1() -> String {
    std::env::var("DRAGNET_PY_MCP1")
        .unwrap_or_else(|_| "/tmp/dragnet-ci-venv-mcp1/bin/python".into())
}

/// An agent config over the embedded shop with a small size budget.
fn config() -> std::path::PathBuf {
    let config = scratch("yaml");
    let doc = dragnet_shop::openapi_path();
    std::fs::write(
        &config,
        format!(
            "organisation: demo
size_budget_tokens: 2000
providers:
  shop:
    openapi: {}
    base_url: embedded
agents:
  analyst:
    agentTools:
      - {{ tool_id: listOrders, provider_id: shop, loop_responses: true }}
      - {{ tool_id: getOrder, provider_id: shop, loop_responses: true }}
",
            doc.display()
        ),
    )
    .unwrap();
    config
}

/// Runs a client script with `py`; its stdout as JSON.
fn client(py: &str, script: &str, args: &[&str]) -> Value {
    let path = format!("{}/tests/mcp/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(py)
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {py} ({e}): the MCP tests need the Python `mcp` packages that \
                 `bash .ci/test` installs (or set DRAGNET_PY / DRAGNET_PY_MCP1)"
            )
        });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{script} {args:?} failed:\n{stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn an_older_client_on_protocol_2025_03_26_lists_and_calls() {
    let config = config();
    let bin = binary().display().to_string();
    let seen = client(
        &python_v1(),
        "client_v1.py",
        &[&bin, &config.display().to_string(), &fresh_db()],
    );
    assert_eq!(seen["protocol"], "2025-03-26", "{seen}");
    let tools = seen["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|t| t == "listOrders") && tools.iter().any(|t| t == "queryToolResult")
    );
    assert_eq!(seen["error"], false, "{seen}");
    assert_eq!(seen["answer"]["_pagingComplete"], true, "{seen}");
    let _ = std::fs::remove_file(&config);
}

#[test]
fn an_mcp_client_walks_gets_a_cut_answer_and_reads_the_rest() {
    for mode in ["legacy", "2026-07-28"] {
        session(mode);
    }
}

/// One client session in protocol `mode`.
fn session(mode: &str) {
    let config = config();
    let bin = binary().display().to_string();
    let seen = client(
        &python(),
        "client.py",
        &[&bin, &config.display().to_string(), &fresh_db(), mode],
    );
    let tools = &seen["tools"];
    // The legacy handshake carries the instructions; a 2026-07-28 client
    // reads them from `server/discover` only when it asks.
    if mode == "legacy" {
        assert!(seen["instructions"]
            .as_str()
            .unwrap()
            .contains("_all_pages"));
    }
    assert_eq!(seen["schema_types"], serde_json::json!(["object"]));
    let props = |t: &str| -> Vec<String> {
        tools[t]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert!(props("listOrders").contains(&"_all_pages".into()));
    assert!(
        !props("getOrder").contains(&"_all_pages".into()),
        "getOrder is not walkable"
    );
    assert!(!props("listOrders").contains(&"_filter".into()));
    assert!(tools.get("queryToolResult").is_some() && tools.get("fetchToolResult").is_some());

    // Progress of the walk, with the counters of SPEC §6.
    let progress = seen["progress"].as_array().unwrap();
    assert!(
        !progress.is_empty(),
        "no progress notification in mode {mode}"
    );
    let first = &progress[0]["message"];
    for key in [
        "page",
        "pagesMax",
        "items",
        "requests",
        "requestsMax",
        "elapsedMs",
    ] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    let walk = &seen["walk"];
    assert_eq!(seen["walk_error"], false);
    assert_eq!(walk["complete"], true, "{walk}");
    let cut = &walk["truncated"];
    assert!(
        cut["total"].as_u64().unwrap() > cut["returned"].as_u64().unwrap(),
        "{walk}"
    );
    assert_eq!(walk["rows"], cut["returned"]);
    assert_eq!(
        walk["first"].as_object().unwrap().len(),
        2,
        "projected to id and status"
    );
    let rid = walk["result_id"].as_str().unwrap();

    assert_eq!(seen["refused"]["error"], true);
    assert!(seen["refused"]["text"].as_str().unwrap().contains(rid));

    let query = &seen["query"];
    assert_eq!(seen["query_error"], false, "{query}");
    let items = query["items"].as_array().unwrap();
    assert!(!items.is_empty() && items.len() <= 5, "{query}");
    assert!(
        items.iter().all(|i| i["total"].as_f64().unwrap() > 900.0),
        "{query}"
    );
    assert!(query["total"].as_u64().unwrap() >= items.len() as u64);

    assert_eq!(seen["fetch"]["length"], 40);
    assert_eq!(seen["after"]["error"], false, "{}", seen["after"]);
    assert_eq!(seen["stranger"]["error"], true);
    assert!(seen["stranger"]["text"]
        .as_str()
        .unwrap()
        .contains("no stored result"));
    let _ = std::fs::remove_file(&config);
}
