//! Agents get every walk the loop layer has, through the same listing and
//! call: a tool walked by the paging roles its provider names (the shop's
//! Jira-style `listJiraCustomers`) and one walked by its `Link` header
//! (`listLinkedCustomers`) both offer `_all_pages`, and both answer every
//! row with `_pagingComplete: true`.

use std::path::Path;
use std::sync::Arc;

use dragnet_steps::clock::SystemClock;
use dragnet_steps::progress::NoProgress;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::caller::{result_scope, Caller, RuntimeCredentials};
use crate::config;
use crate::memory::Memory;
use crate::runtime::{Gateway, Services};
use crate::token::Claims;

const CONFIG: &str = "organisation: demo
providers:
  shop:
    openapi: ../examples/shop/openapi.yaml
    base_url: embedded
    paging:
      listJiraCustomers: {size: maxResults, offset: startAt}
agents:
  analyst:
    agentTools:
      - { tool_id: listJiraCustomers, provider_id: shop, loop_responses: true }
      - { tool_id: listLinkedCustomers, provider_id: shop, loop_responses: true }
";

#[tokio::test]
async fn tools_walked_by_named_roles_and_link_headers_offer_and_walk_all_pages() {
    let shop = dragnet_shop::start("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("agent.yaml");
    let cfg = config::load_str(&source, CONFIG).expect("the configuration compiles");
    let g = Gateway::start(
        cfg,
        Services {
            env: Arc::new(|_| None),
            embedded: Some(shop.base_url().to_string()),
            results: Arc::new(Memory::default()),
            cache: None,
            clock: Arc::new(SystemClock),
            connections: None,
        },
    )
    .await
    .unwrap();
    let claims = Claims {
        org: "demo".into(),
        sub: "u1".into(),
        agent: "analyst".into(),
        cache_scope: None,
        exp: i64::MAX,
    };
    let who = Caller {
        scope: result_scope(&claims, None, Some("t1")),
        claims,
        runtime: RuntimeCredentials::default(),
        session: false,
    };
    let listed = g.tools("analyst");
    let want = dragnet_shop::dataset().customers().len();
    for tool in ["listJiraCustomers", "listLinkedCustomers"] {
        let def = listed.iter().find(|d| d.name == tool).expect("listed");
        assert!(
            def.input_schema["properties"].get("_all_pages").is_some(),
            "{tool} offers _all_pages: {}",
            def.input_schema
        );
        let Value::Object(args) = json!({"_all_pages": true, "_fields": ["id"]}) else {
            unreachable!()
        };
        let answer = g
            .call(&who, tool, args, &NoProgress, CancellationToken::new())
            .await;
        assert!(!answer.is_error, "{tool}: {}", answer.text);
        let body: Value = serde_json::from_str(&answer.text).unwrap();
        assert_eq!(body["_pagingComplete"], true, "{tool}: {}", body["_note"]);
        let rows = body.as_object().unwrap().values().find_map(Value::as_array);
        assert_eq!(rows.map(Vec::len), Some(want), "{tool}: {body:.300}");
    }
}
