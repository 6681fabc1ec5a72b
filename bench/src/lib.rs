//! dragnet-bench owns the project's benchmarks and the small harness they
//! share. Each benchmark (`benches/*.rs`, run by `cargo bench -p
//! dragnet-bench`) measures dragnet's code and a plain baseline in the same
//! process, interleaved, and prints the ratio of their medians together with
//! heap peaks read from a counting global allocator. This library holds what
//! the benchmarks have in common: the deterministic input (`orders`), timing
//! and heap sampling (`measure`) and result lines (`report`). Nothing here
//! asserts a wall-clock time.
#![forbid(unsafe_code)]

pub mod measure;
pub mod orders;
pub mod report;

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

    /// Warm-up runs (not measured) and measured runs.
    pub fn runs(self) -> (usize, usize) {
        match self {
            Mode::Full => (2, 9),
            Mode::Smoke => (0, 1),
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
        assert_eq!(Mode::Smoke.runs(), (0, 1));
    }
}
