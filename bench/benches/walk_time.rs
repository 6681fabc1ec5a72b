//! Walk suite, timing run: the plain system allocator; judges the time
//! target and splits dragnet's extra time into JSON passes and the rest. The
//! suite itself is `dragnet_bench::walk`.
#![forbid(unsafe_code)]

use dragnet_bench::{walk, Measure, Mode};

fn main() -> anyhow::Result<()> {
    walk::run(Mode::from_args(std::env::args()), Measure::Time)
}
