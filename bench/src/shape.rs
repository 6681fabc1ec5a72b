//! The shape suite: one ~24 MB page of orders, filtered and projected the
//! way a walk does it (raw JSON, lazily), against the baseline of parsing
//! the same bytes into a `serde_json::Value` tree and nothing more.
//!
//! Both sides run interleaved after a warm-up. A timing run prints the
//! median of the per-run time ratios and judges the speed target, then
//! times each pass of dragnet's path (`shape_passes`); a heap run prints
//! each side's heap peak above the input (the input is allocated before the
//! section) and judges the peak target. Freeing each side's result is
//! outside its section. Before measuring, dragnet's rows are checked against
//! the same filter and projection computed on the `Value` tree.

use anyhow::{anyhow, ensure, Context, Result};
use dragnet_core::items::{ranges_of, Items};
use dragnet_core::json_rows::Rows;
use dragnet_walk::collection;
use dragnet_walk::collection::Declared;
use dragnet_walk::fields::Projection;
use dragnet_walk::filter::Filter;
use dragnet_walk::shape::shape;
use serde_json::{json, Value};

use crate::measure::{paired_ratios, sample, Series};
use crate::orders::{order_page, OrderPage};
use crate::{report, shape_passes, Measure, Mode};

const FULL_BYTES: usize = 24_000_000;
const SMOKE_BYTES: usize = 200_000;
/// No explicit path and nothing declared by a schema: the heuristics find
/// `data`, as they would for an undocumented list endpoint.
pub const NO_SCHEMA: Declared = Declared::Unknown { list_like: true };
pub const FIELDS: [&str; 4] = ["id", "total", "customer.name", "lines.sku"];

/// The input and the shaping asked for.
pub struct Setup {
    pub page: OrderPage,
    pub filter: Filter,
    pub projection: Projection,
}

impl Setup {
    pub fn new(mode: Mode) -> Result<Setup> {
        let size = match mode {
            Mode::Full => FULL_BYTES,
            Mode::Smoke => SMOKE_BYTES,
        };
        let filter = Filter::from_json(&json!([
            {"field": "status", "op": "eq", "value": "open"},
            {"field": "total", "op": "gt", "value": 100}
        ]))?;
        let paths: Vec<String> = FIELDS.iter().map(|s| s.to_string()).collect();
        Ok(Setup {
            page: order_page(size)?,
            filter,
            projection: Projection::new(&paths).map_err(|e| anyhow!(e))?,
        })
    }
}

/// What dragnet's path holds at the end: the kept raw items (the body with
/// ranges into it) and the rows the caller sees.
pub struct Kept {
    pub items: Items,
    pub shaped: Rows,
}

