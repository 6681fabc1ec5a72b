//! Cursor walks in three more styles over real HTTP, against the shop:
//! Stripe's `starting_after` with `has_more` (`/stripe/customers`), a
//! `Link` header over a bare array (`/github/customers`), and Twilio's
//! relative `next_page_uri` (`/twilio/customers`). For each: every row
//! and complete only at the API's end, with the provider's credentials on
//! every page; a bound reached while a next page exists, partial; a cursor
//! given back a second time (`repeated_cursor`); a cursor that expires
//! mid-walk (400), the rows before it kept, partial; and, for the URL
//! styles, a next URL on another origin never followed (`off_origin`).

use dragnet_core::secret::Secret;
use dragnet_core::{Limits, StopReason};
use dragnet_e2e::{ids, test_limits, Harness};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::{LoopResult, Runtime};
use serde_json::{json, Value};

/// `(tool, path, arguments for pages of 25)`.
const STYLES: [(&str, &str, &str); 3] = [
    (
        "listStripeCustomers",
        "/stripe/customers",
        r#"{"limit": 25}"#,
    ),
    (
        "listLinkedCustomers",
        "/github/customers",
        r#"{"limit": 25}"#,
    ),
    (
        "listTwilioCustomers",
        "/twilio/customers",
        r#"{"PageSize": 25}"#,
    ),
];

const TOKEN: &str = "tok-next-links-0042";

fn customers() -> Vec<i64> {
    dragnet_shop::dataset()
        .customers()
        .iter()
        .map(|c| c.id as i64)
        .collect()
}

/// Walks `tool` with `_all_pages` through an upstream carrying a bearer
/// token and `fault`.
async fn walk(h: &Harness, tool: &str, args: &str, fault: &str, limits: Limits) -> LoopResult {
    let mut args: Value = serde_json::from_str(args).unwrap();
    args["_all_pages"] = json!(true);
    let mut upstream =
        HttpUpstream::new(h.shop.base_url(), Credentials::Bearer(Secret::new(TOKEN)))
            .unwrap()
            .with_header(
                "X-Shop-Session",
                Secret::new(format!("{tool}-{fault}-{}", limits.max_pages)),
            );
    if !fault.is_empty() {
        upstream = upstream.with_header("X-Shop-Fault", Secret::new(fault));
    }
    h.call_through(tool, args, &upstream, limits, &Runtime::quiet())
        .await
        .unwrap()
}

#[tokio::test]
async fn each_style_is_detected_and_walked_to_every_row() {
    let h = Harness::start().await;
    for (tool, path, args) in STYLES {
        assert!(h.tool(tool).can_walk(), "{tool} walks");
        h.shop.clear_requests();
        let r = walk(&h, tool, args, "", test_limits()).await;
        assert!(r.verdict.complete, "{tool}: {}", r.verdict.note);
        assert_eq!(ids(&r), customers(), "{tool}: every row, in order, once");
        let pages = customers().len().div_ceil(25);
        let requests = h.shop.requests();
        assert_eq!(requests.len(), pages, "{tool}");
        assert_eq!(r.verdict.requests as usize, pages, "{tool}");
        for request in &requests {
            assert_eq!(request.path, path, "{tool}: the provider's own path");
            let auth = request.headers.iter().find(|(k, _)| k == "authorization");
            assert_eq!(
                auth.map(|(_, v)| v.as_str()),
                Some(format!("Bearer {TOKEN}").as_str()),
                "{tool}: the provider's credentials on every page"
            );
            assert!(
                request.query.iter().all(|(k, _)| !k.starts_with('_')),
                "{tool}: no reserved argument in any URL: {:?}",
                request.query
            );
        }
        // Every page after the first was asked for by what the one before said.
        assert!(requests[1..].iter().all(|r| r
            .query
            .iter()
            .any(|(k, _)| matches!(k.as_str(), "starting_after" | "after" | "PageToken"))));
    }
}

#[tokio::test]
async fn a_bound_reached_while_a_next_page_exists_is_partial() {
    let h = Harness::start().await;
    for (tool, _, args) in STYLES {
        let limits = Limits {
            max_pages: 3,
            ..test_limits()
        };
        let r = walk(&h, tool, args, "", limits).await;
        assert!(!r.verdict.complete, "{tool}");
        assert_eq!(r.verdict.stopped_by, Some(StopReason::Pages), "{tool}");
        assert_eq!(ids(&r), customers()[..75].to_vec(), "{tool}");
        assert!(r.verdict.likely_more_rows, "{tool}");
    }
}

#[tokio::test]
async fn a_cursor_given_back_again_stops_the_walk() {
    let h = Harness::start().await;
    for (tool, _, args) in STYLES {
        h.shop.clear_requests();
        let r = walk(&h, tool, args, "repeat-cursor=3", test_limits()).await;
        assert!(!r.verdict.complete, "{tool}: {}", r.verdict.note);
        assert_eq!(
            r.verdict.stopped_by,
            Some(StopReason::RepeatedCursor),
            "{tool}: {}",
            r.verdict.note
        );
        assert!(r.verdict.note.contains("page 3"), "{}", r.verdict.note);
        assert_eq!(h.shop.requests().len(), 3, "{tool}: no loop");
    }
}

