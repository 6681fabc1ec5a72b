//! Agents get every walk the loop layer has, through the same listing and
//! call: a tool walked by the paging roles its provider names (the shop's
//! Jira-style `listJiraCustomers`) and one walked by its `Link` header
//! (`listLinkedCustomers`) both offer `_all_pages`, and both answer every
//! row with `_pagingComplete: true`.

use dragnet_core::progress::NoProgress;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const CONFIG: &str = "organisation: demo
providers:
  shop:
    openapi: ../shop/openapi.yaml
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
    let (g, _shop) = crate::testing::gateway_over_shop(CONFIG).await;
    let who = crate::testing::caller("analyst", "t1", false);
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
