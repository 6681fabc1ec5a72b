//! A caller that reads only shaped rows (`Unshaped::Dropped`, as `dragnet
//! call` does) gets each page shaped as it is kept, and split while it
//! arrives when the collection's path is known: the same rows, verdict and
//! report as a call that keeps every item, with no item held. Checked on
//! the shop's paging styles and faults; on a large page over real HTTP
//! with a secret the upstream echoes and the items bound inside it; on a
//! malformed one; on a body broken off midway; under the byte bound; and
//! through an upstream that answers whole (the default `send_into`).

use axum::routing::get;
use axum::Router;
use dragnet_core::secret::Secret;
use dragnet_core::{Error, Limits, Tool};
use dragnet_e2e::{serve, test_limits, tool_from_doc, Harness};
use dragnet_http::{Credentials, HttpUpstream, Upstream};
use dragnet_walk::{LoopOptions, LoopResult, Runtime, ToolCall, Unshaped};
use serde_json::{json, Value};

fn dropped() -> Runtime<'static> {
    Runtime {
        unshaped: Unshaped::Dropped,
        ..Runtime::quiet()
    }
}

/// What a caller of shaped rows sees of a result. The note's words after
/// "Note:" quote an upstream error, whose parser's words differ when a
/// page is read while it arrives; that there is one is compared.
fn seen(
    r: &LoopResult,
) -> (
    Vec<String>,
    bool,
    usize,
    Option<&'static str>,
    String,
    String,
) {
    let rows = r.visible().iter().map(str::to_string).collect();
    let v = &r.verdict;
    let note = match v.note.split_once(" Note: upstream answered") {
        Some((before, _)) => format!("{before} Note: upstream answered …"),
        None => v.note.clone(),
    };
    (
        rows,
        v.complete,
        v.item_count,
        v.stopped_by.map(|s| s.as_str()),
        note,
        format!("{:?}", r.unmatched_fields),
    )
}

#[tokio::test]
async fn shaped_early_gives_what_shaping_at_the_end_gives() {
    let h = Harness::start().await;
    // Every page's ids, the call most cases make.
    let ids = || json!({"_all_pages": true, "_fields": ["id"]});
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "listOrders",
            json!({"_all_pages": true, "_fields": ["id", "total", "nope"], "_filter": [{"field": "total", "op": "gt", "value": 100}]}),
            "",
        ),
        ("listOrders", json!({"_fields": ["id"]}), ""),
        (
            "listOrders",
            json!({"per_page": 7, "_all_pages": true, "_fields": ["id", "customer.name"]}),
            "ignore-page",
        ),
        ("listOrders", ids(), "malformed=3"),
        ("listOrders", ids(), "missing-collection=2"),
        ("listOrders", ids(), "status=2:503"),
        ("listOrders", ids(), "short-page=2"),
        ("listOrdersDrf", ids(), ""),
        (
            "listOrdersOData",
            json!({"_all_pages": true, "_filter": [{"field": "id", "op": "lt", "value": 40}]}),
            "",
        ),
        (
            "listEvents",
            json!({"_all_pages": true, "_fields": ["id", "type"]}),
            "",
        ),
        ("listStripeCustomers", ids(), ""),
        ("listLinkedCustomers", ids(), ""),
        ("listCustomers", ids(), ""),
    ];
    for (tool, args, fault) in cases {
        let kept = h
            .call_through(
                tool,
                args.clone(),
                &h.upstream(fault),
                test_limits(),
                &Runtime::quiet(),
            )
            .await
            .unwrap_or_else(|e| panic!("{tool} {fault}: {e}"));
        let early = h
            .call_through(
                tool,
                args.clone(),
                &h.upstream(fault),
                test_limits(),
                &dropped(),
            )
            .await
            .unwrap_or_else(|e| panic!("{tool} {fault}: {e}"));
        let (early_seen, kept_seen) = (seen(&early), seen(&kept));
        assert_eq!(early_seen.0, kept_seen.0, "{tool} {args} {fault}: rows");
        assert_eq!(
            (
                &early_seen.1,
                &early_seen.2,
                &early_seen.3,
                &early_seen.4,
                &early_seen.5
            ),
            (
                &kept_seen.1,
                &kept_seen.2,
                &kept_seen.3,
                &kept_seen.4,
                &kept_seen.5
            ),
            "{tool} {args} {fault}"
        );
        assert!(!seen(&kept).0.is_empty(), "{tool} {fault}: some rows");
        assert_eq!(
            early.payload.items().len(),
            0,
            "{tool} {fault}: no item kept"
        );
    }
}

