//! The walk suite: dragnet walking 20 pages × 250 orders of the demo shop's
//! OData endpoint (`listOrdersOData`, `$top`/`$skip`) through
//! `dragnet_walk::execute`, against a plain sequential reqwest loop over the
//! same 20 URLs that reads each body to bytes and keeps the bytes (no JSON
//! parsing at all: the baseline is the fetch alone).
//!
//! A third side, shown for context, runs the same fetch loop plus dragnet's
//! own per-page JSON passes (lazy root, collection, split, keep) without the
//! walk's machinery, and reports the time of those passes alone: how the
//! walk's extra time divides between JSON work and everything else.
//!
//! The shop runs in this process on a 2-worker tokio runtime, so every side
//! shares its serving cost, and its per-request allocations show in every
//! side's heap peak (the peak of one page fetched and dropped is printed for
//! scale). Every run checks that the walk sent exactly 20 requests.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context, Result};
use dragnet_core::items::{ranges_of, Items};
use dragnet_core::{Limits, Tool};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::collection;
use dragnet_walk::collection::Declared;
use dragnet_walk::{execute, LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::measure::{paired_ratios, sample_async, Series, Spread};
use crate::{report, Measure, Mode};

const TOOL: &str = "listOrdersOData";

/// Pages and page size of the work.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub pages: u32,
    pub size: u32,
}

impl Shape {
    pub fn new(mode: Mode) -> Shape {
        match mode {
            Mode::Full => Shape {
                pages: 20,
                size: 250,
            },
            Mode::Smoke => Shape { pages: 2, size: 50 },
        }
    }
}

/// Runs the suite on its own tokio runtime and prints its lines.
pub fn run(mode: Mode, measure: Measure) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(bench(mode, measure, Shape::new(mode)))
}

