//! Shape benchmark: one ~24 MB page of orders, filtered and projected the
//! way a walk does it (raw JSON, lazily), against the baseline of parsing
//! the same bytes into a `serde_json::Value` tree and nothing more.
//!
//! Both sides run in this process, interleaved, after a warm-up; the median
//! of the per-run time ratios and each side's heap peak (from a counting
//! global allocator, read around each section, so the input itself is not
//! counted) are printed. Freeing each side's result is outside its timing.
//! Before measuring, dragnet's rows are checked against the same filter and
//! projection computed on the `Value` tree. A per-pass breakdown of
//! dragnet's path follows, to show where its time goes.
#![forbid(unsafe_code)]

use std::alloc::System;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context, Result};
use dragnet_bench::measure::{paired_ratios, sample, Series, Spread};
use dragnet_bench::orders::{order_page, OrderPage};
use dragnet_bench::{report, Mode};
use dragnet_steps::json::RawItem;
use dragnet_steps::looping::collection::{self, Declared};
use dragnet_steps::looping::fields::Projection;
use dragnet_steps::looping::filter::Filter;
use dragnet_steps::looping::shape::shape;
use peakmem_alloc::PeakMemAlloc;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{json, Value};

#[global_allocator]
static HEAP: PeakMemAlloc<System> = PeakMemAlloc::new(System);

const FULL_BYTES: usize = 24_000_000;
const SMOKE_BYTES: usize = 200_000;
/// No explicit path and nothing declared by a schema: the heuristics find
/// `data`, as they would for an undocumented list endpoint.
const NO_SCHEMA: Declared = Declared::Unknown { list_like: true };
const FIELDS: [&str; 4] = ["id", "total", "customer.name", "lines.sku"];

/// What dragnet's path holds at the end: the kept raw items and the rows
/// the caller sees.
struct Kept {
    items: Vec<RawItem>,
    shaped: Vec<RawItem>,
}

fn main() -> Result<()> {
    let mode = Mode::from_args(std::env::args());
    let (warmup, runs) = mode.runs();
    let size = match mode {
        Mode::Full => FULL_BYTES,
        Mode::Smoke => SMOKE_BYTES,
    };
    let page = order_page(size)?;
    let filter = Filter::from_json(&json!([
        {"field": "status", "op": "eq", "value": "open"},
        {"field": "total", "op": "gt", "value": 100}
    ]))?;
    let paths: Vec<String> = FIELDS.iter().map(|s| s.to_string()).collect();
    let projection = Projection::new(&paths).map_err(|e| anyhow!(e))?;
    let input = page.bytes.len() as f64;

    report::header("shape: filter + project one page vs serde_json::Value parse");
    report::info(
        "input",
        &format!("{} ({} orders)", report::mb(input), page.items),
    );
    report::info("filter", "status eq open AND total gt 100");
    report::info("fields", &FIELDS.join(", "));
    report::info(
        "runs",
        &format!("{warmup} warm-up + {runs} measured, interleaved"),
    );

    let expected = check(&page, &filter, &projection)?;
    report::info(
        "rows after filter",
        &format!("{expected} of {}", page.items),
    );

    let mut base = Series::default();
    let mut ours = Series::default();
    for run in 0..warmup + runs {
        let (tree, b) = sample(&HEAP, || serde_json::from_slice::<Value>(&page.bytes));
        drop(tree?);
        let (kept, d) = sample(&HEAP, || dragnet_path(&page.bytes, &filter, &projection));
        let kept = kept?;
        ensure!(kept.shaped.len() == expected && kept.items.len() == page.items);
        drop(kept);
        if run >= warmup {
            base.push(b);
            ours.push(d);
        }
    }

    let bt = base.millis().context("no baseline runs")?;
    let dt = ours.millis().context("no dragnet runs")?;
    let bp = base.peaks().context("no baseline runs")?;
    let dp = ours.peaks().context("no dragnet runs")?;
    let speedup = paired_ratios(&base, &ours).context("no runs")?;
    report::info("baseline runs (ms)", &report::runs(&base));
    report::info("dragnet runs (ms)", &report::runs(&ours));
    report::result("baseline Value parse: time", &report::millis(&bt));
    report::result("dragnet path: time", &report::millis(&dt));
    report::result("baseline/dragnet time (speed-up)", &report::ratio(&speedup));
    report::result(
        "baseline heap peak",
        &format!(
            "{} = {:.2}x input",
            report::mb(bp.median),
            bp.median / input
        ),
    );
    report::result(
        "dragnet heap peak",
        &format!(
            "{} = {:.2}x input",
            report::mb(dp.median),
            dp.median / input
        ),
    );
    report::info(
        "peaks counting the input itself too",
        &format!(
            "baseline {:.2}x, dragnet {:.2}x",
            1.0 + bp.median / input,
            1.0 + dp.median / input
        ),
    );
    if mode == Mode::Full {
        report::target(
            "speed-up vs Value parse (per-run median)",
            &format!("{:.2}x", speedup.median),
            ">= 1.50x",
            speedup.median >= 1.5,
        );
        report::target(
            "dragnet heap peak / input",
            &format!("{:.2}x", dp.median / input),
            "<= 2.00x",
            dp.median / input <= 2.0,
        );
    }

    breakdown(&page, &filter, &projection, warmup, runs)?;
    if mode == Mode::Smoke {
        report::smoke();
    }
    Ok(())
}

