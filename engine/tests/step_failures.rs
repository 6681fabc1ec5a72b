//! How steps fail, against the demo shop over real HTTP: a step's `retry`
//! tries again only what may succeed the second time (a transient upstream
//! failure, not a bad argument or a 404), counted at the shop; a step whose
//! task panics fails alone, named, and the run goes on.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use dragnet_core::Limits;
use dragnet_engine::run::{
    self, CallFuture, CallTarget, LoopLayer, Quiet, RunOptions, RunRecord, RunStatus, StepStatus,
    ToolRunner,
};
use dragnet_engine::workflow;
use dragnet_shop::ShopHandle;
use dragnet_walk::{Runtime, ToolCall};
use serde_json::json;

async fn shop() -> ShopHandle {
    dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
}

fn shop_dir() -> PathBuf {
    dragnet_shop::openapi_path().parent().unwrap().to_path_buf()
}

/// Both providers of the test workflows point at `shop`.
fn options(shop: &ShopHandle) -> RunOptions {
    let url = shop.base_url().to_string();
    RunOptions {
        base_urls: HashMap::from([
            ("shop".to_string(), url.clone()),
            ("flaky".to_string(), url),
        ]),
        ..RunOptions::default()
    }
}

async fn run_text(text: &str, opts: RunOptions) -> RunRecord {
    let wf = workflow::load_str(&shop_dir().join("inline.workflow.yaml"), text)
        .unwrap_or_else(|d| panic!("the workflow loads:\n{d}"));
    run::run(Arc::new(wf), opts, Arc::new(Quiet)).await.unwrap()
}

fn requests_to(shop: &ShopHandle, path: &str) -> usize {
    shop.requests().iter().filter(|r| r.path == path).count()
}

const PROVIDERS: &str = "providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
  flaky:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
    headers: {X-Shop-Fault: \"status=1:503\"}
";

#[tokio::test]
async fn retries_skip_deterministic_failures_and_retry_transient_ones() {
    let shop = shop().await;
    let text = format!(
        "name: retries\n{PROVIDERS}steps:
  - id: invalid
    tool: shop.getOrder
    input: {{order_id: lots}}
    retry: {{attempts: 3, delay: 10ms}}
  - id: missing
    tool: shop.getOrder
    input: {{order_id: 999999}}
    retry: {{attempts: 3, delay: 10ms}}
  - id: transient
    tool: flaky.listOrders
    input: {{per_page: 5}}
    retry: {{attempts: 3, delay: 10ms}}
"
    );
    // No retries inside the call: the 503 reaches the step's own retry.
    let mut limits = Limits::default();
    limits.retry.max_retries = 0;
    let record = run_text(
        &text,
        RunOptions {
            limits,
            ..options(&shop)
        },
    )
    .await;

    let invalid = record.step("invalid").unwrap();
    assert_eq!(invalid.status, StepStatus::Failed);
    assert_eq!(invalid.attempts, 1, "a bad argument is not retried");
    assert!(
        invalid.reason.as_deref().unwrap().contains("order_id"),
        "{invalid:?}"
    );
    assert_eq!(requests_to(&shop, "/orders/lots"), 0, "nothing was sent");

    let missing = record.step("missing").unwrap();
    assert_eq!(missing.status, StepStatus::Failed);
    assert_eq!(missing.attempts, 1, "a 404 is not retried");
    assert!(missing.reason.as_deref().unwrap().contains("404"));
    assert_eq!(requests_to(&shop, "/orders/999999"), 1);

    let transient = record.step("transient").unwrap();
    assert_eq!(transient.status, StepStatus::Succeeded, "{transient:?}");
    assert_eq!(transient.attempts, 2, "the 503 was tried again");
    assert_eq!(requests_to(&shop, "/orders"), 2);
}

/// The loop layer, except that a call for order 13 panics inside the
/// step's task (a bug in a step, made to order).
struct PanicsOnOrder13;

impl ToolRunner for PanicsOnOrder13 {
    fn call<'a>(
        &'a self,
        call: ToolCall<'a>,
        upstream: CallTarget<'a>,
        runtime: &'a Runtime<'a>,
    ) -> CallFuture<'a> {
        Box::pin(async move {
            if call.arguments.get("order_id") == Some(&json!(13)) {
                panic!("order 13 is cursed");
            }
            LoopLayer.call(call, upstream, runtime).await
        })
    }
}

#[tokio::test]
async fn a_panicking_step_fails_alone_and_the_run_goes_on() {
    let shop = shop().await;
    let text = format!(
        "name: panics\n{PROVIDERS}steps:
  - id: cursed
    tool: shop.getOrder
    input: {{order_id: 13}}
    retry: {{attempts: 3, delay: 10ms}}
  - id: after_cursed
    tool: shop.getOrder
    input: {{order_id: {{ref: \"$.steps.cursed.id\"}}}}
  - id: fine
    tool: shop.getOrder
    input: {{order_id: 1}}
  - id: after_fine
    tool: shop.getOrder
    needs: [fine]
    input: {{order_id: 2}}
"
    );
    let record = run_text(
        &text,
        RunOptions {
            tools: Arc::new(PanicsOnOrder13),
            ..options(&shop)
        },
    )
    .await;
    assert_eq!(record.status, RunStatus::Failed, "{record:#?}");
    let cursed = record.step("cursed").unwrap();
    assert_eq!(cursed.status, StepStatus::Failed);
    assert_eq!(
        cursed.reason.as_deref(),
        Some("step `cursed` panicked: order 13 is cursed")
    );
    assert_eq!(cursed.attempts, 1, "a panic is not retried");
    assert!(cursed.finished_at.is_some());
    let after = record.step("after_cursed").unwrap();
    assert_eq!(after.status, StepStatus::Failed);
    assert_eq!(after.reason.as_deref(), Some("dependency `cursed` failed"));
    for id in ["fine", "after_fine"] {
        let step = record.step(id).unwrap();
        assert_eq!(step.status, StepStatus::Succeeded, "{step:?}");
    }
    assert_eq!(requests_to(&shop, "/orders/13"), 0);
    assert_eq!(requests_to(&shop, "/orders/2"), 1);
}