async fn bench(mode: Mode, measure: Measure, shape: Shape) -> Result<()> {
    let (warmup, runs) = measure.runs(mode);
    let heap = measure.heap();
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let base = shop.base_url().to_string();
    let toolkit = dragnet_openapi::import_file(&dragnet_shop::openapi_path())?;
    let tool = toolkit
        .tool(TOOL)
        .context("the shop document lacks the tool")?;
    let items_path = tool.response_items_path.clone().unwrap_or_default();
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
        "walk: {} pages x {} orders, dragnet execute vs a plain fetch loop ({})",
        shape.pages,
        shape.size,
        measure.label()
    ));
    report::info("upstream", "demo shop, in process, 2 tokio workers");
    let plan = format!("{warmup} warm-up + {runs} measured, interleaved");
    report::info("runs", &plan);

    let mut plain = Series::default();
    let mut ours = Series::default();
    let mut split = Series::default();
    let mut json_ms: Vec<f64> = Vec::new();
    let mut raw_bytes = 0usize;
    let mut last: Option<LoopResult> = None;
    for run in 0..warmup + runs {
        let (kept, b) = sample_async(heap, fetch_loop(&client, &urls)).await;
        let kept = kept?;
        raw_bytes = kept.iter().map(|body| body.as_ref().len()).sum();
        drop(kept);
        shop.clear_requests();
        let (result, d) = sample_async(heap, walk(tool, &upstream, &quiet, shape)).await;
        let result = result?;
        let seen = shop.requests().len();
        ensure!(
            result.verdict.requests == shape.pages && seen == shape.pages as usize,
            "the walk sent {} requests ({seen} reached the shop), not {}",
            result.verdict.requests,
            shape.pages
        );
        let wanted = (shape.pages * shape.size) as usize;
        ensure!(result.payload.items().len() == wanted);
        let side = fetch_and_split(&client, &urls, &items_path);
        let (items, s) = sample_async(heap, side).await;
        let (items, json_time) = items?;
        ensure!(items.len() == wanted);
        drop(items);
        if run >= warmup {
            plain.push(b);
            ours.push(d);
            split.push(s);
            json_ms.push(json_time.as_secs_f64() * 1e3);
        }
        last = Some(result);
    }
    let result = last.context("no runs")?;
    let first = urls.first().context("no pages")?;
    let (single, one) = sample_async(heap, fetch_loop(&client, std::slice::from_ref(first))).await;
    drop(single?);
    shop.shutdown().await;

    let raw = raw_bytes as f64;
    let v = &result.verdict;
    let verdict = format!(
        "complete={} requests={} items={} stoppedBy={}",
        v.complete,
        v.requests,
        v.item_count,
        v.stopped_by.map_or("-", |r| r.as_str())
    );
    report::info("verdict", &verdict);
    report::info("note", &v.note);
    report::info("raw bytes fetched (per side)", &report::mb(raw));
    let slowdown = paired_ratios(&ours, &plain).context("no runs")?;
    match measure {
        Measure::Time => {
            let bt = plain.millis().context("no runs")?;
            let dt = ours.millis().context("no runs")?;
            let st = split.millis().context("no runs")?;
            let split_ratio = paired_ratios(&split, &plain).context("no runs")?;
            report::info("baseline runs (ms)", &report::runs(&plain));
            report::info("dragnet runs (ms)", &report::runs(&ours));
            report::result("baseline fetch loop: time", &report::millis(&bt));
            report::result("dragnet walk: time", &report::millis(&dt));
            report::result("dragnet/baseline time", &report::ratio(&slowdown));
            report::info("fetch loop + JSON passes: time", &report::millis(&st));
            report::info(
                "fetch loop + JSON passes / baseline",
                &report::ratio(&split_ratio),
            );
            if let Some(j) = Spread::of(&json_ms) {
                report::info("  of which the JSON passes alone", &report::millis(&j));
            }
            if mode == Mode::Full {
                report::target(
                    "dragnet/baseline time (per-run median)",
                    &format!("{:.2}x", slowdown.median),
                    "<= 1.10x",
                    slowdown.median <= 1.10,
                );
            }
        }
        Measure::Heap(_) => {
            let line = |peak: f64| format!("{} = {:.2}x raw bytes", report::mb(peak), peak / raw);
            let bp = plain.peaks().context("no runs")?.median;
            let dp = ours.peaks().context("no runs")?.median;
            let sp = split.peaks().context("no runs")?.median;
            report::info(
                "one page fetched and dropped (shop + client)",
                &line(one.peak as f64),
            );
            report::result("baseline heap peak (keeps the bodies)", &line(bp));
            report::result("dragnet heap peak", &line(dp));
            report::info("fetch loop + JSON passes: heap peak", &line(sp));
            let counted = format!("{:.2}x (counting slows allocation)", slowdown.median);
            report::info("dragnet/baseline time here, not judged", &counted);
            if mode == Mode::Full {
                let multiple = dp / raw;
                let measured = format!("{multiple:.2}x");
                report::target(
                    "dragnet heap peak / raw bytes",
                    &measured,
                    "<= 3.00x",
                    multiple <= 3.0,
                );
            }
        }
    }
    if mode == Mode::Smoke {
        report::smoke();
    }
    Ok(())
}

/// dragnet's walk: the tool with `$top`, every page, bounded to exactly
/// `pages` pages and `pages × size` items.
async fn walk(
    tool: &Tool,
    upstream: &HttpUpstream,
    runtime: &Runtime<'_>,
    shape: Shape,
) -> Result<LoopResult> {
    let Value::Object(arguments) = json!({"$top": shape.size}) else {
        return Err(anyhow!("arguments must be an object"));
    };
    let arguments: Map<String, Value> = arguments;
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
        cache: None,
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
/// located on page one (where the schema declares it), every page split and
/// each body kept with its items as ranges into it, as the walk keeps them.
/// Also returns the time spent in those passes alone.
async fn fetch_and_split(
    client: &reqwest::Client,
    urls: &[String],
    declared: &[String],
) -> Result<(Items, Duration)> {
    let mut items = Items::new();
    let mut path = None;
    let mut json_time = Duration::ZERO;
    for url in urls {
        let response = client.get(url).send().await?.error_for_status()?;
        let body = response.bytes().await?;
        let start = Instant::now();
        let text = String::from_utf8(Vec::from(body))?;
        let root: &RawValue = serde_json::from_str(&text)?;
        if path.is_none() {
            path = collection::locate(root, None, Declared::At(declared));
        }
        let at = path.as_deref().context("no collection")?;
        let page = collection::split(root, at).context("collection missing")?;
        let ranges = ranges_of(&text, &page.items);
        drop(page);
        items.keep_ranges(text, &ranges);
        json_time += start.elapsed();
    }
    Ok((items, json_time))
}
