//! dragnet-bench owns the project's benchmarks and the harness they share.
//! Each benchmark compares dragnet's code with a plain baseline in the same
//! process, interleaved after a warm-up, and prints the median of the
//! per-run ratios; nothing here asserts a wall-clock time.
//!
//! Every suite but `fan_out` runs as two bench targets (`cargo bench -p
//! dragnet-bench` runs all nine): `shape`/`walk`/`engine`/`cache` install a counting
//! global allocator and read heap peaks (judging the heap targets where
//! there are some), `shape_time`/`walk_time`/`engine_time`/`cache_time` keep
//! the plain system allocator and judge the time targets; `fan_out_time`
//! (concurrency 4 vs 1 over a slow upstream) has only the timing run, its
//! sides holding the same rows. They are split
//! because counting every allocation slows allocation-heavy code (the
//! `Value` baseline most), which would bias the time ratios.
//!
//! Layout:
//! - the suites: [`shape`] (with [`shape_passes`]), [`walk`], [`engine`]
//!   (with [`engine_canned`], a workflow over canned answers), [`cache`],
//!   [`fan_out`];
//! - what they share: the deterministic input ([`orders`]), sampling and
//!   ratios ([`measure`]) and the result lines ([`report`]).
#![forbid(unsafe_code)]

pub mod cache;
pub mod engine;
pub mod engine_canned;
pub mod fan_out;
pub mod measure;
pub mod orders;
pub mod report;
pub mod shape;
pub mod shape_passes;
pub mod walk;

use peakmem_alloc::PeakMemAllocTrait;

/// How a benchmark binary was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `cargo bench`: full-size input, warm-up and repeated runs.
    Full,
    /// `cargo test --benches` (no `--bench` flag): a quick smoke run on a
    /// small input, one run, so the benchmark code is exercised cheaply.
    Smoke,
}

impl Mode {
    /// `cargo bench` passes `--bench` to custom harnesses; anything else is a
    /// smoke run.
    pub fn from_args(mut args: impl Iterator<Item = String>) -> Mode {
        if args.any(|a| a == "--bench") {
            Mode::Full
        } else {
            Mode::Smoke
        }
    }
}

/// What a run measures: time (system allocator) or heap (counting one).
#[derive(Clone, Copy)]
pub enum Measure {
    /// Times are judged; the process has no counting allocator.
    Time,
    /// Heap peaks are read from this process's counting allocator (a
    /// global allocator, so `Sync`: suites may read it from any task).
    Heap(&'static (dyn PeakMemAllocTrait + Sync)),
}

impl Measure {
    /// Warm-up runs (not measured) and measured runs. Heap peaks barely
    /// move from run to run, so heap runs are fewer.
    pub fn runs(self, mode: Mode) -> (usize, usize) {
        match (mode, self) {
            (Mode::Smoke, _) => (0, 1),
            (Mode::Full, Measure::Time) => (2, 15),
            (Mode::Full, Measure::Heap(_)) => (1, 3),
        }
    }

    /// The allocator to read peaks from, when counting.
    pub fn heap(self) -> Option<&'static (dyn PeakMemAllocTrait + Sync)> {
        match self {
            Measure::Time => None,
            Measure::Heap(heap) => Some(heap),
        }
    }

    /// Words for the run's header.
    pub fn label(self) -> &'static str {
        match self {
            Measure::Time => "timing run, system allocator",
            Measure::Heap(_) => "heap run, counting allocator",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_follows_the_bench_flag() {
        let args = |a: &[&str]| {
            a.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .into_iter()
        };
        assert_eq!(Mode::from_args(args(&["shape", "--bench"])), Mode::Full);
        assert_eq!(Mode::from_args(args(&["shape"])), Mode::Smoke);
        assert_eq!(Measure::Time.runs(Mode::Smoke), (0, 1));
        assert_eq!(Measure::Time.runs(Mode::Full), (2, 15));
    }
}