#[tokio::test]
async fn the_items_bound_cuts_a_page_shaped_early_where_it_cuts_a_kept_one() {
    let h = Harness::start().await;
    let mut limits = test_limits();
    limits.max_items = 33;
    let args = json!({"_all_pages": true, "per_page": 20, "_fields": ["id"], "_filter": [{"field": "id", "op": "gt", "value": 3}]});
    let kept = h
        .call_through(
            "listOrders",
            args.clone(),
            &h.upstream(""),
            limits.clone(),
            &Runtime::quiet(),
        )
        .await
        .unwrap();
    let early = h
        .call_through("listOrders", args, &h.upstream(""), limits, &dropped())
        .await
        .unwrap();
    assert_eq!(seen(&early), seen(&kept));
    assert_eq!(early.verdict.item_count, 33);
    assert!(!early.verdict.complete);
}

const DOC: &str = r#"{"openapi":"3.0.3","info":{"title":"big","version":"1"},
"paths":{"/big":{"get":{"operationId":"bigPage","responses":{"200":{"description":"one large page",
"content":{"application/json":{"schema":{"type":"object","properties":{"data":{"type":"array","items":{"type":"object"}}}}}}}}}}}}"#;

/// A page of `n` orders, each echoing `secret` in a note.
fn big_page(n: usize, secret: &str) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id":{i},"total":{},"customer":{{"name":"c{}","tags":["a,]","\"b"]}},"note":"{} {secret}"}}"#,
                i % 500,
                i % 97,
                "n".repeat(i % 120)
            )
        })
        .collect();
    format!(
        r#"{{"meta":{{"total":{n}}},"data":[{}],"next":null}}"#,
        rows.join(",")
    )
}

/// The call of `doc`'s `bigPage` with `args` (and the collection's path,
/// when given), keeping every item and shaping early.
async fn both_ways(
    doc: &str,
    base: &str,
    secret: &str,
    args: Value,
    items_path: Option<&str>,
) -> (LoopResult, LoopResult) {
    let limits = Limits {
        max_items: 100_000,
        ..test_limits()
    };
    both_ways_within(doc, base, secret, args, items_path, limits).await
}

/// As `both_ways`, within `limits`.
async fn both_ways_within(
    doc: &str,
    base: &str,
    secret: &str,
    args: Value,
    items_path: Option<&str>,
    limits: Limits,
) -> (LoopResult, LoopResult) {
    let tool = tool_from_doc(doc, "bigPage");
    let upstream = HttpUpstream::new(base, Credentials::Bearer(Secret::new(secret))).unwrap();
    let [kept, early] = kept_and_early(&tool, &upstream, args, items_path, limits).await;
    (kept.unwrap(), early.unwrap())
}

/// The call of `tool` with `args` (and the collection's path, when
/// given) through `upstream` within `limits`, by a caller that keeps every
/// item and by one that reads only shaped rows.
async fn kept_and_early<U: Upstream>(
    tool: &Tool,
    upstream: &U,
    args: Value,
    items_path: Option<&str>,
    limits: Limits,
) -> [Result<LoopResult, Error>; 2] {
    let Value::Object(map) = args else {
        unreachable!()
    };
    let mut answers = Vec::new();
    for runtime in [Runtime::quiet(), dropped()] {
        let (arguments, mut options) = LoopOptions::split_reserved(map.clone()).unwrap();
        options.items_path = items_path.map(|p| vec![p.to_string()]);
        let call = ToolCall {
            tool,
            arguments,
            options,
            limits: limits.clone(),
            cache: None,
        };
        answers.push(dragnet_walk::execute(call, upstream, &runtime).await);
    }
    let early = answers.pop().unwrap();
    [answers.pop().unwrap(), early]
}

#[tokio::test]
async fn a_large_page_is_shaped_while_it_arrives_and_secrets_are_still_redacted() {
    let secret = "sekret-token-0123456789";
    let page = big_page(40_000, secret);
    assert!(page.len() > 4_000_000);
    let base = serve(Router::new().route("/big", get(move || async move { page }))).await;
    let args = json!({"_fields": ["id", "customer.tags", "note"], "_filter": [{"field": "total", "op": "gt", "value": 250}]});
    let (kept, early) = both_ways(DOC, &base, secret, args.clone(), None).await;
    assert_eq!(seen(&early), seen(&kept));
    let rows = seen(&early).0;
    assert_eq!(rows.len(), (0..40_000).filter(|i| i % 500 > 250).count());
    assert!(rows
        .iter()
        .all(|r| !r.contains(secret) && r.contains("[redacted]")));
    assert_eq!(early.verdict.item_count, 40_000);
    assert!(early.verdict.complete, "{}", early.verdict.note);
    assert_eq!(early.payload.items().len(), 0);
    // A tool that declares nothing, the path given by the caller.
    let undeclared = DOC.replace(
        r#"{"type":"object","properties":{"data":{"type":"array","items":{"type":"object"}}}}"#,
        r#"{}"#,
    );
    assert_ne!(undeclared, DOC);
    let (kept, early) = both_ways(&undeclared, &base, secret, args.clone(), Some("data")).await;
    assert_eq!(seen(&early), seen(&kept));
    assert_eq!(seen(&early).0, rows);
    // The items bound falls inside the page: its batches are read in
    // parallel, each with the room left at its place.
    let limits = Limits {
        max_items: 12_345,
        ..test_limits()
    };
    let (kept, early) = both_ways_within(DOC, &base, secret, args, None, limits).await;
    assert_eq!(seen(&early), seen(&kept));
    assert_eq!(early.verdict.item_count, 12_345);
    assert_eq!(
        seen(&early).0.len(),
        (0..12_345).filter(|i| i % 500 > 250).count()
    );
}

