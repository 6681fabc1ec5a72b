//! Walk benchmark: dragnet walking 20 pages × 250 orders of the demo shop's
//! OData endpoint (`listOrdersOData`, `$top`/`$skip`) through
//! `dragnet_steps::execute`, against a plain sequential reqwest loop over the
//! same 20 URLs that reads each body to bytes and keeps the bytes (no JSON
//! parsing at all: the baseline is the fetch alone).
//!
//! A third, informational side runs the same fetch loop plus dragnet's own
//! per-page JSON passes (lazy root, collection, split, keep), without the
//! walk's machinery, to show how the walk's extra time divides between JSON
//! work and everything else.
//!
//! The shop runs in this process on a 2-worker tokio runtime, so both sides
//! share its serving cost, and its per-request allocations show in both
//! sides' heap peaks (the peak of one page fetched and dropped is printed
//! for scale). The sides are interleaved after a warm-up; the median of the
//! per-run time ratios and each side's median heap peak are printed.
#![forbid(unsafe_code)]

use std::alloc::System;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context, Result};
use dragnet_bench::measure::{paired_ratios, sample_async, Series, Spread};
use dragnet_bench::{report, Mode};
use dragnet_steps::http::{Credentials, HttpUpstream};
use dragnet_steps::json::RawItem;
use dragnet_steps::looping::collection::{self, Declared};
use dragnet_steps::{execute, openapi, Limits, LoopOptions, LoopResult, Runtime, Tool, ToolCall};
use peakmem_alloc::PeakMemAlloc;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

#[global_allocator]
static HEAP: PeakMemAlloc<System> = PeakMemAlloc::new(System);

const TOOL: &str = "listOrdersOData";

/// Pages and page size of one side's work.
#[derive(Clone, Copy)]
struct Shape {
    pages: u32,
    size: u32,
}

