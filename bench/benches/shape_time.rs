//! Shape suite, timing run: the plain system allocator, so the `Value`
//! baseline's many allocations are not slowed by counting; judges the speed
//! target and breaks dragnet's time down by pass. The suite itself is
//! `dragnet_bench::shape`.
#![forbid(unsafe_code)]

use dragnet_bench::{shape, Measure, Mode};

fn main() -> anyhow::Result<()> {
    shape::run(Mode::from_args(std::env::args()), Measure::Time)
}
