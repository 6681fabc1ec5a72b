//! The cache suite: a cache hit of a whole walk against the live walk of
//! the same data from an upstream that takes 20 ms per page, on both store
//! backends (SQLite in a temp file, PostgreSQL in a schema created for the
//! run and dropped after it).
//!
//! The walk is `listOrdersOData` with `{"$top": 250}` and every page: all
//! 6,000 orders of the demo shop, 24 full pages (the declared
//! `@odata.count` proves the end, so no empty page is asked for since
//! issue 7: 24 requests), each delayed 20 ms by the shop's
//! `X-Shop-Fault: latency=20`. The shop has no `$filter` that keeps about
//! 5,000 orders (`status` keeps about a third), so the whole set stands for
//! the 5,000-item dataset; the verdict is complete, so the walk is
//! stored.
//!
//! Each backend gets the same interleaved runs, after warm-ups. A run:
//! the entry is purged (not timed); the **live walk** is one
//! `dragnet_walk::execute` with the cache on: a miss, the 25 pages, then
//! the complete set encoded, compressed and written; the **hit** is the same
//! call again: read, decompressed, rebuilt from the stored item offsets
//! (older builds split the stored body again) and shaped like a fresh walk,
//! with no request to the shop. Every run checks both (complete verdict,
//! stored, 24 requests reached the shop; a hit, 6,000 items, no request).
//! The baseline, in the same process: the same hit once more after the
//! entry was rewritten as builds before layout 3 stored it (layout 2, one
//! JSON text split again on reading, zlib), so "before" and "after" are
//! paired run by run. For context, each run also walks once without any cache, which shows
//! what storing costs, and times the hit's two big parts on their own: the
//! store's read (query plus decompression) and the decode.
//!
//! When PostgreSQL cannot be reached the suite says so, with the store's
//! reason, and reports SQLite alone.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, ensure, Context, Result};
use dragnet_core::clock::{Clock, SystemClock};
use dragnet_core::ports::cache::{CacheEntry, CacheMode, CacheStore};
use dragnet_core::secret::Secret;
use dragnet_core::{Limits, Tool};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_shop::{OrderStatus, ShopHandle};
use dragnet_store::{testing, Db};
use dragnet_walk::cache::{stored, CachePolicy, CacheScope};
use dragnet_walk::{execute, LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;

use crate::measure::{paired_ratios, sample_async, Sample, Series, Spread};
use crate::{report, Measure, Mode};

const TOOL: &str = "listOrdersOData";
const TOOL_ID: &str = "shop.listOrdersOData";
/// The upstream's delay per page.
pub const LATENCY_MS: u64 = 20;
pub const PAGE_SIZE: u64 = 250;
/// The speed-up a hit should give over the live walk in one process
/// (issue 8; a whole `dragnet run` process is to reach 50x).
pub const TARGET_RATIO: f64 = 100.0;

/// What is walked.
#[derive(Debug, Clone, Copy)]
pub struct Dataset {
    /// `status` argument, if any.
    pub status: Option<OrderStatus>,
    /// Orders the walk should keep.
    pub items: usize,
    /// Requests a complete walk takes (the last page is short or empty).
    pub requests: u32,
}

impl Dataset {
    pub fn new(mode: Mode) -> Dataset {
        // A smoke run walks the cancelled orders only (three pages).
        let status = match mode {
            Mode::Full => None,
            Mode::Smoke => Some(OrderStatus::Cancelled),
        };
        let items = dragnet_shop::dataset()
            .orders()
            .iter()
            .filter(|o| status.is_none_or(|s| o.status == s))
            .count();
        Dataset {
            status,
            items,
            // The declared total ends the walk on its last item.
            requests: (items as u64).div_ceil(PAGE_SIZE).max(1) as u32,
        }
    }

    fn arguments(&self) -> Result<Map<String, Value>> {
        let mut args = json!({"$top": PAGE_SIZE});
        if let (Some(s), Some(map)) = (self.status, args.as_object_mut()) {
            map.insert("status".into(), json!(s.as_str()));
        }
        match args {
            Value::Object(map) => Ok(map),
            _ => Err(anyhow!("arguments must be an object")),
        }
    }
}

/// What every backend's runs share (owned, so it can move into the
/// store harness's task).
struct Work {
    shop: Arc<ShopHandle>,
    tool: Tool,
    upstream: HttpUpstream,
    dataset: Dataset,
    measure: Measure,
    warmup: usize,
    runs: usize,
}

/// The samples and facts of one backend.
#[derive(Default)]
struct Outcome {
    /// Walk without a cache (context).
    uncached: Series,
    /// Live walk with the cache on: miss, walk, store.
    live: Series,
    hit: Series,
    /// The same hit served from the entry as builds before layout 3 stored
    /// it (layout 2, zlib): the baseline, in the same process.
    old_hit: Series,
    old_stored_bytes: u64,
    /// The hit's parts on their own: store read (query + decompression), decode.
    read_ms: Vec<f64>,
    decode_ms: Vec<f64>,
    items: u64,
    payload_bytes: usize,
    stored_bytes: u64,
    verdict: String,
}

/// Runs the suite on its own tokio runtime and prints its lines.
pub fn run(mode: Mode, measure: Measure) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(bench(mode, measure))
}

