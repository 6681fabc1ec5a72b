//! Walk suite, heap run: a counting global allocator is installed so each
//! side's heap peak can be read; judges the heap target. The suite itself
//! is `dragnet_bench::walk`.
#![forbid(unsafe_code)]

use std::alloc::System;

use dragnet_bench::{walk, Measure, Mode};
use peakmem_alloc::PeakMemAlloc;

#[global_allocator]
static HEAP: PeakMemAlloc<System> = PeakMemAlloc::new(System);

fn main() -> anyhow::Result<()> {
    walk::run(Mode::from_args(std::env::args()), Measure::Heap(&HEAP))
}
