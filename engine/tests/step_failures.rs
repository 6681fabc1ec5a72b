//! How steps fail, against the demo shop over real HTTP: a step's `retry`
//! tries again only what may succeed the second time (a transient upstream
//! failure, not a bad argument or a 404), counted at the shop.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use dragnet_engine::run::{self, Quiet, RunOptions, RunRecord, StepStatus};
use dragnet_engine::workflow;
use dragnet_shop::ShopHandle;
use dragnet_steps::Limits;

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
