//! Engine suite, timing run: the plain system allocator; judges the
//! overhead per step at concurrency 1 and 4 and splits it between the loop
//! layer and the engine. The suite itself is `dragnet_bench::engine`.
#![forbid(unsafe_code)]

use dragnet_bench::{engine, Measure, Mode};

fn main() -> anyhow::Result<()> {
    engine::run(Mode::from_args(std::env::args()), Measure::Time)
}
