//! A ref whose work explodes over a deep step output fails its step with an
//! error naming the ref and the limit, end to end against the demo shop: a
//! report with a 60-level summary is posted, read back, and a later step's
//! ref over it asks for `..*` four times.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use dragnet_engine::run::{self, Quiet, RunOptions, RunStatus, StepStatus};
use dragnet_engine::workflow;

fn nested(depth: usize) -> String {
    format!("{}1{}", "{a: ".repeat(depth), "}".repeat(depth))
}

#[tokio::test]
async fn an_exploding_ref_fails_its_step_naming_the_ref() {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let dir = dragnet_shop::openapi_path().parent().unwrap().to_path_buf();
    let text = format!(
        "name: deep
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
steps:
  - id: post
    tool: shop.createReport
    input: {{title: deep, summary: {summary}}}
  - id: reports
    tool: shop.listReports
    needs: [post]
  - id: count
    tool: shop.createAlert
    input: {{message: {{ref: \"$.steps.reports.data[0].title\"}}}}
  - id: explode
    tool: shop.createAlert
    input: {{message: {{ref: \"$.steps.reports..*..*..*..*\"}}}}
",
        summary = nested(60)
    );
    let wf = workflow::load_str(&dir.join("deep.workflow.yaml"), &text)
        .unwrap_or_else(|d| panic!("the workflow validates:\n{d}"));
    let opts = RunOptions {
        base_urls: HashMap::from([("shop".to_string(), shop.base_url().to_string())]),
        ..RunOptions::default()
    };
    let record = run::run(Arc::new(wf), opts, Arc::new(Quiet)).await.unwrap();
    assert_eq!(record.status, RunStatus::Failed, "{record:#?}");
    // the deep output itself was read back whole, and a plain ref over it works
    assert_eq!(
        record.step("reports").unwrap().status,
        StepStatus::Succeeded
    );
    assert_eq!(record.step("count").unwrap().status, StepStatus::Succeeded);
    let explode = record.step("explode").unwrap();
    assert_eq!(explode.status, StepStatus::Failed);
    assert_eq!(
        explode.reason.as_deref(),
        Some(
            "`$.steps.reports..*..*..*..*` visits more than 1000000 nodes, the limit for one \
             ref; narrow the path (fewer `..` and wildcards) or read a smaller part of the output"
        )
    );
    let alerts = shop
        .requests()
        .into_iter()
        .filter(|r| r.path == "/alerts")
        .count();
    assert_eq!(
        alerts, 1,
        "only the step with the plain ref reached the shop"
    );
}

/// Found by the `refs` fuzz target: a ref of nested filters on which
/// jsonpath-rust's parser backtracks for minutes. It is refused at once,
/// with an error that says why; ordinary refs still parse.
#[test]
fn a_ref_the_parser_would_backtrack_on_is_refused_at_once() {
    use dragnet_engine::refs::RefExpr;
    let bytes = include_bytes!("fixtures/refs/backtracking.bin");
    let text = String::from_utf8_lossy(bytes);
    let Err(err) = RefExpr::parse(&text) else {
        panic!("a ref this complex is refused");
    };
    assert!(err.to_string().contains("too complex to parse"), "{err}");
    for ok in [
        "$.steps.orders.data[?@.total > 100 && @.status == 'open'].id",
        "$.steps.a..items[?(@.tags[?@ == 'x'])].name",
        "$.inputs.ids[0:3]",
    ] {
        assert!(RefExpr::parse(ok).is_ok(), "{ok}");
    }
}
