//! Cursor walks over real HTTP, against the shop's `/events` (a body
//! cursor: `cursor` in, `next_cursor` out): every row, complete only when
//! the API says there is no next page; a bound reached while a next cursor
//! exists is partial; an API that ignores the cursor gives back one it
//! gave before, and the walk stops there (`repeated_cursor`) instead of
//! looping; a cursor refused mid-walk (400) keeps what came before, partial.

use dragnet_core::{Limits, StopReason};
use dragnet_e2e::{test_limits, Harness};
use serde_json::json;

fn events_total() -> usize {
    dragnet_shop::dataset().events().len()
}

#[tokio::test]
async fn a_body_cursor_is_followed_to_the_end() {
    let h = Harness::start().await;
    let tool = h.tool("listEvents");
    assert!(tool.can_walk(), "listEvents walks by its cursor");
    let r = h
        .call("listEvents", json!({"limit": 100, "_all_pages": true}), "")
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(r.verdict.item_count, events_total());
    let pages = events_total().div_ceil(100) as u32;
    assert_eq!(r.verdict.requests, pages);
    assert_eq!(h.requests().len(), pages as usize);
    // Each request after the first carried the cursor the page before gave.
    let requests = h.requests();
    assert!(requests[0].query.iter().all(|(k, _)| k != "cursor"));
    assert!(requests[1..].iter().all(|r| r
        .query
        .iter()
        .any(|(k, v)| k == "cursor" && v.starts_with("ev_"))));
}

#[tokio::test]
async fn a_bound_reached_while_a_next_cursor_exists_is_partial() {
    let h = Harness::start().await;
    let limits = Limits {
        max_pages: 2,
        ..test_limits()
    };
    let r = h
        .call_with(
            "listEvents",
            json!({"limit": 10, "_all_pages": true}),
            "",
            limits,
        )
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::Pages));
    assert_eq!(r.verdict.item_count, 20);
    assert!(r.verdict.likely_more_rows);
}

#[tokio::test]
async fn an_api_ignoring_the_cursor_stops_the_walk_at_the_repeat() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listEvents",
            json!({"limit": 10, "_all_pages": true}),
            "ignore-page",
        )
        .await
        .unwrap();
    assert!(!r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(
        r.verdict.stopped_by,
        Some(StopReason::RepeatedPage),
        "{}",
        r.verdict.note
    );
    assert_eq!(r.verdict.item_count, 10, "the repeat's rows are dropped");
    assert_eq!(h.requests().len(), 2, "no loop");
}

#[tokio::test]
async fn the_shop_giving_back_a_cursor_again_stops_the_walk_there() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listEvents",
            json!({"limit": 10, "_all_pages": true}),
            "repeat-cursor=4",
        )
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(
        r.verdict.stopped_by,
        Some(StopReason::RepeatedCursor),
        "{}",
        r.verdict.note
    );
    assert_eq!(r.verdict.item_count, 40, "pages 1 to 4, once each");
    assert_eq!(h.requests().len(), 4, "no loop");
}

#[tokio::test]
async fn a_cursor_given_back_twice_stops_the_walk() {
    // A server whose pages always point to the same next cursor.
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = calls.clone();
    let router = axum::Router::new().route(
        "/things",
        axum::routing::get(move || {
            let counter = counter.clone();
            async move {
                let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                axum::Json(json!({"things": [{"id": n}], "next_cursor": "same"}))
            }
        }),
    );
    let (tool, r) = dragnet_e2e::walk_served(
        router,
        r#"{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/things":{"get":{
            "operationId":"listThings",
            "parameters":[{"name":"cursor","in":"query","schema":{"type":"string"}}],
            "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
                "type":"object","properties":{"things":{"type":"array","items":{"type":"object"}},
                "next_cursor":{"type":"string","nullable":true}}}}}}}}}}}"#,
        "listThings",
    )
    .await;
    assert!(tool.can_walk());
    assert!(!r.verdict.complete);
    assert_eq!(
        r.verdict.stopped_by,
        Some(StopReason::RepeatedCursor),
        "{}",
        r.verdict.note
    );
    assert_eq!(r.verdict.item_count, 2, "both pages' rows, then the stop");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_cursor_refused_mid_walk_keeps_what_came_before() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listEvents",
            json!({"limit": 10, "_all_pages": true}),
            "status=3:400:always",
        )
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(
        r.verdict.stopped_by,
        Some(StopReason::UpstreamError),
        "{}",
        r.verdict.note
    );
    assert_eq!(r.verdict.item_count, 20, "the first two pages are kept");
}

#[tokio::test]
async fn stripe_style_walks_follow_the_last_item_while_has_more() {
    // 25 objects, 10 a page, `starting_after` the last id, `has_more`.
    let router = axum::Router::new().route(
        "/v1/charges",
        axum::routing::get(
            |axum::extract::Query(q): axum::extract::Query<std::collections::HashMap<String, String>>| async move {
                let all: Vec<String> = (1..=25).map(|i| format!("ch_{i:02}")).collect();
                let start = q
                    .get("starting_after")
                    .and_then(|after| all.iter().position(|id| id == after))
                    .map_or(0, |i| i + 1);
                let page: Vec<_> = all[start..].iter().take(10).map(|id| json!({"id": id})).collect();
                let has_more = start + 10 < all.len();
                axum::Json(json!({"object": "list", "data": page, "has_more": has_more, "url": "/v1/charges"}))
            },
        ),
    );
    let (tool, r) = dragnet_e2e::walk_served(
        router,
        r#"{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/v1/charges":{"get":{
            "operationId":"GetCharges",
            "parameters":[{"name":"starting_after","in":"query","schema":{"type":"string"}},
                          {"name":"limit","in":"query","schema":{"type":"integer"}}],
            "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
                "type":"object","properties":{"data":{"type":"array","items":{"type":"object"}},
                "has_more":{"type":"boolean"},"object":{"type":"string"},"url":{"type":"string"}}}}}}}}}}}"#,
        "GetCharges",
    )
    .await;
    assert_eq!(
        tool.cursor_walk().map(|c| c.next.describe()),
        Some("last_item:id".to_string())
    );
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(r.verdict.item_count, 25);
    assert_eq!(r.verdict.requests, 3);
}