#[tokio::test]
async fn a_cursor_that_expires_mid_walk_keeps_what_came_before() {
    let h = Harness::start().await;
    for (tool, _, args) in STYLES {
        let r = walk(&h, tool, args, "status=3:400:always", test_limits()).await;
        assert!(!r.verdict.complete, "{tool}");
        assert_eq!(
            r.verdict.stopped_by,
            Some(StopReason::UpstreamError),
            "{tool}"
        );
        assert_eq!(ids(&r), customers()[..50].to_vec(), "{tool}");
        assert!(r.verdict.note.contains("400"), "{}", r.verdict.note);
    }
}

#[tokio::test]
async fn a_next_url_on_another_origin_is_never_followed() {
    let h = Harness::start().await;
    // The Stripe style has no URL to follow.
    for (tool, _, args) in &STYLES[1..] {
        h.shop.clear_requests();
        let r = walk(&h, tool, args, "foreign-next=2", test_limits()).await;
        assert!(!r.verdict.complete, "{tool}");
        assert_eq!(
            r.verdict.stopped_by,
            Some(StopReason::OffOrigin),
            "{tool}: {}",
            r.verdict.note
        );
        assert!(
            r.verdict.note.contains("http://localhost:"),
            "{}",
            r.verdict.note
        );
        assert_eq!(ids(&r), customers()[..50].to_vec(), "{tool}");
        // The other name reaches this very server: nothing came in by it.
        let requests = h.shop.requests();
        assert_eq!(
            requests.len(),
            2,
            "{tool}: the foreign link was not asked for"
        );
        assert!(requests.iter().all(|r| r
            .headers
            .iter()
            .any(|(k, v)| k == "host" && v.starts_with("127.0.0.1"))));
    }
}

/// One page without `_all_pages` is complete only when the page itself
/// says nothing follows, where its style says it. (Twilio's single page
/// was called complete before: its `PageSize`/`PageToken` are no page
/// parameters, so it looked like a tool that cannot page.)
#[tokio::test]
async fn one_page_is_complete_only_when_its_next_position_says_the_end() {
    let h = Harness::start().await;
    for (tool, _, args) in STYLES {
        let args: Value = serde_json::from_str(args).unwrap();
        let first = h.call(tool, args, "").await.unwrap();
        assert!(!first.verdict.complete, "{tool}: {}", first.verdict.note);
        assert_eq!(
            first.verdict.stopped_by,
            Some(StopReason::NotWalked),
            "{tool}"
        );
        assert!(first.verdict.likely_more_rows, "{tool}");
        assert_eq!(ids(&first), customers()[..25].to_vec(), "{tool}");
    }
    // A page that holds every row says so: complete.
    for (tool, args) in [
        (
            "listStripeCustomers",
            json!({"limit": 100, "starting_after": "300"}),
        ),
        (
            "listLinkedCustomers",
            json!({"limit": 100, "after": dragnet_shop::chain_cursor(300, 4)}),
        ),
        (
            "listTwilioCustomers",
            json!({"PageSize": 100, "PageToken": dragnet_shop::chain_cursor(300, 4)}),
        ),
    ] {
        let last = h.call(tool, args, "").await.unwrap();
        assert!(last.verdict.complete, "{tool}: {}", last.verdict.note);
        assert_eq!(ids(&last), customers()[300..].to_vec(), "{tool}");
    }
}

/// A next URL that is not a URL at all (or not HTTP) is never followed
/// either: the walk keeps page one and says what was wrong with the link.
#[tokio::test]
async fn a_next_url_that_is_no_usable_url_stops_the_walk() {
    for (next, reason) in [
        ("http://[::1", StopReason::MalformedPage),
        ("file:///etc/passwd", StopReason::OffOrigin),
    ] {
        let router = axum::Router::new().route(
            "/things",
            axum::routing::get(move || async move {
                axum::Json(json!({"things": [{"id": 1}, {"id": 2}], "next": next}))
            }),
        );
        let (tool, r) = dragnet_e2e::walk_served(
            router,
            r#"{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/things":{"get":{
                "operationId":"listThings",
                "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
                    "type":"object","properties":{"things":{"type":"array","items":{"type":"object"}},
                    "next":{"type":"string","nullable":true}}}}}}}}}}}"#,
            "listThings",
        )
        .await;
        assert!(tool.can_walk(), "a next URL is followed");
        assert!(!r.verdict.complete, "{next}");
        assert_eq!(
            r.verdict.stopped_by,
            Some(reason),
            "{next}: {}",
            r.verdict.note
        );
        assert_eq!(r.verdict.item_count, 2);
        assert_eq!(r.verdict.requests, 1);
    }
}

/// A fan-out walks each value's links on their own: two page sizes of the
/// `Link`-header style, every row of each, tagged with its value.
#[tokio::test]
async fn a_fan_out_follows_each_values_links_to_the_end() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listLinkedCustomers",
            json!({"_all_pages": true, "_fields": ["id", "limit"],
                   "_for_each": {"key": "limit", "values": [40, 100]}}),
            "",
        )
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let rows = dragnet_e2e::items(&r);
    let n = customers().len();
    assert_eq!(rows.len(), 2 * n);
    for (value, pages) in [(40, n.div_ceil(40)), (100, n.div_ceil(100))] {
        let tagged: Vec<i64> = rows
            .iter()
            .filter(|row| row["limit"] == json!(value))
            .map(|row| row["id"].as_i64().unwrap())
            .collect();
        assert_eq!(tagged, customers(), "limit {value}");
        let asked = h
            .requests()
            .iter()
            .filter(|q| {
                q.query
                    .iter()
                    .any(|(k, v)| k == "limit" && v == &value.to_string())
            })
            .count();
        assert_eq!(asked, pages, "limit {value}: its own links, to its end");
    }
}
