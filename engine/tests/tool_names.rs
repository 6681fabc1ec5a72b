//! A workflow may name a tool by the document's original `operationId`
//! (`names.café`, `names.列出订单`, a 500-character id) as well as by its
//! sanitised name; it validates and runs against the demo shop, and an
//! unknown spelling is reported with the original ids among the hints.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use dragnet_engine::run::{self, Quiet, RunOptions, RunStatus, StepStatus};
use dragnet_engine::workflow;
use serde_json::json;

fn long_id() -> String {
    "listEveryCustomerOfTheShopIncludingArchivedOnes".repeat(11)[..500].to_string()
}

/// A directory holding the names document, pointing at the shop's paths.
fn dir(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("dragnet-engine-names-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "names", "version": "1"},
        "paths": {
            "/orders/{order_id}": {"get": {"operationId": "café", "parameters": [
                {"name": "order_id", "in": "path", "required": true, "schema": {"type": "integer"}}]}},
            "/properties": {"get": {"operationId": "列出订单"}},
            "/customers": {"get": {"operationId": long_id()}},
            "/reports": {"get": {"operationId": "reports.list"}},
            "/alerts": {"get": {"operationId": "reports list"}}
        }
    });
    std::fs::write(dir.join("names.json"), doc.to_string()).unwrap();
    dir
}

const PROVIDER: &str =
    "providers:\n  names:\n    openapi: names.json\n    base_url: http://127.0.0.1:9\n";

#[tokio::test]
async fn a_workflow_names_tools_by_their_original_operation_ids() {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let dir = dir("run");
    let text = format!(
        "name: names\n{PROVIDER}steps:
  - id: order
    tool: names.café
    input: {{order_id: 7}}
  - id: properties
    tool: \"names.列出订单\"
  - id: customers
    tool: names.{long}
  - id: alerts
    tool: names.reports list
  - id: reports
    tool: names.reports_list
",
        long = long_id()
    );
    let wf = workflow::load_str(&dir.join("names.workflow.yaml"), &text)
        .unwrap_or_else(|d| panic!("the workflow validates:\n{d}"));
    let opts = RunOptions {
        base_urls: HashMap::from([("names".to_string(), shop.base_url().to_string())]),
        ..RunOptions::default()
    };
    let record = run::run(Arc::new(wf), opts, Arc::new(Quiet)).await.unwrap();
    for step in ["order", "properties", "customers", "alerts", "reports"] {
        let s = record.step(step).unwrap();
        assert_eq!(s.status, StepStatus::Succeeded, "{step}: {:?}", s.reason);
    }
    assert_ne!(record.status, RunStatus::Failed);
    let mut paths: Vec<String> = shop.requests().into_iter().map(|r| r.path).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/alerts",
            "/customers",
            "/orders/7",
            "/properties",
            "/reports"
        ]
    );
}

#[test]
fn an_unknown_spelling_suggests_the_original_id() {
    let dir = dir("validate");
    let text = format!("name: names\n{PROVIDER}steps:\n  - id: a\n    tool: names.cafe\n");
    let err = workflow::load_str(&dir.join("names.workflow.yaml"), &text)
        .expect_err("`cafe` is not a tool")
        .to_string();
    assert!(
        err.contains("unknown tool `cafe` in provider `names`; did you mean café?"),
        "{err}"
    );
}
