//! Engine suite, profiling run (not judged): the 1,000-step workflow with
//! every call answered at once from a recording, on one thread, `RUNS`
//! times (default 10; `ENGINE_ALONE_RUNS`). Without `--bench` (as under
//! `cargo test --benches`) it runs the small workflow once. Meant for
//! callgrind:
//!
//! ```sh
//! ENGINE_ALONE_RUNS=1  valgrind --tool=callgrind target/release/deps/engine_alone-* --bench
//! ENGINE_ALONE_RUNS=6  valgrind --tool=callgrind target/release/deps/engine_alone-* --bench
//! ```
//!
//! The difference of the two totals, divided by 5 runs × 1,000 steps, is
//! the engine's instructions per step.
#![forbid(unsafe_code)]

use dragnet_bench::{engine, engine_canned, Mode};

fn main() -> anyhow::Result<()> {
    let mode = Mode::from_args(std::env::args());
    let runs = match mode {
        Mode::Full => std::env::var("ENGINE_ALONE_RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10),
        Mode::Smoke => 1,
    };
    let n = engine::steps(mode);
    let times = engine_canned::profile(n, runs)?;
    for (i, t) in times.iter().enumerate() {
        println!(
            "run {i}: {:.2} ms = {:.1} us per step",
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e6 / n as f64
        );
    }
    Ok(())
}
