//! Discovery through the gateway, against the demo shop: an agent whose
//! connected-app toolkit does not fit its budget lists its own tools and
//! the discovery tools only; a pooled tool is found by search, cannot be
//! called before it is loaded, is called through `call_tool` once loaded
//! (with the binding's looping and verdict), joins a session's list but
//! never a stateless one, and is loaded for that thread only.

use dragnet_core::progress::NoProgress;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::runtime::{Answer, Gateway};

const CONFIG: &str = "organisation: demo
providers:
  shop:
    openapi: ../shop/openapi.yaml
    base_url: embedded
  shopapp:
    app: ../shop/openapi.yaml
    base_url: embedded
agents:
  clerk:
    toolBudget: 3
    agentTools:
      - { tool_id: listOrders, provider_id: shop, loop_responses: true }
      - { tool_id: getOrder, provider_id: shop }
      - { tool_id: listProperties, provider_id: shopapp }
      - { tool_id: listPropertyOrders, provider_id: shopapp, loop_responses: true }
      - { tool_id: listCustomers, provider_id: shopapp }
      - { tool_id: listEvents, provider_id: shopapp }
";

fn caller(thread: &str, session: bool) -> Caller {
    crate::testing::caller("clerk", thread, session)
}

async fn call(g: &Gateway, who: &Caller, name: &str, args: Value) -> Answer {
    let Value::Object(args) = args else {
        return Answer::error("");
    };
    g.call(who, name, args, &NoProgress, CancellationToken::new())
        .await
}

fn names(defs: &[crate::definition::ToolDefinition]) -> Vec<&str> {
    defs.iter().map(|d| d.name.as_str()).collect()
}

#[tokio::test]
async fn a_pooled_tool_is_searched_loaded_and_called_in_its_thread_only() {
    let (g, shop) = crate::testing::gateway_over_shop(CONFIG).await;
    // Own tools (2) leave 1 of the budget of 3: the app's 4 are pooled whole.
    let listed = g.tools("clerk");
    let listed = names(&listed);
    assert!(listed.contains(&"listOrders") && listed.contains(&"getOrder"));
    for pooled in [
        "listProperties",
        "listPropertyOrders",
        "listCustomers",
        "listEvents",
    ] {
        assert!(!listed.contains(&pooled), "{pooled} is pooled: {listed:?}");
    }
    for meta in ["search_tools", "load_tool", "call_tool"] {
        assert!(listed.contains(&meta), "{listed:?}");
    }
    let explained = g.explain("clerk").unwrap();
    assert_eq!(
        explained
            .iter()
            .filter(|(_, _, p)| matches!(p, crate::discovery::split::Placement::Pooled(_)))
            .count(),
        4
    );

    let stateless = caller("t1", false);
    let found = call(
        &g,
        &stateless,
        "search_tools",
        json!({"query": "orders of a property"}),
    )
    .await;
    assert!(!found.is_error, "{}", found.text);
    let found: Value = serde_json::from_str(&found.text).unwrap();
    assert_eq!(found["tools"][0]["name"], "listPropertyOrders", "{found}");
    assert_eq!(found["tools"][0]["toolkit"], "shopapp");

    // Not callable before it is loaded, by name or through call_tool.
    let args = json!({"property_id": 3, "status": "open", "_all_pages": true});
    let early = call(&g, &stateless, "listPropertyOrders", args.clone()).await;
    assert!(
        early.is_error && early.text.contains("load_tool"),
        "{}",
        early.text
    );
    let early = call(
        &g,
        &stateless,
        "call_tool",
        json!({"toolName": "listPropertyOrders", "arguments": args}),
    )
    .await;
    assert!(early.is_error, "{}", early.text);

    let loaded = call(
        &g,
        &stateless,
        "load_tool",
        json!({"toolNames": ["listPropertyOrders"]}),
    )
    .await;
    assert!(!loaded.is_error, "{}", loaded.text);
    let loaded: Value = serde_json::from_str(&loaded.text).unwrap();
    assert_eq!(loaded["tools"][0]["name"], "listPropertyOrders");
    assert!(
        loaded["tools"][0]["inputSchema"]["properties"]["_all_pages"].is_object(),
        "the binding loops: {loaded}"
    );
    assert!(loaded["note"].as_str().unwrap().contains("call_tool"));
    // A stateless list never changes.
    assert_eq!(names(&g.tools_for(&stateless)), listed);

    let answer = call(
        &g,
        &stateless,
        "call_tool",
        json!({"toolName": "listPropertyOrders", "arguments": args}),
    )
    .await;
    assert!(!answer.is_error, "{}", answer.text);
    let answer: Value = serde_json::from_str(&answer.text).unwrap();
    assert_eq!(
        answer["_pagingComplete"], true,
        "looping and the verdict, as a direct tool: {answer}"
    );

    // Another thread has loaded nothing.
    let other = caller("t2", false);
    let refused = call(
        &g,
        &other,
        "call_tool",
        json!({"toolName": "listPropertyOrders", "arguments": args}),
    )
    .await;
    assert!(
        refused.is_error && refused.text.contains("load_tool"),
        "{}",
        refused.text
    );

    // A session's list holds what it loaded; unknown names are refused.
    let session = caller("s1", true);
    let bad = call(&g, &session, "load_tool", json!({"toolName": "sendEmail"})).await;
    assert!(bad.is_error, "{}", bad.text);
    let ok = call(
        &g,
        &session,
        "load_tool",
        json!({"toolName": "listCustomers"}),
    )
    .await;
    assert!(!ok.is_error, "{}", ok.text);
    let session_list = g.tools_for(&session);
    assert!(names(&session_list).contains(&"listCustomers"));
    assert!(!names(&session_list).contains(&"listPropertyOrders"));
    let direct = call(&g, &session, "listCustomers", json!({})).await;
    assert!(!direct.is_error, "{}", direct.text);
    shop.shutdown().await;
}
