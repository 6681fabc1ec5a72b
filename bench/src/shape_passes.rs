//! Where dragnet's time goes on the shape page: each pass of its path timed
//! on its own (median over the runs), with the rate over the input and its
//! share of the path. Two more lines give context, not part of the path:
//! `collection::split_text` (what each later page of a walk costs instead of
//! `first_page`) and the floor of any path, one validating scan of the page
//! (`IgnoredAny`).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use dragnet_core::items::{ranges_of, Items};
use dragnet_walk::collection;
use dragnet_walk::shape::shape;
use serde::de::IgnoredAny;

use crate::measure::Spread;
use crate::report;
use crate::shape::{Setup, NO_SCHEMA};

const PASSES: [&str; 6] = [
    "from_utf8",
    "collection::first_page (top level + collection)",
    "keep: the body, with a range per item",
    "shape: filter + projection (parallel chunks)",
    "collection::split_text (later pages; not above)",
    "floor: one validating scan (IgnoredAny)",
];
/// The passes before this index make up the measured path.
const IN_PATH: usize = 4;

/// Times the passes and prints one line each.
pub fn breakdown(setup: &Setup, warmup: usize, runs: usize) -> Result<()> {
    let bytes = &setup.page.bytes;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); PASSES.len()];
    for run in 0..warmup + runs {
        let mut laps = Vec::with_capacity(PASSES.len());
        // The walk owns the body it fetched: a copy is handed over first.
        let body = bytes.clone();
        let mut lap = Lap::start();
        let text = String::from_utf8(body)?;
        laps.push(lap.next());
        let (path, envelope, page) =
            collection::first_page(&text, None, NO_SCHEMA)?.context("no collection")?;
        laps.push(lap.next());
        let ranges = ranges_of(&text, &page.items);
        drop(page);
        let mut items = Items::new();
        items.keep_ranges(text, &ranges);
        laps.push(lap.next());
        let (shaped, _) = shape(&items, &setup.filter, Some(&setup.projection));
        laps.push(lap.next());
        let text = std::str::from_utf8(bytes)?;
        // Not timed: the context lines read the shared input.
        let _ = lap.next();
        let later = collection::split_text(text, &path)?.context("collection missing")?;
        laps.push(lap.next());
        std::hint::black_box((&shaped, &envelope, &later));
        drop(later);
        let _: IgnoredAny = serde_json::from_str(text)?;
        laps.push(lap.next());
        if run >= warmup {
            for (slot, t) in times.iter_mut().zip(laps) {
                slot.push(t.as_secs_f64() * 1e3);
            }
        }
    }
    let medians: Vec<f64> = times
        .iter()
        .map(|v| Spread::of(v).map_or(0.0, |s| s.median))
        .collect();
    let path_total: f64 = medians[..IN_PATH].iter().sum();
    let rate = |ms: f64| bytes.len() as f64 / 1e6 / (ms / 1e3);
    report::header("shape: where dragnet's time goes (median per pass)");
    for (i, (name, ms)) in PASSES.iter().zip(&medians).enumerate() {
        let share = if i < IN_PATH {
            format!("{:5.1}%", 100.0 * ms / path_total)
        } else {
            "  n/a ".to_string()
        };
        let line = format!("{ms:8.2} ms {share}  ({:.0} MB/s of input)", rate(*ms));
        report::info(name, &line);
    }
    let total = format!("{path_total:8.2} ms");
    report::info("sum of the passes of the path", &total);
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
