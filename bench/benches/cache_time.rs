//! Cache suite, timing run: the plain system allocator; judges the live
//! walk / hit ratio on each backend. The suite itself is
//! `dragnet_bench::cache`.
#![forbid(unsafe_code)]

use dragnet_bench::{cache, Measure, Mode};

fn main() -> anyhow::Result<()> {
    cache::run(Mode::from_args(std::env::args()), Measure::Time)
}