#[tokio::test]
async fn a_malformed_item_deep_in_a_large_page_fails_the_call_both_ways() {
    let mut page = big_page(20_000, "x");
    let at = page.len() / 2;
    let comma = at + page[at..].find("},{").unwrap() + 1;
    page.insert(comma, ',');
    let base = serve(Router::new().route("/big", get(move || async move { page }))).await;
    let tool = tool_from_doc(DOC, "bigPage");
    let upstream = HttpUpstream::new(&base, Credentials::None).unwrap();
    let args = json!({"_fields": ["id"]});
    for answer in kept_and_early(&tool, &upstream, args, None, test_limits()).await {
        let err = answer.expect_err("a malformed page is an error");
        assert_eq!(err.kind(), "upstream_malformed", "{err}");
    }
}

#[tokio::test]
async fn a_body_broken_off_midway_is_read_again_from_the_start() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let page = big_page(20_000, "x");
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    let router = Router::new().route(
        "/big",
        get(move || {
            let page = page.clone();
            let attempt = count.fetch_add(1, Ordering::SeqCst);
            async move {
                // Each call's first answer breaks off after half its body.
                let half = page.len() / 2;
                let pieces: Vec<Result<bytes::Bytes, std::io::Error>> = match attempt {
                    0 | 2 => vec![
                        Ok(bytes::Bytes::from(page[..half].to_string())),
                        Err(std::io::Error::other("the connection broke")),
                    ],
                    _ => vec![Ok(bytes::Bytes::from(page))],
                };
                axum::body::Body::from_stream(futures::stream::iter(pieces))
            }
        }),
    );
    let base = serve(router).await;
    let args = json!({"_fields": ["id"], "_filter": [{"field": "total", "op": "lt", "value": 50}]});
    let (kept, early) = both_ways(DOC, &base, "x-secret", args, None).await;
    // Both calls asked again once: a streamed page begins anew.
    assert_eq!(served.load(Ordering::SeqCst), 4);
    assert_eq!(seen(&early), seen(&kept));
    assert_eq!(early.verdict.item_count, 20_000);
    assert_eq!(
        seen(&early).0.len(),
        (0..20_000).filter(|i| i % 500 < 50).count()
    );
}

#[tokio::test]
async fn the_byte_bound_stops_a_streamed_page_as_it_stops_a_kept_one() {
    let page = big_page(20_000, "x");
    let base = serve(Router::new().route("/big", get(move || async move { page }))).await;
    let tool = tool_from_doc(DOC, "bigPage");
    let upstream = HttpUpstream::new(&base, Credentials::None).unwrap();
    let limits = Limits {
        max_bytes: 500_000,
        max_items: 100_000,
        ..test_limits()
    };
    let args = json!({"_fields": ["id"]});
    let answers = kept_and_early(&tool, &upstream, args, None, limits)
        .await
        .map(|answer| answer.map(|r| seen(&r)).map_err(|e| e.kind()));
    assert_eq!(answers[0], answers[1]);
    let (rows, complete, _, stopped_by, _, _) = answers[1].clone().unwrap();
    assert!(rows.is_empty() && !complete);
    assert_eq!(stopped_by, Some("bytes"));
}

#[tokio::test]
async fn an_upstream_that_answers_whole_hands_its_body_over_in_one_piece() {
    // `Redacting` (how the gateway wraps MCP upstreams) reads answers
    // whole: the default `send_into` gives the sink the redacted body.
    let page = big_page(5_000, "caller-secret-42");
    let base = serve(Router::new().route("/big", get(move || async move { page }))).await;
    let tool = tool_from_doc(DOC, "bigPage");
    let inner = HttpUpstream::new(&base, Credentials::None).unwrap();
    let mut redactor = dragnet_http::Redactor::default();
    redactor.add("caller-secret-42");
    let upstream = dragnet_http::redact::Redacting {
        inner: &inner,
        redactor: &redactor,
    };
    let args = json!({"_fields": ["id", "note"]});
    let seen_both = kept_and_early(&tool, &upstream, args, None, test_limits())
        .await
        .map(|answer| seen(&answer.unwrap()));
    assert_eq!(seen_both[0], seen_both[1]);
    let rows = &seen_both[1].0;
    assert_eq!(rows.len(), 5_000);
    assert!(rows
        .iter()
        .all(|r| r.contains("[redacted]") && !r.contains("caller-secret-42")));
}
