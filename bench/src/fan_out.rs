//! The fan-out suite: `_for_each` over 30 of the demo shop's properties,
//! 3 pages of 20 orders each (`listPropertyOrders`, `max_pages: 3`), every
//! page answered after 20 ms (`X-Shop-Fault: latency=20`, a distant API),
//! walked with concurrency 4 against the same call with concurrency 1 (the
//! baseline, today's sequential fan-out) in the same process, interleaved.
//!
//! Every run checks that both sides sent exactly 90 requests and returned
//! the same rows in the same order. Only time is measured: the sides hold
//! the same rows, and the heap suites cover the walk's memory.

use std::net::SocketAddr;

use anyhow::{anyhow, ensure, Context, Result};
use dragnet_core::secret::Secret;
use dragnet_core::{Limits, Tool};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::options::{Concurrency, ForEachSpec};
use dragnet_walk::{execute, LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::{json, Value};

use crate::measure::{paired_ratios, sample_async, Series};
use crate::{report, Mode};

const TOOL: &str = "listPropertyOrders";

/// The work: values, pages per value, page size, upstream latency, and the
/// concurrency measured.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub values: u32,
    pub pages: u32,
    pub size: u32,
    pub latency_ms: u32,
    pub concurrency: u64,
}

impl Shape {
    pub fn new(mode: Mode) -> Shape {
        match mode {
            Mode::Full => Shape {
                values: 30,
                pages: 3,
                size: 20,
                latency_ms: 20,
                concurrency: 4,
            },
            Mode::Smoke => Shape {
                values: 4,
                pages: 2,
                size: 5,
                latency_ms: 1,
                concurrency: 4,
            },
        }
    }
}

/// Runs the suite on its own tokio runtime and prints its lines.
pub fn run(mode: Mode) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(bench(mode, Shape::new(mode)))
}

async fn bench(mode: Mode, shape: Shape) -> Result<()> {
    let (warmup, runs) = crate::Measure::Time.runs(mode);
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let toolkit = dragnet_openapi::import_file(&dragnet_shop::openapi_path())?;
    let tool = toolkit
        .tool(TOOL)
        .context("the shop document lacks the tool")?;
    let fault = format!("latency={}", shape.latency_ms);
    let quiet = Runtime::quiet();

    report::header(&format!(
        "fan-out: {} values x {} pages at {} ms latency, concurrency {} vs 1 (timing run)",
        shape.values, shape.pages, shape.latency_ms, shape.concurrency
    ));
    report::info("upstream", "demo shop, in process, 2 tokio workers");
    let plan = format!("{warmup} warm-up + {runs} measured, interleaved");
    report::info("runs", &plan);

    let mut sequential = Series::default();
    let mut concurrent = Series::default();
    let mut last: Option<LoopResult> = None;
    for run in 0..warmup + runs {
        // A fresh upstream per side and run: no pacing state carried over.
        let upstream = || {
            HttpUpstream::new(shop.base_url(), Credentials::None)
                .map(|u| u.with_header("X-Shop-Fault", Secret::new(fault.clone())))
        };
        let (one, many) = (upstream()?, upstream()?);
        shop.clear_requests();
        let (seq, s) = sample_async(None, fan(tool, &one, &quiet, shape, 1)).await;
        let seq = seq?;
        check(&seq, shop.requests().len(), shape)?;
        shop.clear_requests();
        let (conc, c) =
            sample_async(None, fan(tool, &many, &quiet, shape, shape.concurrency)).await;
        let conc = conc?;
        check(&conc, shop.requests().len(), shape)?;
        let rows = |r: &LoopResult| -> Vec<String> {
            r.payload.items().iter().map(str::to_string).collect()
        };
        ensure!(
            rows(&conc) == rows(&seq),
            "concurrency {} returned other rows than concurrency 1",
            shape.concurrency
        );
        ensure!(conc.verdict == seq.verdict, "the verdicts differ");
        if run >= warmup {
            sequential.push(s);
            concurrent.push(c);
        }
        last = Some(conc);
    }
    shop.shutdown().await;
    let result = last.context("no runs")?;
    let v = &result.verdict;
    let verdict = format!(
        "complete={} requests={} items={} stoppedBy={}",
        v.complete,
        v.requests,
        v.item_count,
        v.stopped_by.map_or("-", |r| r.as_str())
    );
    report::info("verdict (both sides)", &verdict);
    let speedup = paired_ratios(&sequential, &concurrent).context("no runs")?;
    let st = sequential.millis().context("no runs")?;
    let ct = concurrent.millis().context("no runs")?;
    report::info("concurrency 1 runs (ms)", &report::runs(&sequential));
    report::info(
        &format!("concurrency {} runs (ms)", shape.concurrency),
        &report::runs(&concurrent),
    );
    report::result("concurrency 1 (baseline): time", &report::millis(&st));
    report::result(
        &format!("concurrency {}: time", shape.concurrency),
        &report::millis(&ct),
    );
    report::result("speed-up (baseline/concurrent)", &report::ratio(&speedup));
    if mode == Mode::Full {
        report::target(
            "speed-up (per-run median)",
            &format!("{:.2}x", speedup.median),
            ">= 3.50x",
            speedup.median >= 3.5,
        );
    } else {
        report::smoke();
    }
    Ok(())
}

/// Both sides: every value walked, exactly `pages` pages each.
fn check(result: &LoopResult, seen: usize, shape: Shape) -> Result<()> {
    let want = shape.values * shape.pages;
    ensure!(
        result.verdict.requests == want && seen == want as usize,
        "the fan-out sent {} requests ({seen} reached the shop), not {want}",
        result.verdict.requests
    );
    ensure!(
        result.payload.items().len() == (want * shape.size) as usize,
        "every page full"
    );
    ensure!(result.for_each_errors.is_empty(), "no value failed");
    Ok(())
}

/// The call: properties 1..=values, `pages` pages of `size` orders each.
async fn fan(
    tool: &Tool,
    upstream: &HttpUpstream,
    runtime: &Runtime<'_>,
    shape: Shape,
    concurrency: u64,
) -> Result<LoopResult> {
    let Value::Object(arguments) = json!({"per_page": shape.size}) else {
        return Err(anyhow!("arguments must be an object"));
    };
    let values: Vec<Value> = (1..=shape.values).map(Value::from).collect();
    let call = ToolCall {
        tool,
        arguments,
        options: LoopOptions {
            all_pages: true,
            for_each: Some(ForEachSpec {
                key: "property_id".into(),
                values,
                concurrency: Concurrency::new(concurrency)?,
            }),
            ..LoopOptions::default()
        },
        limits: Limits {
            max_pages: shape.pages,
            max_requests: shape.values * shape.pages,
            ..Limits::default()
        },
        cache: None,
    };
    Ok(execute(call, upstream, runtime).await?)
}
