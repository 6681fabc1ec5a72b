//! `_for_each` with `concurrency` over real HTTP: the rows and verdict of the
//! sequential walk in value order, one shared budget, pacing shared by the
//! walks under the shop's rate limit, `loop.for_each.concurrency` in a
//! workflow, and invalid values as clear errors.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use dragnet_core::progress::ProgressEvent;
use dragnet_core::{Error, Limits, StopReason};
use dragnet_e2e::{items, test_limits, Harness};
use dragnet_engine::run::{self, Quiet, RunOptions, RunStatus};
use dragnet_engine::workflow;
use dragnet_shop::RecordedRequest;
use dragnet_walk::{LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// The properties fanned out over, with a value the shop answers 404 to
/// and one that cannot be coerced, so per-value errors are compared too.
fn values() -> Value {
    json!([3, 1, 999, 7, 2, "abc", 12, 5, 9, 4, 11, 6, 8, 10])
}

async fn fan(h: &Harness, concurrency: u64, fault: &str, limits: Limits) -> LoopResult {
    h.call_with(
        "listPropertyOrders",
        json!({"status": "open", "per_page": 10, "_all_pages": true,
               "_for_each": {"key": "property_id", "values": values(),
                             "concurrency": concurrency}}),
        fault,
        limits,
    )
    .await
    .unwrap()
}

/// The most requests the shop was answering at the same time (a sweep
/// over arrivals and answers; an answer in the same millisecond as an
/// arrival counts first).
fn most_in_flight(requests: &[RecordedRequest]) -> usize {
    let mut events: Vec<(u64, i32)> = requests
        .iter()
        .flat_map(|q| [(q.started_ms, 1), (q.finished_ms, -1)])
        .collect();
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    most as usize
}

fn errors(r: &LoopResult) -> Vec<(Value, String)> {
    r.for_each_errors
        .iter()
        .map(|e| (e.value.clone(), e.error.clone()))
        .collect()
}

#[tokio::test]
async fn concurrency_four_gives_the_rows_and_verdict_of_one_in_value_order() {
    let one = Harness::start().await;
    let four = Harness::start().await;
    // Room for every page: the same rows only when no bound runs out.
    let limits = Limits {
        max_requests: 500,
        ..test_limits()
    };
    let seq = fan(&one, 1, "latency=5", limits.clone()).await;
    let par = fan(&four, 4, "latency=5", limits).await;
    // Only the failing values keep it from complete.
    assert_eq!(
        seq.verdict.stopped_by,
        Some(StopReason::UpstreamError),
        "{}",
        seq.verdict.note
    );
    let summary = |r: &LoopResult| {
        items(r)
            .iter()
            .map(|i| {
                (
                    i["property_id"].as_i64().unwrap(),
                    i["id"].as_i64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(summary(&par), summary(&seq));
    assert_eq!(par.verdict, seq.verdict);
    assert!(items(&par) == items(&seq), "the same rows");
    assert_eq!(errors(&par), errors(&seq));
    assert_eq!(errors(&par).len(), 2, "{:?}", errors(&par));
    // Value order: the rows of property 3 come first, then 1, then 7 …
    let order: Vec<i64> = items(&par)
        .iter()
        .map(|r| r["property_id"].as_i64().unwrap())
        .fold(Vec::new(), |mut seen, p| {
            if seen.last() != Some(&p) {
                seen.push(p);
            }
            seen
        });
    assert_eq!(order, vec![3, 1, 7, 2, 12, 5, 9, 4, 11, 6, 8, 10]);
    // The same requests reached the shop; at most four at a time, and more than one.
    assert_eq!(four.requests().len(), one.requests().len());
    assert_eq!(most_in_flight(&one.requests()), 1);
    let most = most_in_flight(&four.requests());
    assert!((2..=4).contains(&most), "{most} requests in flight at once");
}

#[tokio::test]
async fn one_shared_budget_stops_every_walk() {
    let h = Harness::start().await;
    let limits = Limits {
        max_requests: 9,
        ..test_limits()
    };
    let r = fan(&h, 4, "latency=5", limits).await;
    assert!(
        most_in_flight(&h.requests()) >= 2,
        "the walks ran side by side"
    );
    assert!(!r.verdict.complete);
    assert_eq!(r.verdict.stopped_by, Some(StopReason::Requests));
    assert_eq!(r.verdict.requests, 9);
    assert_eq!(h.requests().len(), 9, "no walk sent past the shared bound");
}

#[tokio::test]
async fn cancelling_stops_every_walk_of_a_concurrent_fan_out() {
    let h = Harness::start().await;
    let cancel = CancellationToken::new();
    let on_first_page = {
        let cancel = cancel.clone();
        move |_: &ProgressEvent| cancel.cancel()
    };
    let runtime = Runtime {
        progress: &on_first_page,
        cancel: cancel.clone(),
        ..Runtime::quiet()
    };
    let Value::Object(args) = json!({"status": "open", "per_page": 5, "_all_pages": true,
        "_for_each": {"key": "property_id", "values": [1, 2, 3, 4, 5, 6, 7, 8], "concurrency": 4}})
    else {
        unreachable!()
    };
    let (arguments, options) = LoopOptions::split_reserved(args).unwrap();
    let call = ToolCall {
        tool: h.tool("listPropertyOrders"),
        arguments,
        options,
        limits: test_limits(),
        cache: None,
    };
    let r = dragnet_walk::execute(call, &h.upstream("latency=5"), &runtime)
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::Cancelled));
    assert!(!r.verdict.complete);
    // At most the four first pages were under way when the first came
    // back; no walk sent another, and no later value started one.
    let sent = h.requests().len();
    assert!(
        sent <= 4,
        "{sent} requests after cancelling on the first page"
    );
}

/// 429s the shop answered.
fn too_many(h: &Harness) -> usize {
    h.requests().iter().filter(|q| q.status == 429).count()
}

/// Eight properties walked in two pages each by one call with concurrency
/// 4, against four calls of two properties each started at once.
async fn rate_limited(fault: &str) -> (usize, usize) {
    let args = |values: Value, concurrency: u64| {
        json!({"status": "open", "per_page": 25, "_all_pages": true,
               "_for_each": {"key": "property_id", "values": values,
                             "concurrency": concurrency}})
    };
    let shared = Harness::start().await;
    let r = shared
        .call(
            "listPropertyOrders",
            args(json!([1, 2, 3, 4, 5, 6, 7, 8]), 4),
            fault,
        )
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert!(r.for_each_errors.is_empty(), "{:?}", errors(&r));
    assert!(
        most_in_flight(&shared.requests()) >= 2,
        "the walks ran side by side"
    );

    let apart = Harness::start().await;
    let calls = [[1, 2], [3, 4], [5, 6], [7, 8]]
        .map(|pair| apart.call("listPropertyOrders", args(json!(pair), 1), fault));
    let results = futures::future::join_all(calls).await;
    let rows: usize = results
        .iter()
        .map(|r| items(r.as_ref().unwrap()).len())
        .sum();
    assert_eq!(rows, items(&r).len(), "the same rows either way");
    (too_many(&shared), too_many(&apart))
}

#[tokio::test]
async fn shared_pacing_gets_fewer_429s_than_independent_walkers() {
    let (shared, apart) = rate_limited("rate=4:400:headers,latency=5").await;
    assert!(
        shared < apart,
        "shared pacing got {shared} 429s, independent walkers {apart}"
    );
}

#[tokio::test]
async fn a_fan_out_held_by_retry_after_still_completes() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listPropertyOrders",
            json!({"status": "open", "per_page": 100, "_all_pages": true,
                   "_for_each": {"key": "property_id", "values": [1, 2, 3, 4, 5, 6, 7, 8],
                                 "concurrency": 4}}),
            "rate=3:300",
        )
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let order: Vec<i64> = items(&r)
        .iter()
        .map(|i| i["property_id"].as_i64().unwrap())
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted, "value order");
    assert!(too_many(&h) > 0, "the rate fault fired");
}