/// The walk's code path for one page: text, lazy root, collection, split,
/// keep (each item copied to its own `Box<RawValue>`), then `_filter` and
/// `_fields`.
fn dragnet_path(bytes: &[u8], filter: &Filter, projection: &Projection) -> Result<Kept> {
    let text = std::str::from_utf8(bytes)?;
    let root: &RawValue = serde_json::from_str(text)?;
    let path = collection::locate(root, None, NO_SCHEMA).context("no collection")?;
    let page = collection::split(root, &path).context("collection missing")?;
    let mut items: Vec<RawItem> = Vec::with_capacity(page.items.len());
    items.extend(page.items.iter().map(|item| (*item).to_owned()));
    drop(page);
    let (shaped, _unmatched) = shape(&items, filter, Some(projection));
    let shaped = shaped.context("a projection always shapes")?;
    Ok(Kept { items, shaped })
}

/// Cross-checks dragnet's output against the same filter and projection
/// evaluated on a `Value` tree; returns the number of matching rows.
fn check(page: &OrderPage, filter: &Filter, projection: &Projection) -> Result<usize> {
    let tree: Value = serde_json::from_slice(&page.bytes)?;
    let rows = tree["data"].as_array().context("no data array")?;
    let want: Vec<Value> = rows
        .iter()
        .filter(|o| o["status"] == "open" && o["total"].as_f64().is_some_and(|t| t > 100.0))
        .map(|o| {
            let skus: Vec<Value> = o["lines"]
                .as_array()
                .map(|lines| lines.iter().map(|l| json!({"sku": l["sku"]})).collect())
                .unwrap_or_default();
            json!({"id": o["id"], "total": o["total"],
                   "customer": {"name": o["customer"]["name"]}, "lines": skus})
        })
        .collect();
    let kept = dragnet_path(&page.bytes, filter, projection)?;
    let got: Vec<Value> = kept
        .shaped
        .iter()
        .map(|r| serde_json::from_str(r.get()))
        .collect::<Result<_, _>>()?;
    ensure!(
        got == want,
        "dragnet's shaped rows differ from the Value-tree reference"
    );
    ensure!(kept.items.len() == page.items);
    Ok(want.len())
}

/// Times each pass of dragnet's path separately (medians over `runs`).
fn breakdown(
    page: &OrderPage,
    filter: &Filter,
    projection: &Projection,
    warmup: usize,
    runs: usize,
) -> Result<()> {
    const PASSES: [&str; 9] = [
        "from_utf8",
        "from_str::<&RawValue> (root)",
        "collection::locate",
        "collection::split",
        "keep: to_owned each item",
        "filter alone (matches, all items)",
        "projection alone (apply, matching rows)",
        "collection::envelope (page one; not above)",
        "floor: one validating scan (IgnoredAny)",
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); PASSES.len()];
    for run in 0..warmup + runs {
        let mut lap = Lap::start();
        let text = std::str::from_utf8(&page.bytes)?;
        let t0 = lap.next();
        let root: &RawValue = serde_json::from_str(text)?;
        let t1 = lap.next();
        let path = collection::locate(root, None, NO_SCHEMA).context("no collection")?;
        let t2 = lap.next();
        let split = collection::split(root, &path).context("collection missing")?;
        let t3 = lap.next();
        let mut items: Vec<RawItem> = Vec::with_capacity(split.items.len());
        items.extend(split.items.iter().map(|item| (*item).to_owned()));
        let t4 = lap.next();
        let matching: Vec<&RawValue> = items
            .iter()
            .map(|i| i.as_ref())
            .filter(|i| filter.matches(i))
            .collect();
        let t5 = lap.next();
        let (shaped, _) = projection.apply(matching.iter().copied());
        let t6 = lap.next();
        let envelope = collection::envelope(root, &path);
        let t7 = lap.next();
        std::hint::black_box((&shaped, &envelope));
        let _: IgnoredAny = serde_json::from_str(text)?;
        let t8 = lap.next();
        if run >= warmup {
            for (slot, t) in times.iter_mut().zip([t0, t1, t2, t3, t4, t5, t6, t7, t8]) {
                slot.push(t.as_secs_f64() * 1e3);
            }
        }
    }
    let medians: Vec<f64> = times
        .iter()
        .map(|v| Spread::of(v).map_or(0.0, |s| s.median))
        .collect();
    let path_total: f64 = medians[..7].iter().sum();
    let mb_per_s = |ms: f64| page.bytes.len() as f64 / 1e6 / (ms / 1e3);
    report::header("shape: where dragnet's time goes (median per pass)");
    for (i, (name, ms)) in PASSES.iter().zip(&medians).enumerate() {
        let share = if i < 7 {
            format!("{:5.1}%", 100.0 * ms / path_total)
        } else {
            "  n/a ".to_string()
        };
        report::info(
            name,
            &format!("{ms:8.2} ms {share}  ({:.0} MB/s of input)", mb_per_s(*ms)),
        );
    }
    report::info(
        "sum of the passes of the path",
        &format!("{path_total:8.2} ms"),
    );
    Ok(())
}

/// Successive lap times.
struct Lap(Instant);

impl Lap {
    fn start() -> Self {
        Lap(Instant::now())
    }

    fn next(&mut self) -> Duration {
        let now = Instant::now();
        let lap = now - self.0;
        self.0 = now;
        lap
    }
}
