//! The walk ends as complete, with no further request, when a page says it
//! is the last (DRF's `next: null`, `has_more: false`…) — also when a bound
//! is reached at that same moment — and a 404/400 after a page that met the
//! total is the end, not an upstream error. Rows equal to a declared total
//! end nothing by themselves (tests/totals.rs). Over real HTTP: the shop's
//! Django-REST-framework endpoints (count/next/previous/results, a silent
//! page-size cap, 404 past the end), and small servers written here for the
//! other end signals.

use axum::extract::Query;
use axum::routing::get;
use axum::{Json, Router};
use dragnet_core::{Limits, StopReason};
use dragnet_e2e::{ids, open_count, serve, test_limits, tool_from_doc, walk_with, Harness};
use dragnet_http::{Credentials, HttpUpstream};
use serde_json::{json, Value};

fn paths(h: &Harness) -> Vec<String> {
    h.requests().iter().map(|r| r.path.clone()).collect()
}

#[tokio::test]
async fn drf_page_numbers_with_a_count_that_is_a_multiple_of_the_capped_size() {
    let h = Harness::start().await;
    // 400 customers at the silent cap of 50: the eighth page meets the count.
    let r = h
        .call("listCustomersDrf", json!({"_all_pages": true}), "")
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), 400);
    assert_eq!(r.verdict.requests, 8, "no request after the count was met");

    // Orders by page number: whatever the count, no 404 is asked for.
    h.shop.clear_requests();
    let r = h
        .call_with(
            "listOrdersDrf",
            json!({"status": "open", "_all_pages": true}),
            "",
            roomy(),
        )
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), open_count());
    assert!(
        h.requests().iter().all(|q| q.status == 200),
        "{:?}",
        paths(&h)
    );
    assert_eq!(r.verdict.requests as usize, open_count().div_ceil(50));
}

#[tokio::test]
async fn drf_a_count_met_on_a_full_page_while_next_points_on_is_walked_past() {
    let h = Harness::start().await;
    // 400 customers at 50 a page, a stale count of 100 (total fault): page
    // two meets it, but its `next` points on, so the walk goes on to the
    // `next: null` of page eight, and the note says the count was wrong.
    let r = h
        .call("listCustomersDrf", json!({"_all_pages": true}), "total=100")
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), 400);
    assert_eq!(r.verdict.requests, 8);
    assert!(
        r.verdict
            .note
            .contains("declared a total of 100 but served 400 rows: the total was wrong"),
        "{}",
        r.verdict.note
    );
}

fn roomy() -> Limits {
    Limits {
        max_pages: 200,
        max_requests: 200,
        max_items: 10_000,
        ..test_limits()
    }
}

#[tokio::test]
async fn drf_every_order_at_the_cap_ends_on_the_count_without_a_404() {
    let h = Harness::start().await;
    // 6000 orders, 50 a page: page 120 is full and meets the count.
    let r = h
        .call_with("listOrdersDrf", json!({"_all_pages": true}), "", roomy())
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), 6000);
    assert_eq!(r.verdict.requests, 120);
    assert!(h.requests().iter().all(|q| q.status == 200));
}

/// 30 rows at 10 a page, `{"data", "total"?}`, 404 past the last page.
fn counted_server(total: Option<usize>) -> Router {
    Router::new().route(
        "/list",
        get(
            move |Query(q): Query<std::collections::HashMap<String, usize>>| async move {
                let page = q.get("page").copied().unwrap_or(1).max(1);
                if page > 3 {
                    let body = Json(json!({"detail": "Invalid page."}));
                    return (axum::http::StatusCode::NOT_FOUND, body);
                }
                let data: Vec<Value> = ((page - 1) * 10..page * 10)
                    .map(|i| json!({"id": i}))
                    .collect();
                let mut body = json!({ "data": data });
                if let Some(t) = total {
                    body["total"] = json!(t);
                }
                (axum::http::StatusCode::OK, Json(body))
            },
        ),
    )
}

#[tokio::test]
async fn a_404_after_a_page_past_the_total_is_the_end() {
    let tool = list_tool();
    // A stale total of 25: full pages go on past it; the 404 on page 4 is the end.
    let r = walk(&tool, &serve(counted_server(Some(25))).await).await;
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r), (0..30).collect::<Vec<i64>>());
    assert_eq!(r.verdict.requests, 4);
    assert!(
        r.verdict.note.contains("declared a total of 25"),
        "{}",
        r.verdict.note
    );
    // With no total, nobody said the rows so far were all: the 404 is an error.
    let r = walk(&tool, &serve(counted_server(None)).await).await;
    assert_eq!(r.verdict.stopped_by, Some(StopReason::UpstreamError));
    assert_eq!(ids(&r).len(), 30);
}

