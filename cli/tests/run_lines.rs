//! The plain lines `dragnet run` writes on stderr when it is not a
//! terminal. Lines about steps starting and ending are held while the
//! executor decides steps one after another, and written when it waits:
//! so a burst of branches keeps its order, and a slow step's `started`
//! line is out before its request is answered.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::Arc;

use common::{fresh_db, scratch, shop};

/// Three branches in a chain, then `slow`: one page of orders (of
/// twenty), which the shop answers after 5 s.
fn workflow(base: &str) -> std::path::PathBuf {
    let file = scratch("workflow.yaml");
    std::fs::write(
        &file,
        format!(
            "name: lines
inputs:
  go: {{ type: boolean, default: true }}
providers:
  shop:
    openapi: {}
    base_url: {base}
    headers: {{ X-Shop-Fault: \"latency=5000\" }}
steps:
  - {{ id: b1, type: branch, if: {{ ref: \"$.inputs.go\" }}, then: [b2] }}
  - {{ id: b2, type: branch, if: {{ ref: \"$.inputs.go\" }}, then: [b3] }}
  - {{ id: b3, type: branch, if: {{ ref: \"$.inputs.go\" }}, then: [slow] }}
  - {{ id: slow, tool: shop.listOrders, input: {{ per_page: 5 }} }}
",
            dragnet_shop::openapi_path().display()
        ),
    )
    .unwrap();
    file
}

#[tokio::test(flavor = "multi_thread")]
async fn step_lines_keep_their_order_and_are_out_while_a_step_waits() {
    let shop = Arc::new(shop().await);
    let file = workflow(shop.base_url());
    let served = shop.clone();
    let lines = tokio::task::spawn_blocking(move || {
        let mut child = common::command(&fresh_db())
            .arg("run")
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = Vec::new();
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        for line in stderr.by_ref() {
            let line = line.unwrap();
            let slow_started = line == "slow: started";
            lines.push(line);
            if slow_started {
                // The shop logs a request once it has answered, 5 s after
                // it came: a line held until the step's first progress (or
                // the run's end) would come after the answer.
                let answered = served.requests().iter().any(|r| r.path == "/orders");
                lines.push(format!("(the request was answered: {answered})"));
                break;
            }
        }
        lines.extend(stderr.map(Result::unwrap));
        // One page of twenty, not walked further: a partial run.
        assert_eq!(child.wait().unwrap().code(), Some(3), "{lines:#?}");
        lines
    })
    .await
    .unwrap();
    let steps: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| !l.contains("page ") && !l.starts_with("run "))
        .collect();
    assert_eq!(
        steps,
        [
            "b1: started",
            "b1: succeeded",
            "b2: started",
            "b2: succeeded",
            "b3: started",
            "b3: succeeded",
            "slow: started",
            "(the request was answered: false)",
            "slow: succeeded, PARTIAL (not_walked)",
        ],
        "{lines:#?}"
    );
}