/// Runs the suite and prints its lines.
pub fn run(mode: Mode, measure: Measure) -> Result<()> {
    let (warmup, runs) = measure.runs(mode);
    let heap = measure.heap();
    let setup = Setup::new(mode)?;
    let Setup {
        page,
        filter,
        projection,
    } = &setup;
    let input = page.bytes.len() as f64;

    report::header(&format!(
        "shape: filter + project one page vs serde_json::Value parse ({})",
        measure.label()
    ));
    let orders = format!("{} ({} orders)", report::mb(input), page.items);
    report::info("input", &orders);
    report::info("filter", "status eq open AND total gt 100");
    report::info("fields", &FIELDS.join(", "));
    let plan = format!("{warmup} warm-up + {runs} measured, interleaved");
    report::info("runs", &plan);
    let expected = check(page, filter, projection)?;
    report::info(
        "rows after filter",
        &format!("{expected} of {}", page.items),
    );

    let mut base = Series::default();
    let mut ours = Series::default();
    for run in 0..warmup + runs {
        let (tree, b) = sample(heap, || serde_json::from_slice::<Value>(&page.bytes));
        drop(tree?);
        // The walk owns the body it fetched; the copy handed over here is
        // made before the section, as the input of the baseline is.
        let body = page.bytes.clone();
        let (kept, d) = sample(heap, || dragnet_path(body, filter, projection));
        let kept = kept?;
        ensure!(kept.shaped.len() == expected && kept.items.len() == page.items);
        drop(kept);
        if run >= warmup {
            base.push(b);
            ours.push(d);
        }
    }

    let bt = base.millis().context("no runs")?;
    let dt = ours.millis().context("no runs")?;
    let speedup = paired_ratios(&base, &ours).context("no runs")?;
    match measure {
        Measure::Time => {
            report::info("baseline runs (ms)", &report::runs(&base));
            report::info("dragnet runs (ms)", &report::runs(&ours));
            report::result("baseline Value parse: time", &report::millis(&bt));
            report::result("dragnet path: time", &report::millis(&dt));
            report::result("baseline/dragnet time (speed-up)", &report::ratio(&speedup));
            if mode == Mode::Full {
                report::target(
                    "speed-up vs Value parse (per-run median)",
                    &format!("{:.2}x", speedup.median),
                    ">= 1.50x",
                    speedup.median >= 1.5,
                );
            }
            shape_passes::breakdown(&setup, warmup, runs)?;
        }
        Measure::Heap(_) => {
            let bp = base.peaks().context("no runs")?.median;
            let dp = ours.peaks().context("no runs")?.median;
            let line = |peak: f64| format!("{} = {:.2}x input", report::mb(peak), peak / input);
            report::result("baseline heap peak", &line(bp));
            report::result("dragnet heap peak", &line(dp));
            let with_input = format!(
                "baseline {:.2}x, dragnet {:.2}x",
                1.0 + bp / input,
                1.0 + dp / input
            );
            report::info("peaks counting the input itself too", &with_input);
            let counted = format!("{:.2}x (counting slows allocation)", speedup.median);
            report::info("speed-up in this run, not judged", &counted);
            if mode == Mode::Full {
                let multiple = dp / input;
                let measured = format!("{multiple:.2}x");
                report::target(
                    "dragnet heap peak / input",
                    &measured,
                    "<= 2.00x",
                    multiple <= 2.0,
                );
            }
        }
    }
    if mode == Mode::Smoke {
        report::smoke();
    }
    Ok(())
}

/// The walk's code path for one page, as page one of a walk reads it:
/// text, `collection::first_page` (a quick scan of the top-level keys, then
/// one pass that splits the page), keep (the body kept whole with each
/// item a range into it, as `Walker::keep` does), then `_filter` and
/// `_fields` (`looping::shape::shape`, in parallel chunks on a page this
/// large). Later pages of a walk take `collection::split_text` (one pass).
pub fn dragnet_path(body: Vec<u8>, filter: &Filter, projection: &Projection) -> Result<Kept> {
    let text = String::from_utf8(body)?;
    let (_path, envelope, page) =
        collection::first_page(&text, None, NO_SCHEMA)?.context("no collection")?;
    let ranges = ranges_of(&text, &page.items);
    drop(page);
    let mut items = Items::new();
    items.keep_ranges(text, &ranges);
    let (shaped, _unmatched) = shape(&items, filter, Some(projection));
    let shaped = shaped.context("a projection always shapes")?;
    std::hint::black_box(&envelope);
    Ok(Kept { items, shaped })
}

/// Cross-checks dragnet's output against the same filter and projection
/// evaluated on a `Value` tree; returns the number of matching rows.
pub fn check(page: &OrderPage, filter: &Filter, projection: &Projection) -> Result<usize> {
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
    let kept = dragnet_path(page.bytes.clone(), filter, projection)?;
    let got: Vec<Value> = kept
        .shaped
        .iter()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    ensure!(
        got == want,
        "dragnet's rows differ from the Value-tree reference"
    );
    ensure!(kept.items.len() == page.items);
    Ok(want.len())
}
