//! Engine suite, heap run: a counting global allocator is installed so the
//! run's and the baseline's heap peaks can be read; judges nothing. The
//! suite itself is `dragnet_bench::engine`.
#![forbid(unsafe_code)]

use std::alloc::System;

use dragnet_bench::{engine, Measure, Mode};
use peakmem_alloc::PeakMemAlloc;

#[global_allocator]
static HEAP: PeakMemAlloc<System> = PeakMemAlloc::new(System);

fn main() -> anyhow::Result<()> {
    engine::run(Mode::from_args(std::env::args()), Measure::Heap(&HEAP))
}
