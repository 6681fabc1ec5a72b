//! Fan-out suite, timing run: `_for_each` with concurrency 4 against
//! concurrency 1 over a shop answering each page after 20 ms; judges the
//! speed-up target. The suite itself is `dragnet_bench::fan_out`.
#![forbid(unsafe_code)]

use dragnet_bench::{fan_out, Mode};

fn main() -> anyhow::Result<()> {
    fan_out::run(Mode::from_args(std::env::args()))
}
