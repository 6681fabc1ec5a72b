//! Every fault mode of the shop, over real HTTP: the walk keeps what it
//! fetched, names the cause, and never calls a set with missing rows
//! complete.

use std::time::Duration;

use dragnet_core::{Error, Limits, StopReason, UpstreamError};
use dragnet_e2e::{ids, open_count, test_limits, Harness};
use serde_json::json;

fn walk_open() -> serde_json::Value {
    json!({"status": "open", "_all_pages": true})
}

fn assert_unique(ids: &[i64]) {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "no duplicate rows");
}

#[tokio::test]
async fn ignored_page_parameter_stops_as_repeated_page() {
    let h = Harness::start().await;
    let r = h
        .call("listOrders", walk_open(), "ignore-page")
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::RepeatedPage));
    assert_eq!(ids(&r).len(), 100, "the repeated page's rows were dropped");
    assert_unique(&ids(&r));
    assert!(r.verdict.note.contains("repeated"), "{}", r.verdict.note);

    let r = h
        .call("listCustomers", json!({"_all_pages": true}), "ignore-page")
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::RepeatedPage));
}

#[tokio::test]
async fn a_silent_page_size_cap_is_followed_to_the_end() {
    let h = Harness::start().await;
    let roomy = || Limits {
        max_pages: 100,
        max_requests: 200,
        ..test_limits()
    };
    // with a declared total
    let r = h
        .call_with("listOrders", walk_open(), "cap=30", roomy())
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), open_count());
    // without any total: one extra request settles it
    let r = h
        .call_with("listOrders", walk_open(), "cap=30,no-total", roomy())
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), open_count());
    // a bare array without totals
    let r = h
        .call("listCustomers", json!({"_all_pages": true}), "cap=45")
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r), (1..=400).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_short_page_in_the_middle_is_caught_by_the_total() {
    let h = Harness::start().await;
    let r = h
        .call("listOrders", walk_open(), "short-page=3")
        .await
        .unwrap();
    assert!(!r.verdict.complete, "rows are missing: {}", r.verdict.note);
    assert!(ids(&r).len() < open_count());
    assert_eq!(r.verdict.stopped_by, Some(StopReason::TotalMismatch));
    assert!(r.verdict.likely_more_rows);
    assert!(r.verdict.note.contains("declared"), "{}", r.verdict.note);
}

#[tokio::test]
async fn wrong_totals() {
    let h = Harness::start().await;
    // declared more than exist: reported as at least what came
    let r = h
        .call("listOrders", walk_open(), "total=99999")
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::TotalMismatch));
    assert_eq!(ids(&r).len(), open_count());
    // declared fewer than exist: full pages keep the walk going
    let r = h
        .call("listOrders", walk_open(), "total=150")
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), open_count());
    assert!(
        r.verdict.note.contains("declared a total of 150"),
        "{}",
        r.verdict.note
    );
    // a total on page one only
    let r = h
        .call("listOrders", walk_open(), "total-first-page-only")
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(ids(&r).len(), open_count());
}

#[tokio::test]
async fn rate_limits_honour_retry_after_in_seconds_and_dates() {
    let h = Harness::start().await;
    for fault in [
        "status=2:429:retry-after=1",
        "status=2:503:retry-after-date=2",
    ] {
        h.shop.clear_requests();
        let r = h.call("listOrders", walk_open(), fault).await.unwrap();
        assert!(r.verdict.complete, "{fault}: {}", r.verdict.note);
        assert_eq!(ids(&r).len(), open_count());
        let log = h.requests();
        let page2: Vec<_> = log
            .iter()
            .filter(|q| q.query.contains(&("page".into(), "2".into())))
            .collect();
        assert_eq!(page2.len(), 2, "{fault}: page 2 asked twice");
        assert!(matches!(page2[0].status, 429 | 503), "{fault}");
        // the retry waited for Retry-After (server-side timestamps, not a timer here)
        let waited = page2[1].started_ms - page2[0].finished_ms;
        assert!(waited >= 900, "{fault}: retried after {waited} ms");
        // every attempt counts as a request
        assert_eq!(r.verdict.requests as usize, log.len());
    }
}