#[tokio::test]
async fn bounds_reached_on_the_last_page_are_complete() {
    let h = Harness::start().await;
    let rows = open_count();
    let pages = rows.div_ceil(100) as u32;
    for limits in [
        Limits {
            max_items: rows,
            ..test_limits()
        },
        Limits {
            max_pages: pages,
            max_requests: pages,
            ..test_limits()
        },
    ] {
        let r = h
            .call_with(
                "listOrders",
                json!({"status": "open", "_all_pages": true}),
                "",
                limits.clone(),
            )
            .await
            .unwrap();
        assert!(r.verdict.complete, "{limits:?}: {}", r.verdict.note);
        assert_eq!(ids(&r).len(), rows);
        assert_eq!(r.verdict.stopped_by, None);
    }
    // One row fewer than the set is partial, and says so.
    let r = h
        .call_with(
            "listOrders",
            json!({"status": "open", "_all_pages": true}),
            "",
            Limits {
                max_items: rows - 1,
                ..test_limits()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::Items));
}

/// Writes a page's end signal, given whether more rows follow.
type SignalFn = fn(bool) -> (&'static str, Value);

/// A list of `rows` ids at `/list?page=&per_page=`, each page with the end
/// signal `signal` writes into the envelope.
fn signalling_server(rows: usize, signal: SignalFn) -> Router {
    Router::new().route(
        "/list",
        get(
            move |Query(q): Query<std::collections::HashMap<String, usize>>| async move {
                let size = q.get("per_page").copied().unwrap_or(10).min(10);
                let page = q.get("page").copied().unwrap_or(1).max(1);
                let start = (page - 1) * size;
                let end = (start + size).min(rows);
                let data: Vec<Value> = (start.min(end)..end).map(|i| json!({"id": i})).collect();
                let (key, value) = signal(end < rows);
                let mut body = json!({ "data": data });
                body[key] = value;
                Json(body)
            },
        ),
    )
}

const LIST_DOC: &str = r#"{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/list":{"get":{
  "operationId":"list","parameters":[
    {"name":"page","in":"query","schema":{"type":"integer","minimum":1}},
    {"name":"per_page","in":"query","schema":{"type":"integer","maximum":10}}],
  "responses":{"200":{"description":"ok"}}}}}}"#;

#[tokio::test]
async fn every_end_signal_ends_a_full_last_page_with_no_further_request() {
    let signals: [(&str, SignalFn); 7] = [
        ("next: null", |more| {
            (
                "next",
                if more {
                    json!("http://h/list?page=9")
                } else {
                    Value::Null
                },
            )
        }),
        ("has_more", |more| ("has_more", json!(more))),
        ("hasMore", |more| ("hasMore", json!(more))),
        ("is_last", |more| ("is_last", json!(!more))),
        ("isLast", |more| ("isLast", json!(!more))),
        ("last", |more| ("last", json!(!more))),
        ("links.next", |more| {
            let mut links = json!({"self": "/list", "first": "/list?page=1"});
            if more {
                links["next"] = json!("/list?page=9");
            }
            ("links", links)
        }),
    ];
    let tool = list_tool();
    for (name, signal) in signals {
        // 30 rows, 10 a page: the third page is full and the last.
        let r = walk(&tool, &serve(signalling_server(30, signal)).await).await;
        assert!(r.verdict.complete, "{name}: {}", r.verdict.note);
        assert_eq!(ids(&r), (0..30).collect::<Vec<i64>>(), "{name}");
        assert_eq!(r.verdict.requests, 3, "{name}: no fourth request");
    }
}

/// The `list` tool of `LIST_DOC`.
fn list_tool() -> dragnet_core::Tool {
    tool_from_doc(LIST_DOC, "list")
}

/// Walks every page of `tool` at `base`.
async fn walk(tool: &dragnet_core::Tool, base: &str) -> dragnet_walk::LoopResult {
    let upstream = HttpUpstream::new(base, Credentials::None).unwrap();
    walk_with(tool, &upstream, test_limits()).await.unwrap()
}
