//! Workflows run end to end against the demo shop over real HTTP: fan-out
//! over refs, `_loop` verdicts, payload shape, branches both ways, skip and
//! failure propagation with reasons, concurrency, cancellation.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dragnet_engine::run::{self, Quiet, RunOptions, RunRecord, RunStatus, StepStatus};
use dragnet_engine::workflow;
use dragnet_shop::{dataset, OrderStatus, ShopHandle};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn shop_dir() -> PathBuf {
    dragnet_shop::openapi_path().parent().unwrap().to_path_buf()
}

async fn shop() -> ShopHandle {
    dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
}

fn options(shop: &ShopHandle) -> RunOptions {
    RunOptions {
        base_urls: HashMap::from([("shop".to_string(), shop.base_url().to_string())]),
        ..RunOptions::default()
    }
}

async fn run_text(shop: &ShopHandle, text: &str, opts: RunOptions) -> RunRecord {
    let wf = workflow::load_str(&shop_dir().join("inline.workflow.yaml"), text)
        .unwrap_or_else(|d| panic!("the workflow loads:\n{d}"));
    let _ = shop;
    run::run(Arc::new(wf), opts, Arc::new(Quiet)).await.unwrap()
}

fn output(record: &RunRecord, step: &str) -> Value {
    let s = record.step(step).unwrap_or_else(|| panic!("step {step}"));
    serde_json::from_str(
        s.output
            .as_ref()
            .unwrap_or_else(|| panic!("{step} has output"))
            .get(),
    )
    .unwrap()
}

const PROVIDER: &str =
    "providers:\n  shop:\n    openapi: openapi.yaml\n    base_url: http://127.0.0.1:9\n";

#[tokio::test]
async fn the_nightly_example_fans_out_and_reports() {
    let shop = shop().await;
    let wf = workflow::load(&shop_dir().join("nightly-open-orders.workflow.yaml")).unwrap();
    let record = run::run(Arc::new(wf), options(&shop), Arc::new(Quiet))
        .await
        .unwrap();
    assert_eq!(record.status, RunStatus::Succeeded, "{record:#?}");
    let fetched = output(&record, "open_orders");
    let lp = &fetched["_loop"];
    assert_eq!(lp["complete"], true);
    assert_eq!(lp["stoppedBy"], Value::Null);
    let open = dataset()
        .orders()
        .iter()
        .filter(|o| o.status == OrderStatus::Open)
        .count();
    assert_eq!(lp["itemCount"], json!(open));
    assert_eq!(lp["requests"], json!(30), "one page per property");
    assert!(lp["note"].as_str().unwrap().contains("across 30 values"));
    // the tool's own payload shape: data + meta, rows projected and filtered
    let rows = fetched["data"].as_array().unwrap();
    assert!(fetched.get("meta").is_some());
    let want = dataset()
        .orders()
        .iter()
        .filter(|o| o.status == OrderStatus::Open && o.total > 500.0)
        .count();
    assert_eq!(rows.len(), want);
    assert!(rows.iter().all(|r| r.as_object().unwrap().len() == 5));
    // the branch took `then`: a report was posted, the alert skipped with a reason
    assert_eq!(record.step("report").unwrap().status, StepStatus::Succeeded);
    let alert = record.step("alert").unwrap();
    assert_eq!(alert.status, StepStatus::Skipped);
    assert_eq!(
        alert.reason.as_deref(),
        Some("skipped: branch `verdict` took then because $.steps.open_orders._loop.complete was true")
    );
    let posted: Vec<_> = shop
        .requests()
        .into_iter()
        .filter(|r| r.path == "/reports")
        .collect();
    assert_eq!(posted.len(), 1);
    assert_eq!(
        posted[0].body.as_ref().unwrap()["rows"]
            .as_array()
            .unwrap()
            .len(),
        want
    );
}

#[tokio::test]
async fn a_partial_walk_takes_the_else_path() {
    let shop = shop().await;
    let wf = workflow::load(&shop_dir().join("all-orders-audit.workflow.yaml")).unwrap();
    let record = run::run(Arc::new(wf), options(&shop), Arc::new(Quiet))
        .await
        .unwrap();
    assert_eq!(record.status, RunStatus::Partial);
    let lp = output(&record, "orders")["_loop"].clone();
    assert_eq!(lp["complete"], false);
    assert_eq!(lp["stoppedBy"], "pages");
    assert_eq!(lp["itemCount"], 2000);
    let report = record.step("report").unwrap();
    assert_eq!(report.status, StepStatus::Skipped);
    assert!(report
        .reason
        .as_deref()
        .unwrap()
        .contains("took else because $.steps.orders._loop.complete was false"));
    let alerts: Vec<_> = shop
        .requests()
        .into_iter()
        .filter(|r| r.path == "/alerts")
        .collect();
    assert_eq!(alerts.len(), 1);
    assert!(alerts[0].body.as_ref().unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("pages-per-collection"));
}

