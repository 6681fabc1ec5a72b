//! Engine suite, profiling run (not judged): the 1,000-step workflow with
//! every call answered at once from a recording, on one thread, `RUNS`
//! times (default 10; `ENGINE_ALONE_RUNS`). Meant for callgrind:
//!
//! ```sh
//! ENGINE_ALONE_RUNS=1  valgrind --tool=callgrind target/release/deps/engine_alone-* --bench
//! ENGINE_ALONE_RUNS=11 valgrind --tool=callgrind target/release/deps/engine_alone-* --bench
//! ```
//!
//! The difference of the two totals, divided by 10 runs × 1,000 steps, is
//! the engine's instructions per step.
#![forbid(unsafe_code)]

use dragnet_bench::engine_canned;

fn main() -> anyhow::Result<()> {
    let runs = std::env::var("ENGINE_ALONE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let times = engine_canned::profile(1000, runs)?;
    for (i, t) in times.iter().enumerate() {
        println!(
            "run {i}: {:.2} ms = {:.1} us per step",
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
