//! Timing and heap-peak sampling. A sample resets the counting allocator's
//! peak (when there is one), runs the section, and reads the elapsed time
//! and the peak: the most heap the section held at once *above* what was
//! live when it started (so an input allocated beforehand is not counted).
//! Results are returned, not dropped, so freeing them is outside the timed
//! section on every side.

use std::future::Future;
use std::hint::black_box;
use std::time::{Duration, Instant};

use peakmem_alloc::PeakMemAllocTrait;

/// One measured run of one section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub time: Duration,
    /// Peak heap bytes above the level at the start of the section; 0 when
    /// nothing counts allocations.
    pub peak: usize,
}

/// The counting allocator to read, if the process has one.
pub type Heap = Option<&'static (dyn PeakMemAllocTrait + Sync)>;

/// Runs `section` once, measured.
pub fn sample<R>(heap: Heap, section: impl FnOnce() -> R) -> (R, Sample) {
    reset(heap);
    let start = Instant::now();
    let out = black_box(section());
    let time = start.elapsed();
    (
        out,
        Sample {
            time,
            peak: peak(heap),
        },
    )
}

/// Awaits `section` once, measured. The future must not have been polled.
pub async fn sample_async<R>(heap: Heap, section: impl Future<Output = R>) -> (R, Sample) {
    reset(heap);
    let start = Instant::now();
    let out = black_box(section.await);
    let time = start.elapsed();
    (
        out,
        Sample {
            time,
            peak: peak(heap),
        },
    )
}

fn reset(heap: Heap) {
    if let Some(h) = heap {
        h.reset_peak_memory();
    }
}

fn peak(heap: Heap) -> usize {
    heap.map_or(0, |h| h.get_peak_memory())
}

/// Median, minimum and maximum of a set of numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// `None` for an empty set. The median of an even count is the mean of
    /// the two middle values.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        } else {
            sorted[mid]
        };
        Some(Spread {
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        })
    }

    /// The widest distance from the median, as a fraction of it.
    pub fn relative_range(&self) -> f64 {
        if self.median == 0.0 {
            return 0.0;
        }
        (self.max - self.median).max(self.median - self.min) / self.median
    }
}

/// The samples of one side of a comparison.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub samples: Vec<Sample>,
}

impl Series {
    pub fn push(&mut self, s: Sample) {
        self.samples.push(s);
    }

    /// Times in milliseconds.
    pub fn millis(&self) -> Option<Spread> {
        let v: Vec<f64> = self
            .samples
            .iter()
            .map(|s| s.time.as_secs_f64() * 1e3)
            .collect();
        Spread::of(&v)
    }

    /// Heap peaks in bytes.
    pub fn peaks(&self) -> Option<Spread> {
        let v: Vec<f64> = self.samples.iter().map(|s| s.peak as f64).collect();
        Spread::of(&v)
    }
}

/// Per-run time ratios `numerator / denominator` of two interleaved series
/// (run i of one against run i of the other).
pub fn paired_ratios(numerator: &Series, denominator: &Series) -> Option<Spread> {
    let v: Vec<f64> = numerator
        .samples
        .iter()
        .zip(&denominator.samples)
        .map(|(n, d)| n.time.as_secs_f64() / d.time.as_secs_f64())
        .collect();
    Spread::of(&v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_odd_and_even_counts() {
        let s = Spread::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (3.0, 1.0, 5.0));
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!(Spread::of(&[]).is_none());
        assert!((Spread::of(&[9.0, 10.0, 12.0]).unwrap().relative_range() - 0.2).abs() < 1e-9);
    }

    #[test]
    fn paired_ratios_pair_runs_in_order() {
        let ms = |v: &[u64]| Series {
            samples: v
                .iter()
                .map(|&m| Sample {
                    time: Duration::from_millis(m),
                    peak: 0,
                })
                .collect(),
        };
        let r = paired_ratios(&ms(&[20, 30, 10]), &ms(&[10, 10, 10])).unwrap();
        assert_eq!((r.min, r.median, r.max), (1.0, 2.0, 3.0));
    }
}