#[tokio::test]
async fn a_retry_after_longer_than_the_budget_stops_on_the_wall_clock() {
    let h = Harness::start().await;
    let limits = Limits {
        wall_clock: Duration::from_secs(3),
        ..test_limits()
    };
    let r = h
        .call_with(
            "listOrders",
            walk_open(),
            "status=2:429:retry-after=30",
            limits,
        )
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::WallClock));
    assert_eq!(ids(&r).len(), 100, "page one is kept");
}

#[tokio::test]
async fn server_errors_once_are_retried_and_persistent_ones_stop_the_walk() {
    let h = Harness::start().await;
    let r = h
        .call("listOrders", walk_open(), "status=3:500")
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let pages = open_count().div_ceil(100) as u32;
    assert_eq!(
        r.verdict.requests,
        pages + 1,
        "the retry counts as a request"
    );

    let r = h
        .call("listOrders", walk_open(), "status=3:500:always")
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::UpstreamError));
    assert_eq!(ids(&r).len(), 200, "pages one and two are kept");
    assert!(r.verdict.note.contains("500"), "{}", r.verdict.note);
    // 1 + 1 + (1 + 3 retries)
    assert_eq!(r.verdict.requests, 6);

    let err = h
        .call("listOrders", walk_open(), "status=1:500:always")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Upstream(UpstreamError::Status { status: 500, .. })
        ),
        "{err}"
    );
    let err = h
        .call("listOrders", walk_open(), "status=1:404:always")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("404"), "{err}");
    assert_eq!(
        h.requests().iter().filter(|q| q.status == 404).count(),
        1,
        "4xx is not retried"
    );
}

#[tokio::test]
async fn a_malformed_page_is_an_error_for_that_page() {
    let h = Harness::start().await;
    let r = h
        .call("listOrders", walk_open(), "malformed=2")
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::MalformedPage));
    assert_eq!(ids(&r).len(), 100);
    assert!(
        r.verdict.note.contains("not valid JSON"),
        "{}",
        r.verdict.note
    );
    assert!(
        r.verdict.note.contains("200"),
        "status named: {}",
        r.verdict.note
    );
    let err = h
        .call("listOrders", walk_open(), "malformed=1")
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Upstream(UpstreamError::Malformed { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn a_page_without_the_collection_is_an_error_not_an_empty_page() {
    let h = Harness::start().await;
    let r = h
        .call("listOrders", walk_open(), "missing-collection=2")
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::MalformedPage));
    assert!(
        r.verdict.note.contains("no collection at `data`"),
        "{}",
        r.verdict.note
    );
}

#[tokio::test]
async fn a_slow_page_runs_into_the_wall_clock() {
    let h = Harness::start().await;
    let limits = Limits {
        wall_clock: Duration::from_millis(800),
        ..test_limits()
    };
    let r = h
        .call_with("listOrders", walk_open(), "slow=2:3000", limits)
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::WallClock));
    assert_eq!(ids(&r).len(), 100);
    assert!(r.verdict.likely_more_rows);
}

#[tokio::test]
async fn a_huge_page_runs_into_the_byte_bound() {
    let h = Harness::start().await;
    let limits = Limits {
        max_bytes: 1_000_000,
        ..test_limits()
    };
    let r = h
        .call_with("listOrders", walk_open(), "huge=2:2000000", limits)
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::Bytes));
    assert_eq!(
        ids(&r).len(),
        100,
        "the page that would cross the bound is not read"
    );
}

#[tokio::test]
async fn every_bound_stops_the_walk_and_says_so() {
    let h = Harness::start().await;
    let cases = [
        (
            Limits {
                max_pages: 3,
                ..test_limits()
            },
            StopReason::Pages,
            300,
        ),
        (
            Limits {
                max_requests: 2,
                ..test_limits()
            },
            StopReason::Requests,
            200,
        ),
        (
            Limits {
                max_items: 150,
                ..test_limits()
            },
            StopReason::Items,
            150,
        ),
    ];
    for (limits, reason, rows) in cases {
        let r = h
            .call_with("listOrders", walk_open(), "", limits)
            .await
            .unwrap();
        assert_eq!(r.verdict.stopped_by, Some(reason));
        assert!(!r.verdict.complete && r.verdict.likely_more_rows);
        assert_eq!(ids(&r).len(), rows, "{reason:?}");
        assert!(
            r.verdict.note.contains(reason.explain()),
            "{}",
            r.verdict.note
        );
    }
}
