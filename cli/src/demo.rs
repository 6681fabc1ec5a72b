//! `dragnet demo`: starts the demo shop in-process on a free port and walks
//! every open order with a projection and a filter, showing progress and the
//! verdict. Needs no network and no services.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use dragnet_steps::http::{Credentials, HttpUpstream};
use dragnet_steps::looping::filter::Filter;
use dragnet_steps::looping::options::parse_fields;
use dragnet_steps::progress::TokioClock;
use dragnet_steps::{openapi, Limits, LoopOptions, Runtime, ToolCall};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::progress_line::ProgressLine;
use crate::{EXIT_COMPLETE, EXIT_PARTIAL};

const TOOL: &str = "listOrders";

pub async fn run() -> Result<u8> {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .context("cannot start the demo shop")?;
    let outcome = walk_open_orders(shop.base_url()).await;
    let requests = shop.requests().len();
    shop.shutdown().await;
    let (complete, summary) = outcome?;
    println!("{summary}");
    println!("The shop received {requests} requests.");
    Ok(if complete {
        EXIT_COMPLETE
    } else {
        EXIT_PARTIAL
    })
}

async fn walk_open_orders(base_url: &str) -> Result<(bool, String)> {
    let toolkit = openapi::import_str("examples/shop/openapi.yaml", dragnet_shop::OPENAPI_YAML)?;
    let tool = toolkit
        .tool(TOOL)
        .with_context(|| format!("the shop document has no `{TOOL}`"))?;
    let upstream = HttpUpstream::new(base_url, Credentials::None)?;
    let mut arguments = Map::new();
    arguments.insert("status".into(), json!("open"));
    let options = LoopOptions {
        all_pages: true,
        fields: Some(parse_fields(&json!([
            "id",
            "total",
            "created_at",
            "customer.name",
            "property_id"
        ]))?),
        filter: Filter::from_json(&json!([{"field": "total", "op": "gt", "value": 500}]))?,
        ..LoopOptions::default()
    };
    println!(
        "dragnet demo: walking every page of `{TOOL}` (status=open) on the demo shop at {base_url},\n\
         keeping orders over 500 and projecting id, total, created_at, customer.name, property_id."
    );
    let line = ProgressLine::start(TOOL);
    let runtime = Runtime {
        progress: &line,
        clock: Arc::new(TokioClock),
        cancel: CancellationToken::new(),
    };
    let call = ToolCall {
        tool,
        arguments,
        options,
        limits: Limits::default(),
    };
    let result = dragnet_steps::execute(call, &upstream, &runtime).await;
    line.finish();
    let result = result?;
    let v = &result.verdict;
    let rows = result.visible_items();
    let mut summary = String::new();
    summary.push_str("First rows:\n");
    for item in rows.iter().take(5) {
        summary.push_str(&format!("  {}\n", item.get()));
    }
    let sum: f64 = rows
        .iter()
        .filter_map(|r| serde_json::from_str::<Value>(r.get()).ok())
        .filter_map(|r| r.get("total").and_then(Value::as_f64))
        .sum();
    summary.push_str(&format!(
        "{} of {} open orders are over 500",
        rows.len(),
        v.item_count
    ));
    if v.complete {
        summary.push_str(&format!("; together they total {sum:.2}.\n"));
    } else {
        summary.push_str(" so far (partial: no total is given for a partial set).\n");
    }
    summary.push_str(&format!(
        "Verdict: {} — {}",
        if v.complete { "complete" } else { "PARTIAL" },
        v.note
    ));
    Ok((v.complete, summary))
}