async fn bench(mode: Mode, measure: Measure) -> Result<()> {
    let (warmup, runs) = measure.runs(mode);
    let dataset = Dataset::new(mode);
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let toolkit = dragnet_openapi::import_file(&dragnet_shop::openapi_path())?;
    let tool = toolkit
        .tool(TOOL)
        .context("the shop document lacks the tool")?
        .clone();
    let upstream = HttpUpstream::new(shop.base_url(), Credentials::None)?
        .with_header("X-Shop-Fault", Secret::new(format!("latency={LATENCY_MS}")));
    let work = Arc::new(Work {
        shop: Arc::new(shop),
        tool,
        upstream,
        dataset,
        measure,
        warmup,
        runs,
    });

    report::header(&format!(
        "cache: a hit vs the live walk, {LATENCY_MS} ms per page, SQLite and PostgreSQL ({})",
        measure.label()
    ));
    report::info("upstream", "demo shop, in process, 2 tokio workers");
    let what = format!(
        "{TOOL} $top={PAGE_SIZE}{}, every page: {} items, {} requests",
        dataset
            .status
            .map_or(String::new(), |s| format!(" status={}", s.as_str())),
        dataset.items,
        dataset.requests
    );
    report::info("walk", &what);
    let plan = format!("{warmup} warm-up + {runs} measured, interleaved, per backend");
    report::info("runs", &plan);

    let sqlite = on_backend(work.clone(), Backend::Sqlite).await?;
    print_backend("sqlite", &sqlite, mode, measure)?;

    let url = testing::postgres_url();
    match Db::connect(&url).await {
        Err(e) => {
            report::result("postgres", "UNREACHABLE: not measured, SQLite only");
            report::info("postgres: reason", &e.to_string());
        }
        Ok(probe) => {
            probe.close().await;
            let postgres = on_backend(work.clone(), Backend::Postgres).await?;
            print_backend("postgres", &postgres, mode, measure)?;
        }
    }
    match Arc::try_unwrap(work) {
        Ok(work) => match Arc::try_unwrap(work.shop) {
            Ok(shop) => shop.shutdown().await,
            Err(_) => bail!("the shop is still shared"),
        },
        Err(_) => bail!("the work is still shared"),
    }
    if mode == Mode::Smoke {
        report::smoke();
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// Runs the backend's runs in a fresh store from the store's own test
/// harness: a SQLite file in a temp folder, or a PostgreSQL schema created
/// and dropped around the runs.
async fn on_backend(work: Arc<Work>, backend: Backend) -> Result<Outcome> {
    let (tx, rx) = oneshot::channel::<Result<Outcome>>();
    let body = move |db: Db| async move {
        let _ = tx.send(runs(&work, db).await);
        Ok(())
    };
    match backend {
        Backend::Sqlite => testing::on_sqlite(body).await,
        Backend::Postgres => testing::on_postgres(body).await,
    }
    rx.await
        .context("the backend's runs ended without a result")?
}

async fn runs(work: &Work, db: Db) -> Result<Outcome> {
    let heap = work.measure.heap();
    let policy = CachePolicy {
        store: Arc::new(db.cache()),
        mode: CacheMode::On,
        scope: CacheScope::Organisation {
            org: "bench".into(),
        },
        ttl: Duration::from_secs(3600),
        tool_id: TOOL_ID.into(),
        read: true,
        clock: Arc::new(SystemClock),
    };
    let mut out = Outcome::default();
    for run in 0..work.warmup + work.runs {
        let measured = run >= work.warmup;
        work.shop.clear_requests();
        let (uncached, u) = sample_async(heap, call(work, None)).await;
        check_live(work, &uncached?, false)?;

        db.cache().cache_purge(None).await?;
        work.shop.clear_requests();
        let (live, l) = sample_async(heap, call(work, Some(&policy))).await;
        let live = live?;
        check_live(work, &live, true)?;

        work.shop.clear_requests();
        let (hit, h) = sample_async(heap, call(work, Some(&policy))).await;
        let hit = hit?;
        let label = hit
            .cache
            .as_ref()
            .context("the second call has no cache label")?;
        ensure!(label.hit, "the second call was not a hit");
        ensure!(hit.payload.items().len() == work.dataset.items);
        ensure!(hit.verdict.complete && hit.verdict.requests == 0);
        let seen = work.shop.requests().len();
        ensure!(seen == 0, "the hit sent {seen} requests to the shop");

        let listing = db.cache().cache_list().await?;
        ensure!(listing.len() == 1, "one entry is stored");
        let entry = &listing[0];
        let (read, r) = sample_async(None, async {
            db.cache()
                .get(&entry.scope, &entry.key, SystemClock.now())
                .await
        })
        .await;
        let read = read
            .map_err(|e| anyhow!("{e}"))?
            .context("the entry is there")?;
        let payload = read.payload.clone();
        let (decoded, d) = sample_async(None, async { stored::decode(payload) }).await;
        ensure!(decoded.context("the entry decodes")?.items().len() == work.dataset.items);

        // The baseline: the same entry as the previous layout and codec.
        let old = CacheEntry {
            payload: stored::encode_layout2(&live.payload),
            ..read
        };
        db.cache().cache_put_zlib(&old).await?;
        work.shop.clear_requests();
        let (old_hit, o) = sample_async(heap, call(work, Some(&policy))).await;
        let old_hit = old_hit?;
        ensure!(
            old_hit.cache.as_ref().is_some_and(|c| c.hit),
            "the old entry was not a hit"
        );
        ensure!(old_hit.payload.items().len() == work.dataset.items);
        ensure!(
            work.shop.requests().is_empty(),
            "the old entry's hit sent requests"
        );

        if measured {
            out.uncached.push(u);
            out.live.push(l);
            out.hit.push(h);
            out.old_hit.push(o);
            out.read_ms.push(millis(r));
            out.decode_ms.push(millis(d));
        }
        if run == 0 {
            out.items = entry.items;
            out.stored_bytes = entry.stored_bytes;
            out.payload_bytes = stored::encode(&live.payload).len();
            out.old_stored_bytes = db
                .cache()
                .cache_list()
                .await?
                .first()
                .map_or(0, |e| e.stored_bytes);
            let v = &live.verdict;
            out.verdict = format!(
                "complete={} requests={} items={} stoppedBy={}",
                v.complete,
                v.requests,
                v.item_count,
                v.stopped_by.map_or("-", |r| r.as_str())
            );
        }
    }
    Ok(out)
}

fn millis(s: Sample) -> f64 {
    s.time.as_secs_f64() * 1e3
}

/// One call of the walk, with or without the cache. The shop's request
/// log is cleared by the caller, outside the section.
async fn call(work: &Work, policy: Option<&CachePolicy>) -> Result<LoopResult> {
    let call = ToolCall {
        tool: &work.tool,
        arguments: work.dataset.arguments()?,
        options: LoopOptions {
            all_pages: true,
            ..LoopOptions::default()
        },
        limits: Limits {
            max_items: work.dataset.items + 1000,
            max_pages: work.dataset.requests + 10,
            ..Limits::default()
        },
        cache: policy.cloned(),
    };
    Ok(execute(call, &work.upstream, &Runtime::quiet()).await?)
}

/// A live walk fetched everything, completely, and (with a cache) stored it.
fn check_live(work: &Work, result: &LoopResult, cached: bool) -> Result<()> {
    let v = &result.verdict;
    let seen = work.shop.requests().len();
    ensure!(
        v.complete,
        "the walk is not complete ({}), so it is not stored",
        v.note
    );
    ensure!(
        v.requests == work.dataset.requests && seen == work.dataset.requests as usize,
        "the walk sent {} requests ({seen} reached the shop), not {}",
        v.requests,
        work.dataset.requests
    );
    ensure!(result.payload.items().len() == work.dataset.items);
    if cached {
        let label = result.cache.as_ref().context("no cache label")?;
        ensure!(!label.hit && label.stored, "the live walk was not stored");
    }
    Ok(())
}

fn print_backend(name: &str, out: &Outcome, mode: Mode, measure: Measure) -> Result<()> {
    let label = |what: &str| format!("{name}: {what}");
    report::info(&label("verdict of the live walk"), &out.verdict);
    let entry = format!(
        "{} items; {} bytes encoded, {} bytes stored ({:.1}x smaller)",
        out.items,
        out.payload_bytes,
        out.stored_bytes,
        out.payload_bytes as f64 / out.stored_bytes.max(1) as f64
    );
    report::result(&label("cache entry"), &entry);
    report::info(
        &label("as stored before (layout 2, zlib)"),
        &format!("{} bytes stored", out.old_stored_bytes),
    );
    let ratio = paired_ratios(&out.live, &out.hit).context("no runs")?;
    match measure {
        Measure::Time => {
            let ut = out.uncached.millis().context("no runs")?;
            let lt = out.live.millis().context("no runs")?;
            let ht = out.hit.millis().context("no runs")?;
            report::info(&label("live runs (ms)"), &report::runs(&out.live));
            report::info(&label("hit runs (ms)"), &report::runs(&out.hit));
            report::result(
                &label("live walk (miss + store): time"),
                &report::millis(&lt),
            );
            report::result(&label("cache hit: time"), &report::millis(&ht));
            report::result(&label("live/hit (speed-up)"), &report::ratio(&ratio));
            let old = out.old_hit.millis().context("no runs")?;
            report::info(
                &label("old-entry hit runs (ms)"),
                &report::runs(&out.old_hit),
            );
            report::result(
                &label("baseline: old-entry hit: time"),
                &report::millis(&old),
            );
            let old_ratio = paired_ratios(&out.live, &out.old_hit).context("no runs")?;
            report::result(
                &label("baseline: live/old-entry hit"),
                &report::ratio(&old_ratio),
            );
            let gain = paired_ratios(&out.old_hit, &out.hit).context("no runs")?;
            report::result(&label("old-entry hit/hit"), &report::ratio(&gain));
            report::info(&label("walk without a cache: time"), &report::millis(&ut));
            let store: Vec<f64> = out
                .live
                .samples
                .iter()
                .zip(&out.uncached.samples)
                .map(|(l, u)| (l.time.as_secs_f64() - u.time.as_secs_f64()) * 1e3)
                .collect();
            if let Some(s) = Spread::of(&store) {
                report::info(&label("  storing: live - uncached"), &report::millis(&s));
            }
            let uncached_ratio = paired_ratios(&out.uncached, &out.hit).context("no runs")?;
            report::info(&label("uncached walk/hit"), &report::ratio(&uncached_ratio));
            if let Some(s) = Spread::of(&out.read_ms) {
                report::info(
                    &label("  hit part: store read + inflate"),
                    &report::millis(&s),
                );
            }
            if let Some(s) = Spread::of(&out.decode_ms) {
                report::info(&label("  hit part: decode"), &report::millis(&s));
            }
            if mode == Mode::Full {
                report::target(
                    &label("live/hit (per-run median)"),
                    &format!("{:.1}x", ratio.median),
                    &format!(">= {TARGET_RATIO:.0}x"),
                    ratio.median >= TARGET_RATIO,
                );
            }
        }
        Measure::Heap(_) => {
            let payload = out.payload_bytes as f64;
            let line = |peak: f64| {
                format!(
                    "{} = {:.2}x the encoded payload",
                    report::mb(peak),
                    peak / payload
                )
            };
            let up = out.uncached.peaks().context("no runs")?.median;
            let lp = out.live.peaks().context("no runs")?.median;
            let hp = out.hit.peaks().context("no runs")?.median;
            report::result(&label("live walk heap peak"), &line(lp));
            report::result(&label("cache hit heap peak"), &line(hp));
            report::info(&label("walk without a cache: heap peak"), &line(up));
            let counted = format!("{:.1}x (counting slows allocation)", ratio.median);
            report::info(&label("live/hit here, not judged"), &counted);
        }
    }
    Ok(())
}
