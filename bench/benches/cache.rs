//! Cache suite, heap run: a counting global allocator is installed so the
//! live walk's and the hit's heap peaks can be read; judges nothing. The
//! suite itself is `dragnet_bench::cache`.
#![forbid(unsafe_code)]

use std::alloc::System;

use dragnet_bench::{cache, Measure, Mode};
use peakmem_alloc::PeakMemAlloc;

#[global_allocator]
static HEAP: PeakMemAlloc<System> = PeakMemAlloc::new(System);

fn main() -> anyhow::Result<()> {
    cache::run(Mode::from_args(std::env::args()), Measure::Heap(&HEAP))
}