#[tokio::test]
async fn skips_and_failures_propagate_with_reasons() {
    let shop = shop().await;
    let text = format!(
        "name: propagation\n{PROVIDER}steps:
  - id: missing
    tool: shop.getOrder
    input: {{order_id: 999999}}
  - id: after_missing
    tool: shop.getOrder
    input: {{order_id: {{ref: \"$.steps.missing.id\"}}}}
  - id: fine
    tool: shop.getOrder
    input: {{order_id: 1}}
  - id: gate
    type: branch
    if: {{ref: \"$.steps.fine.id\", op: eq, value: 2}}
    then: [chosen]
    else: [other]
  - id: chosen
    tool: shop.getOrder
    input: {{order_id: 2}}
  - id: other
    tool: shop.getOrder
    input: {{order_id: 3}}
  - id: after_chosen
    tool: shop.getOrder
    needs: [chosen]
    input: {{order_id: 4}}
"
    );
    let record = run_text(&shop, &text, options(&shop)).await;
    assert_eq!(record.status, RunStatus::Failed);
    let missing = record.step("missing").unwrap();
    assert_eq!(missing.status, StepStatus::Failed);
    assert!(
        missing.reason.as_deref().unwrap().contains("404"),
        "{missing:?}"
    );
    let after = record.step("after_missing").unwrap();
    assert_eq!(after.status, StepStatus::Failed);
    assert_eq!(after.reason.as_deref(), Some("dependency `missing` failed"));
    assert_eq!(record.step("fine").unwrap().status, StepStatus::Succeeded);
    assert_eq!(record.step("other").unwrap().status, StepStatus::Succeeded);
    let chosen = record.step("chosen").unwrap();
    assert_eq!(chosen.status, StepStatus::Skipped);
    assert!(chosen
        .reason
        .as_deref()
        .unwrap()
        .starts_with("skipped: branch `gate` took else because $.steps.fine.id was 1"));
    let after = record.step("after_chosen").unwrap();
    assert_eq!(after.status, StepStatus::Skipped);
    assert_eq!(
        after.reason.as_deref(),
        Some("skipped: it depends only on skipped steps (`chosen`)")
    );
    assert_eq!(output(&record, "gate")["took"], "else");
}

#[tokio::test]
async fn independent_steps_run_concurrently() {
    let shop = shop().await;
    let text = "name: parallel
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
    headers: {X-Shop-Fault: \"slow=1:400\"}
steps:
  - id: a
    tool: shop.listOrders
    input: {per_page: 5}
  - id: b
    tool: shop.listCustomers
    input: {limit: 5}
  - id: c
    tool: shop.listOrders
    needs: [a, b]
    input: {per_page: 5, page: 2}
";
    let record = run_text(&shop, text, options(&shop)).await;
    assert_eq!(
        record.status,
        RunStatus::Partial,
        "single pages are not complete: {record:#?}"
    );
    let log = shop.requests();
    let a = log
        .iter()
        .find(|r| {
            r.path == "/orders"
                && r.query.contains(&("per_page".into(), "5".into()))
                && !r.query.iter().any(|(k, _)| k == "page")
        })
        .unwrap();
    let b = log.iter().find(|r| r.path == "/customers").unwrap();
    let c = log
        .iter()
        .find(|r| r.query.contains(&("page".into(), "2".into())))
        .unwrap();
    // a and b were in flight at the same time (server-side timestamps)
    assert!(
        a.started_ms < b.finished_ms && b.started_ms < a.finished_ms,
        "{a:?} {b:?}"
    );
    // c waited for both
    assert!(c.started_ms >= a.finished_ms && c.started_ms >= b.finished_ms);
}

#[tokio::test]
async fn cancellation_stops_running_walks_and_skips_the_rest() {
    let shop = shop().await;
    let text = "name: cancel
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
    headers: {X-Shop-Fault: \"slow=2:10000\"}
steps:
  - id: quick
    tool: shop.getOrder
    input: {order_id: 1}
  - id: long
    tool: shop.listOrders
    loop: {all_pages: true}
  - id: after
    tool: shop.getOrder
    needs: [long]
    input: {order_id: 2}
";
    let cancel = CancellationToken::new();
    let opts = RunOptions {
        cancel: cancel.clone(),
        ..options(&shop)
    };
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let record = run_text(&shop, text, opts).await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the run stopped without waiting for the slow page"
    );
    assert_eq!(record.status, RunStatus::Cancelled);
    assert_eq!(record.step("quick").unwrap().status, StepStatus::Succeeded);
    let long = record.step("long").unwrap();
    assert_eq!(long.status, StepStatus::Cancelled);
    assert_eq!(
        long.verdict.as_ref().unwrap().item_count,
        100,
        "the page fetched before the cancel is kept"
    );
    let after = record.step("after").unwrap();
    assert_eq!(after.status, StepStatus::Failed);
    assert_eq!(
        after.reason.as_deref(),
        Some("dependency `long` was cancelled")
    );
}

#[tokio::test]
async fn inputs_are_typed_and_checked() {
    let shop = shop().await;
    let wf =
        Arc::new(workflow::load(&shop_dir().join("nightly-open-orders.workflow.yaml")).unwrap());
    let inputs = run::parse_input_pairs(&wf, &["min_total=990".to_string()]).unwrap();
    assert_eq!(inputs["min_total"], json!(990.0));
    let record = run::run(
        wf.clone(),
        RunOptions {
            inputs,
            ..options(&shop)
        },
        Arc::new(Quiet),
    )
    .await
    .unwrap();
    let rows = output(&record, "open_orders")["data"]
        .as_array()
        .unwrap()
        .len();
    let want = dataset()
        .orders()
        .iter()
        .filter(|o| o.status == OrderStatus::Open && o.total > 990.0)
        .count();
    assert_eq!(rows, want);
    let err = run::parse_input_pairs(&wf, &["nope=1".to_string()]).unwrap_err();
    assert!(err.to_string().contains("not an input"), "{err}");
    let err = run::parse_input_pairs(&wf, &["min_total=lots".to_string()]).unwrap_err();
    assert!(err.to_string().contains("min_total"), "{err}");
}

#[tokio::test]
async fn step_timeouts_and_retries() {
    let shop = shop().await;
    let text = "name: limits
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
    headers: {X-Shop-Fault: \"slow=1:5000\"}
steps:
  - id: slow
    tool: shop.listOrders
    input: {per_page: 5}
    timeout: 300ms
  - id: missing
    tool: shop.getOrder
    input: {order_id: 999999}
    retry: {attempts: 2, delay: 50ms}
";
    let record = run_text(&shop, text, options(&shop)).await;
    let slow = record.step("slow").unwrap();
    assert_eq!(slow.status, StepStatus::Failed);
    assert_eq!(slow.reason.as_deref(), Some("timed out after 300ms"));
    let missing = record.step("missing").unwrap();
    assert_eq!(missing.status, StepStatus::Failed);
    assert_eq!(
        missing.attempts, 1,
        "a 404 is not retried, by the call or the step"
    );
    assert!(missing.reason.as_deref().unwrap().contains("404"));
    let tries = shop
        .requests()
        .iter()
        .filter(|r| r.path == "/orders/999999")
        .count();
    assert_eq!(tries, 1);
}

/// A clock fixed at one wall-clock moment (monotonic time is tokio's).
struct Fixed(chrono::DateTime<chrono::Utc>);

impl dragnet_core::clock::Clock for Fixed {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.0
    }
}

#[tokio::test]
async fn records_read_the_injected_clock() {
    let shop = shop().await;
    let at = chrono::DateTime::from_timestamp(1_893_456_000, 0).unwrap();
    let text =
        format!("name: clocked\n{PROVIDER}steps:\n  - id: props\n    tool: shop.listProperties\n");
    let opts = RunOptions {
        clock: Arc::new(Fixed(at)),
        ..options(&shop)
    };
    let record = run_text(&shop, &text, opts).await;
    assert_eq!(record.status, RunStatus::Succeeded);
    assert_eq!(record.started_at, at);
    assert_eq!(record.finished_at, Some(at));
    assert!(
        record.run_id.starts_with("run_20300101T"),
        "{}",
        record.run_id
    );
    let step = record.step("props").unwrap();
    assert_eq!((step.started_at, step.finished_at), (Some(at), Some(at)));
}

/// A workflow gets paging roles named by hand at once: the shop's
/// Jira-style `listJiraCustomers` (`startAt` + `maxResults`, capped at 50
/// silently) walks every customer with its roles, and without them
/// `all_pages` is refused when the file loads.
#[tokio::test]
async fn a_workflow_walks_an_operation_by_the_paging_roles_it_names() {
    let shop = shop().await;
    let steps = "steps:\n  - id: customers\n    tool: shop.listJiraCustomers\n    input: {maxResults: 100}\n    loop: {all_pages: true, fields: [id]}\n";
    let named = format!(
        "name: jira-style\n{PROVIDER}    paging:\n      listJiraCustomers: {{size: maxResults, offset: startAt}}\n{steps}"
    );
    let record = run_text(&shop, &named, options(&shop)).await;
    assert_eq!(record.status, RunStatus::Succeeded, "{record:?}");
    let out = output(&record, "customers");
    assert_eq!(out["_loop"]["complete"], true, "{}", out["_loop"]);
    let want = dragnet_shop::dataset().customers().len();
    assert_eq!(out["_loop"]["itemCount"], want);
    assert_eq!(out["values"].as_array().unwrap().len(), want);
    let starts: Vec<String> = shop
        .requests()
        .iter()
        .filter(|r| r.path == "/jira/customers")
        .map(|r| {
            r.query
                .iter()
                .find(|(k, _)| k == "startAt")
                .unwrap()
                .1
                .clone()
        })
        .collect();
    let expected: Vec<String> = (0..want).step_by(50).map(|n| n.to_string()).collect();
    assert_eq!(
        starts, expected,
        "each page starts where the capped one before ended"
    );

    let unnamed = format!("name: jira-style\n{PROVIDER}{steps}");
    let refused = workflow::load_str(&shop_dir().join("inline.workflow.yaml"), &unnamed)
        .expect_err("not walkable without its roles");
    assert!(
        refused.to_string().contains("cannot walk all pages"),
        "{refused}"
    );
}
