//! What following a cursor costs per page (issue 14): dragnet walking the
//! shop's 400 customers 10 to a page (40 requests) in each cursor style —
//! Stripe's `starting_after`, a `Link` header, Twilio's `next_page_uri` —
//! against the same walker's offset walk of `/customers` with the same
//! page size, in the same process, runs interleaved. A plain reqwest loop
//! over the 40 offset URLs (bodies kept, no JSON) is the floor. Every run
//! checks 400 rows, a complete verdict, and 40 requests — 41 for the offset
//! walk, which learns of the end only from an empty page (a bare array
//! says nothing), where every cursor style says so on the 40th.
//!
//! `cargo run --release -p dragnet-bench --bin cursor_walk -- --bench`
//! (without `--bench`: a quick smoke run).
#![forbid(unsafe_code)]

use std::net::SocketAddr;

use anyhow::{ensure, Context, Result};
use dragnet_bench::measure::{paired_ratios, sample_async, Series};
use dragnet_bench::{report, Mode};
use dragnet_core::{Limits, Toolkit};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::{execute, LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::{json, Value};

/// `(label, tool, page-size argument)`; the first is the reference.
const SIDES: [(&str, &str, &str); 4] = [
    ("offset walk (/customers)", "listCustomers", "limit"),
    ("Stripe starting_after", "listStripeCustomers", "limit"),
    ("Link header", "listLinkedCustomers", "limit"),
    ("Twilio next_page_uri", "listTwilioCustomers", "PageSize"),
];
const SIZE: u64 = 10;

fn main() -> Result<()> {
    let mode = Mode::from_args(std::env::args());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(bench(mode))
}

async fn walk(
    kit: &Toolkit,
    upstream: &HttpUpstream,
    tool: &str,
    size: &str,
) -> Result<LoopResult> {
    let Value::Object(arguments) = json!({ size: SIZE }) else {
        unreachable!()
    };
    let call = ToolCall {
        tool: kit.tool(tool).context("the shop has the tool")?,
        arguments,
        options: LoopOptions {
            all_pages: true,
            ..LoopOptions::default()
        },
        limits: Limits {
            max_pages: 100,
            ..Limits::default()
        },
        cache: None,
    };
    Ok(execute(call, upstream, &Runtime::quiet()).await?)
}

async fn bench(mode: Mode) -> Result<()> {
    let (warmup, runs) = match mode {
        Mode::Full => (5, 30),
        Mode::Smoke => (1, 2),
    };
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let base = shop.base_url().to_string();
    let kit = dragnet_openapi::import_file(&dragnet_shop::openapi_path())?;
    let upstream = HttpUpstream::new(&base, Credentials::None)?;
    let client = reqwest::Client::new();
    let rows = dragnet_shop::dataset().customers().len();
    let pages = rows.div_ceil(SIZE as usize);
    let urls: Vec<String> = (0..pages)
        .map(|p| format!("{base}/customers?limit={SIZE}&offset={}", p * SIZE as usize))
        .collect();
    report::header(&format!(
        "cursor walks: {rows} customers, {SIZE} a page ({pages} requests), by style"
    ));
    report::info(
        "runs",
        &format!("{warmup} warm-up + {runs} measured, interleaved"),
    );
    let mut floor = Series::default();
    let mut series: Vec<Series> = SIDES.iter().map(|_| Series::default()).collect();
    for run in 0..warmup + runs {
        let (kept, s) = sample_async(None, async {
            let mut kept = Vec::with_capacity(urls.len());
            for url in &urls {
                kept.push(client.get(url).send().await?.bytes().await?);
            }
            anyhow::Ok(kept)
        })
        .await;
        ensure!(kept?.len() == pages);
        if run >= warmup {
            floor.push(s);
        }
        for ((label, tool, size), out) in SIDES.iter().zip(series.iter_mut()) {
            let (result, s) = sample_async(None, walk(&kit, &upstream, tool, size)).await;
            let v = result?.verdict;
            let requests = pages + usize::from(*tool == "listCustomers");
            ensure!(
                v.complete && v.item_count == rows && v.requests as usize == requests,
                "{label}: {}",
                v.note
            );
            if run >= warmup {
                out.push(s);
            }
        }
    }
    shop.shutdown().await;
    report::result(
        "plain fetch loop (offset URLs, no JSON)",
        &report::millis(&floor.millis().context("runs")?),
    );
    let reference = &series[0];
    for ((label, _, _), s) in SIDES.iter().zip(&series) {
        report::result(label, &report::millis(&s.millis().context("runs")?));
        let to_floor = paired_ratios(s, &floor).context("runs")?;
        report::info(
            &format!("  {label} / fetch loop"),
            &report::ratio(&to_floor),
        );
        if !std::ptr::eq(s, reference) {
            let to_offset = paired_ratios(s, reference).context("runs")?;
            report::result(
                &format!("  {label} / offset walk"),
                &report::ratio(&to_offset),
            );
        }
    }
    if mode == Mode::Smoke {
        report::smoke();
    }
    Ok(())
}