#[tokio::test]
async fn an_invalid_concurrency_is_a_clear_error() {
    let h = Harness::start().await;
    for bad in [json!(0), json!(17), json!("many")] {
        let e = h
            .call(
                "listPropertyOrders",
                json!({"_for_each": {"key": "property_id", "values": [1], "concurrency": bad}}),
                "",
            )
            .await
            .unwrap_err();
        assert!(matches!(e, Error::InvalidReserved { .. }), "{e:?}");
        assert!(e.to_string().contains("from 1 to 16"), "{e}");
    }
    assert!(h.requests().is_empty());
}

fn shop_dir() -> PathBuf {
    dragnet_shop::openapi_path().parent().unwrap().to_path_buf()
}

fn workflow_text(concurrency: &str) -> String {
    format!(
        "name: fanned
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
steps:
  - id: orders
    tool: shop.listPropertyOrders
    input: {{status: open, per_page: 20}}
    loop:
      all_pages: true
      for_each: {{key: property_id, values: [4, 2, 9, 1, 6], concurrency: {concurrency}}}
"
    )
}

#[tokio::test]
async fn a_workflow_fans_out_with_loop_for_each_concurrency() {
    let h = Harness::start().await;
    let source = shop_dir().join("fanned.workflow.yaml");
    let wf = workflow::load_str(&source, &workflow_text("3")).expect("the workflow loads");
    let options = RunOptions {
        base_urls: HashMap::from([("shop".to_string(), h.shop.base_url().to_string())]),
        ..RunOptions::default()
    };
    let record = run::run(Arc::new(wf), options, Arc::new(Quiet))
        .await
        .unwrap();
    assert_eq!(record.status, RunStatus::Succeeded, "{record:#?}");
    let out: Value = serde_json::from_str(
        record
            .step("orders")
            .unwrap()
            .output
            .as_ref()
            .unwrap()
            .get(),
    )
    .unwrap();
    assert_eq!(out["_loop"]["complete"], true);
    let walked = h
        .call(
            "listPropertyOrders",
            json!({"status": "open", "per_page": 20, "_all_pages": true,
                   "_for_each": {"key": "property_id", "values": [4, 2, 9, 1, 6]}}),
            "",
        )
        .await
        .unwrap();
    let rows = out["data"].as_array().expect("the merged collection");
    assert_eq!(rows, &items(&walked), "value order, as walked one by one");
}

#[tokio::test]
async fn an_invalid_workflow_concurrency_is_located() {
    let source = shop_dir().join("fanned.workflow.yaml");
    for bad in ["0", "17"] {
        let d = workflow::load_str(&source, &workflow_text(bad)).unwrap_err();
        let first = &d.0[0];
        let text = workflow_text(bad);
        let line = text.lines().nth(11).unwrap();
        let column = line.find("concurrency: ").unwrap() + "concurrency: ".len() + 1;
        assert_eq!(
            (first.line, first.column, first.path.as_str()),
            (12, column, "steps[0].loop.for_each.concurrency"),
            "{d}"
        );
        assert!(first.message.contains("from 1 to 16"), "{d}");
    }
}