fn main() -> Result<()> {
    let mode = Mode::from_args(std::env::args());
    let shape = match mode {
        Mode::Full => Shape {
            pages: 20,
            size: 250,
        },
        Mode::Smoke => Shape { pages: 2, size: 50 },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(bench(mode, shape))
}

async fn bench(mode: Mode, shape: Shape) -> Result<()> {
    let (warmup, runs) = mode.runs();
    let addr: SocketAddr = "127.0.0.1:0".parse()?;
    let shop = dragnet_shop::start(addr).await?;
    let base = shop.base_url().to_string();
    let toolkit = openapi::import_file(&dragnet_shop::openapi_path())?;
    let tool = toolkit
        .tool(TOOL)
        .context("the shop document lacks listOrdersOData")?;
    let upstream = HttpUpstream::new(&base, Credentials::None)?;
    let client = reqwest::Client::builder().build()?;
    let urls: Vec<String> = (0..shape.pages)
        .map(|p| {
            let skip = p * shape.size;
            format!("{base}/odata/orders?$top={}&$skip={skip}", shape.size)
        })
        .collect();
    let quiet = Runtime::quiet();

    report::header(&format!(
        "walk: {} pages x {} orders, dragnet execute vs a plain fetch loop",
        shape.pages, shape.size
    ));
    report::info("upstream", "demo shop, in process, 2 tokio workers");
    report::info(
        "runs",
        &format!("{warmup} warm-up + {runs} measured, interleaved"),
    );

    let mut base_series = Series::default();
    let mut ours = Series::default();
    let mut split_series = Series::default();
    let mut json_times: Vec<f64> = Vec::new();
    let items_path = tool.response_items_path.clone().unwrap_or_default();
    let mut raw_bytes = 0usize;
    let mut last: Option<LoopResult> = None;
    for run in 0..warmup + runs {
        shop.clear_requests();
        let (kept, b) = sample_async(&HEAP, fetch_loop(&client, &urls)).await;
        let kept = kept?;
        raw_bytes = kept.iter().map(|body| body.as_ref().len()).sum();
        drop(kept);
        shop.clear_requests();
        let (result, d) = sample_async(&HEAP, walk(tool, &upstream, &quiet, shape)).await;
        let result = result?;
        let seen = shop.requests().len();
        ensure!(
            result.verdict.requests == shape.pages && seen == shape.pages as usize,
            "the walk sent {} requests ({seen} reached the shop), not {}",
            result.verdict.requests,
            shape.pages
        );
        ensure!(result.payload.items().len() == (shape.pages * shape.size) as usize);
        let (items, s) = sample_async(&HEAP, fetch_and_split(&client, &urls, &items_path)).await;
        let (items, json_time) = items?;
        ensure!(items.len() == result.payload.items().len());
        drop(items);
        if run >= warmup {
            base_series.push(b);
            ours.push(d);
            split_series.push(s);
            json_times.push(json_time.as_secs_f64() * 1e3);
        }
        last = Some(result);
    }
    let result = last.context("no runs")?;
    let one_page = urls.first().context("no pages")?;
    let (single, one) =
        sample_async(&HEAP, fetch_loop(&client, std::slice::from_ref(one_page))).await;
    drop(single?);
    shop.shutdown().await;

    let bt = base_series.millis().context("no baseline runs")?;
    let dt = ours.millis().context("no dragnet runs")?;
    let bp = base_series.peaks().context("no baseline runs")?;
    let dp = ours.peaks().context("no dragnet runs")?;
    let st = split_series.millis().context("no runs")?;
    let slowdown = paired_ratios(&ours, &base_series).context("no runs")?;
    let split_ratio = paired_ratios(&split_series, &base_series).context("no runs")?;
    let raw = raw_bytes as f64;
    let v = &result.verdict;
    report::info(
        "verdict",
        &format!(
            "complete={} requests={} items={} stoppedBy={}",
            v.complete,
            v.requests,
            v.item_count,
            v.stopped_by.map_or("-", |r| r.as_str())
        ),
    );
    report::info("note", &v.note);
    report::info("raw bytes fetched (per side)", &report::mb(raw));
    report::info(
        "heap peak of one page fetched (shop + client)",
        &format!(
            "{} = {:.2}x raw bytes",
            report::mb(one.peak as f64),
            one.peak as f64 / raw
        ),
    );
    report::info("baseline runs (ms)", &report::runs(&base_series));
    report::info("dragnet runs (ms)", &report::runs(&ours));
    report::result("baseline fetch loop: time", &report::millis(&bt));
    report::result("dragnet walk: time", &report::millis(&dt));
    report::result("dragnet/baseline time", &report::ratio(&slowdown));
    report::info("fetch loop + JSON passes: time", &report::millis(&st));
    report::info(
        "fetch loop + JSON passes / baseline",
        &report::ratio(&split_ratio),
    );
    if let Some(j) = Spread::of(&json_times) {
        report::info("  of which the JSON passes alone", &report::millis(&j));
    }
    report::result(
        "baseline heap peak (keeps the bodies)",
        &format!(
            "{} = {:.2}x raw bytes",
            report::mb(bp.median),
            bp.median / raw
        ),
    );
    report::result(
        "dragnet heap peak",
        &format!(
            "{} = {:.2}x raw bytes",
            report::mb(dp.median),
            dp.median / raw
        ),
    );
    if mode == Mode::Smoke {
        report::smoke();
        return Ok(());
    }
    report::target(
        "dragnet/baseline time (per-run median)",
        &format!("{:.2}x", slowdown.median),
        "<= 1.10x",
        slowdown.median <= 1.10,
    );
    report::target(
        "dragnet heap peak / raw bytes",
        &format!("{:.2}x", dp.median / raw),
        "<= 3.00x",
        dp.median / raw <= 3.0,
    );
    Ok(())
}

/// dragnet's walk: `listOrdersOData` with `$top`, every page, bounded to
/// exactly `pages` pages.
async fn walk(
    tool: &Tool,
    upstream: &HttpUpstream,
    runtime: &Runtime<'_>,
    shape: Shape,
) -> Result<LoopResult> {
    let arguments: Map<String, Value> = match json!({"$top": shape.size}) {
        Value::Object(map) => map,
        _ => return Err(anyhow!("arguments are an object")),
    };
    let call = ToolCall {
        tool,
        arguments,
        options: LoopOptions {
            all_pages: true,
            ..LoopOptions::default()
        },
        limits: Limits {
            max_items: (shape.pages * shape.size) as usize,
            max_pages: shape.pages,
            ..Limits::default()
        },
    };
    Ok(execute(call, upstream, runtime).await?)
}

/// The baseline: each URL in turn, body read to bytes and kept.
async fn fetch_loop(client: &reqwest::Client, urls: &[String]) -> Result<Vec<impl AsRef<[u8]>>> {
    let mut bodies = Vec::with_capacity(urls.len());
    for url in urls {
        let response = client.get(url).send().await?.error_for_status()?;
        bodies.push(response.bytes().await?);
    }
    Ok(bodies)
}

/// The baseline loop plus dragnet's per-page JSON passes: the collection
/// located on page one (as the schema declares it), every page split and its
/// items copied out, each page dropped after. Also returns the time spent in
/// those passes alone.
async fn fetch_and_split(
    client: &reqwest::Client,
    urls: &[String],
    declared: &[String],
) -> Result<(Vec<RawItem>, Duration)> {
    let mut items: Vec<RawItem> = Vec::new();
    let mut path = None;
    let mut json_time = Duration::ZERO;
    for url in urls {
        let response = client.get(url).send().await?.error_for_status()?;
        let body = response.bytes().await?;
        let start = Instant::now();
        let root: &RawValue = serde_json::from_str(std::str::from_utf8(&body)?)?;
        if path.is_none() {
            path = collection::locate(root, None, Declared::At(declared));
        }
        let at = path.as_deref().context("no collection")?;
        let page = collection::split(root, at).context("collection missing")?;
        items.reserve(page.items.len());
        items.extend(page.items.iter().map(|item| (*item).to_owned()));
        json_time += start.elapsed();
    }
    Ok((items, json_time))
}
