//! The bounds of one tool call (SPEC §3.3) and the shared budget that every
//! page of every `_for_each` value draws from. The budget's counters are
//! atomics, so the concurrent walks of a fan-out share it by reference; a
//! sequential walk pays one uncontended atomic per count.

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::clock::Clock;
use crate::verdict::StopReason;

/// Configurable bounds; `Limits::default()` holds the SPEC defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Pages per collection (per `_for_each` value).
    pub max_pages: u32,
    /// Requests per tool call, retries included.
    pub max_requests: u32,
    /// Items per tool call.
    pub max_items: usize,
    /// Raw upstream bytes per tool call.
    pub max_bytes: u64,
    /// Wall clock per tool call.
    pub wall_clock: Duration,
    /// Values per `_for_each`.
    pub max_for_each_values: usize,
    pub retry: RetryPolicy,
}

/// How failed requests are retried (SPEC §2).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt for 5xx and connection errors.
    pub max_retries: u32,
    /// First backoff; doubles each retry, with ±50 % jitter.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pages: 20,
            max_requests: 60,
            max_items: 5_000,
            max_bytes: 24_000_000,
            wall_clock: Duration::from_secs(60),
            max_for_each_values: 50,
            retry: RetryPolicy::default(),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
        }
    }
}

/// One bound of `Limits`, named as it is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Pages,
    Requests,
    Items,
    Bytes,
    WallClock,
    ForEachValues,
    Retries,
    BaseBackoff,
    MaxBackoff,
}

/// What a bound counts, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Count,
    Bytes,
    /// Held in milliseconds.
    Duration,
}

impl Bound {
    pub const ALL: [Bound; 9] = [
        Bound::Pages,
        Bound::Requests,
        Bound::Items,
        Bound::Bytes,
        Bound::WallClock,
        Bound::ForEachValues,
        Bound::Retries,
        Bound::BaseBackoff,
        Bound::MaxBackoff,
    ];

    /// The field's name in `Limits` (and in the configuration file's `[limits]`).
    pub fn name(self) -> &'static str {
        match self {
            Bound::Pages => "max_pages",
            Bound::Requests => "max_requests",
            Bound::Items => "max_items",
            Bound::Bytes => "max_bytes",
            Bound::WallClock => "wall_clock",
            Bound::ForEachValues => "max_for_each_values",
            Bound::Retries => "retry.max_retries",
            Bound::BaseBackoff => "retry.base_backoff",
            Bound::MaxBackoff => "retry.max_backoff",
        }
    }

    /// The smallest and largest allowed values (milliseconds for durations).
    /// The largest keep every sum and deadline far from overflowing and a
    /// single call within what one machine can hold and wait for.
    pub fn range(self) -> (u64, u64) {
        match self {
            Bound::Pages => (1, 100_000),
            Bound::Requests => (1, 1_000_000),
            Bound::Items => (1, 10_000_000),
            Bound::Bytes => (1, 16 * 1024 * 1024 * 1024),
            Bound::WallClock => (1, 24 * 3_600_000),
            Bound::ForEachValues => (1, 100_000),
            Bound::Retries => (0, 10),
            Bound::BaseBackoff | Bound::MaxBackoff => (0, 10 * 60_000),
        }
    }

    fn unit(self) -> Unit {
        match self {
            Bound::Bytes => Unit::Bytes,
            Bound::WallClock | Bound::BaseBackoff | Bound::MaxBackoff => Unit::Duration,
            Bound::Pages
            | Bound::Requests
            | Bound::Items
            | Bound::ForEachValues
            | Bound::Retries => Unit::Count,
        }
    }

    /// This bound's value in `limits` (milliseconds for durations).
    fn value(self, limits: &Limits) -> u128 {
        match self {
            Bound::Pages => limits.max_pages.into(),
            Bound::Requests => limits.max_requests.into(),
            Bound::Items => limits.max_items as u128,
            Bound::Bytes => limits.max_bytes.into(),
            Bound::WallClock => limits.wall_clock.as_millis(),
            Bound::ForEachValues => limits.max_for_each_values as u128,
            Bound::Retries => limits.retry.max_retries.into(),
            Bound::BaseBackoff => limits.retry.base_backoff.as_millis(),
            Bound::MaxBackoff => limits.retry.max_backoff.as_millis(),
        }
    }

    /// `n` in this bound's unit, as people read it.
    fn show(self, n: u128) -> String {
        match self.unit() {
            Unit::Count => n.to_string(),
            Unit::Bytes => format!("{n} bytes"),
            Unit::Duration => show_millis(n),
        }
    }
}

/// `250 ms`, `90 s`, `24 h`: the largest unit that divides exactly.
fn show_millis(ms: u128) -> String {
    match ms {
        0 => "0 s".to_string(),
        ms if ms % 3_600_000 == 0 => format!("{} h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{} min", ms / 60_000),
        ms if ms % 1_000 == 0 => format!("{} s", ms / 1_000),
        ms => format!("{ms} ms"),
    }
}

/// A bound outside its allowed range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("limit `{}` is {}; it must be from {} to {}", .bound.name(), .bound.show(*.value), .bound.show(u128::from(*.min)), .bound.show(u128::from(*.max)))]
pub struct LimitError {
    pub bound: Bound,
    /// The value given (milliseconds for durations).
    pub value: u128,
    pub min: u64,
    pub max: u64,
}

impl Limits {
    /// Checks every bound against its allowed range (`Bound::range`), the
    /// one place bounds are checked: past it, no sum or deadline built from
    /// them can overflow.
    pub fn validate(&self) -> Result<(), LimitError> {
        for bound in Bound::ALL {
            let value = bound.value(self);
            let (min, max) = bound.range();
            if value < min.into() || value > max.into() {
                return Err(LimitError {
                    bound,
                    value,
                    min,
                    max,
                });
            }
        }
        Ok(())
    }
}

/// What one call has used so far, shared by every walk of the call. Time
/// comes from the injected clock (whose `instant` is tokio's, so tests with
/// paused time control it).
pub struct Budget {
    pub limits: Limits,
    started: Instant,
    clock: Arc<dyn Clock>,
    requests: AtomicU32,
    bytes: AtomicU64,
    items: AtomicUsize,
    /// Answers that were pages (2xx), answers that were not (any other
    /// status, or no answer), and 429s among them.
    pages: AtomicU32,
    failed: AtomicU32,
    throttled: AtomicU32,
    /// Pages read back from an earlier attempt's journal instead of fetched.
    replayed: AtomicU32,
}

/// What the upstream answered during one call, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallStats {
    /// Successful answers: the pages of the walk (or its one answer).
    pub pages: u32,
    /// Attempts that failed: a non-2xx status or no answer (retried or not).
    pub upstream_errors: u32,
    /// 429 answers among them.
    pub throttled: u32,
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("limits", &self.limits)
            .field("requests", &self.requests())
            .field("bytes", &self.bytes())
            .field("items", &self.items())
            .finish_non_exhaustive()
    }
}

impl Budget {
    pub fn new(limits: Limits, clock: Arc<dyn Clock>) -> Self {
        Budget {
            limits,
            started: clock.instant(),
            clock,
            requests: AtomicU32::new(0),
            bytes: AtomicU64::new(0),
            items: AtomicUsize::new(0),
            pages: AtomicU32::new(0),
            failed: AtomicU32::new(0),
            throttled: AtomicU32::new(0),
            replayed: AtomicU32::new(0),
        }
    }

    /// Counts an answer: a page (2xx), a failure, or a 429 (`None`: no
    /// answer at all).
    pub fn count_answer(&self, status: Option<u16>) {
        match status {
            Some(s) if (200..300).contains(&s) => {
                self.pages.fetch_add(1, Ordering::Relaxed);
            }
            Some(429) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                self.throttled.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// What was answered so far.
    pub fn stats(&self) -> CallStats {
        CallStats {
            pages: self.pages.load(Ordering::Relaxed),
            upstream_errors: self.failed.load(Ordering::Relaxed),
            throttled: self.throttled.load(Ordering::Relaxed),
        }
    }

    /// Requests sent so far, retries included.
    pub fn requests(&self) -> u32 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Raw upstream bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Items kept so far.
    pub fn items(&self) -> usize {
        self.items.load(Ordering::Relaxed)
    }

    /// When the wall clock runs out. Limits that skipped `validate` with
    /// a wall clock past any representable instant get the largest allowed.
    pub fn deadline(&self) -> Instant {
        let longest = Duration::from_millis(Bound::WallClock.range().1);
        self.started
            .checked_add(self.limits.wall_clock)
            .unwrap_or(self.started + longest)
    }

    pub fn elapsed(&self) -> Duration {
        self.clock.instant().saturating_duration_since(self.started)
    }

    pub fn remaining(&self) -> Duration {
        self.deadline()
            .saturating_duration_since(self.clock.instant())
    }

    /// Spends one request, or says which bound forbids it. Concurrent
    /// walks never spend more than `max_requests` between them.
    pub fn take_request(&self) -> Result<(), StopReason> {
        if self.requests() >= self.limits.max_requests {
            return Err(StopReason::Requests);
        }
        if self.remaining().is_zero() {
            return Err(StopReason::WallClock);
        }
        let max = self.limits.max_requests;
        self.requests
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| StopReason::Requests)
    }

    /// Spends what a page read back from the journal cost its first
    /// fetch: one request and its bytes, so the bounds hold across
    /// attempts; or says which bound forbids it.
    pub fn take_replayed(&self, bytes: u64) -> Result<(), StopReason> {
        self.take_request()?;
        self.add_bytes(bytes);
        self.replayed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Pages read back from the journal so far.
    pub fn replayed(&self) -> u32 {
        self.replayed.load(Ordering::Relaxed)
    }

    /// Counts `n` more raw bytes read.
    pub fn add_bytes(&self, n: u64) {
        // The closure never declines, so the update always happens.
        let _ = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(b.saturating_add(n))
            });
    }

    /// Takes room for up to `want` items; returns how many fit.
    pub fn take_items(&self, want: usize) -> usize {
        let max = self.limits.max_items;
        let before = self
            .items
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n + want.min(max.saturating_sub(n)))
            })
            .unwrap_or_else(|n| n);
        want.min(max.saturating_sub(before))
    }

    /// Counts one item kept outside the items bound (a fan-out value's
    /// response without a collection).
    pub fn add_item(&self) {
        self.items.fetch_add(1, Ordering::Relaxed);
    }

    /// The first call-wide bound that forbids fetching more, if any.
    pub fn exhausted(&self) -> Option<StopReason> {
        if self.requests() >= self.limits.max_requests {
            Some(StopReason::Requests)
        } else if self.items() >= self.limits.max_items {
            Some(StopReason::Items)
        } else if self.bytes() >= self.limits.max_bytes {
            Some(StopReason::Bytes)
        } else if self.remaining().is_zero() {
            Some(StopReason::WallClock)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;

    fn budget(limits: Limits) -> Budget {
        Budget::new(limits, Arc::new(SystemClock))
    }

    #[tokio::test(start_paused = true)]
    async fn bounds_in_order() {
        let b = budget(Limits {
            max_requests: 2,
            ..Limits::default()
        });
        assert_eq!(b.take_request(), Ok(()));
        assert_eq!(b.take_request(), Ok(()));
        assert_eq!(b.take_request(), Err(StopReason::Requests));
        assert_eq!(b.exhausted(), Some(StopReason::Requests));
    }

    #[test]
    fn items_are_taken_up_to_the_bound() {
        let b = budget(Limits {
            max_items: 5,
            ..Limits::default()
        });
        assert_eq!(b.take_items(3), 3);
        assert_eq!(b.take_items(3), 2);
        assert_eq!(b.take_items(1), 0);
        assert_eq!(b.items(), 5);
        assert_eq!(b.exhausted(), Some(StopReason::Items));
    }

    #[tokio::test(start_paused = true)]
    async fn wall_clock_follows_tokio_time() {
        let b = budget(Limits {
            wall_clock: Duration::from_secs(5),
            ..Limits::default()
        });
        assert!(b.exhausted().is_none());
        tokio::time::advance(Duration::from_secs(6)).await;
        assert_eq!(b.exhausted(), Some(StopReason::WallClock));
        assert_eq!(b.take_request(), Err(StopReason::WallClock));
    }

    /// A clock whose monotonic time moves only when told.
    struct Stepped {
        base: Instant,
        ahead: std::sync::Mutex<Duration>,
    }

    impl Clock for Stepped {
        fn now(&self) -> chrono::DateTime<chrono::Utc> {
            chrono::DateTime::UNIX_EPOCH
        }
        fn instant(&self) -> Instant {
            self.base + *self.ahead.lock().unwrap()
        }
    }

    #[test]
    fn the_wall_clock_bound_reads_the_injected_clock() {
        let clock = Arc::new(Stepped {
            base: Instant::now(),
            ahead: Default::default(),
        });
        let limits = Limits {
            wall_clock: Duration::from_secs(5),
            ..Limits::default()
        };
        let b = Budget::new(limits, clock.clone());
        assert!(b.exhausted().is_none());
        *clock.ahead.lock().unwrap() = Duration::from_secs(6);
        assert_eq!(b.exhausted(), Some(StopReason::WallClock));
        assert_eq!(b.elapsed(), Duration::from_secs(6));
    }

    #[test]
    fn zero_limits_are_rejected() {
        let l = Limits {
            max_pages: 0,
            ..Limits::default()
        };
        let e = l.validate().unwrap_err();
        assert_eq!(e.bound, Bound::Pages);
        assert_eq!(
            e.to_string(),
            "limit `max_pages` is 0; it must be from 1 to 100000"
        );
        assert!(Limits::default().validate().is_ok());
    }

    #[test]
    fn every_bound_has_a_ceiling_named_with_its_range() {
        let huge = [
            Limits {
                max_pages: u32::MAX,
                ..Limits::default()
            },
            Limits {
                max_requests: 1_000_001,
                ..Limits::default()
            },
            Limits {
                max_items: usize::MAX,
                ..Limits::default()
            },
            Limits {
                max_bytes: u64::MAX,
                ..Limits::default()
            },
            Limits {
                wall_clock: Duration::from_secs(u64::MAX),
                ..Limits::default()
            },
            Limits {
                max_for_each_values: 100_001,
                ..Limits::default()
            },
            Limits {
                retry: RetryPolicy {
                    max_retries: 11,
                    ..RetryPolicy::default()
                },
                ..Limits::default()
            },
            Limits {
                retry: RetryPolicy {
                    base_backoff: Duration::from_secs(601),
                    ..RetryPolicy::default()
                },
                ..Limits::default()
            },
            Limits {
                retry: RetryPolicy {
                    max_backoff: Duration::MAX,
                    ..RetryPolicy::default()
                },
                ..Limits::default()
            },
        ];
        for (limits, bound) in huge.iter().zip(Bound::ALL) {
            let e = limits.validate().unwrap_err();
            assert_eq!(e.bound, bound);
            assert!(e.to_string().contains(bound.name()), "{e}");
        }
        let e = huge[4].validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "limit `wall_clock` is 18446744073709551615 s; it must be from 1 ms to 24 h"
        );
        assert!(huge[3]
            .validate()
            .unwrap_err()
            .to_string()
            .ends_with("to 17179869184 bytes"));
    }

    #[test]
    fn the_largest_allowed_bounds_pass() {
        let l = Limits {
            max_pages: 100_000,
            max_requests: 1_000_000,
            max_items: 10_000_000,
            max_bytes: 17_179_869_184,
            wall_clock: Duration::from_secs(24 * 3600),
            max_for_each_values: 100_000,
            retry: RetryPolicy {
                max_retries: 10,
                base_backoff: Duration::from_secs(600),
                max_backoff: Duration::from_secs(600),
            },
        };
        assert_eq!(l.validate(), Ok(()));
        assert_eq!(show_millis(250), "250 ms");
        assert_eq!(show_millis(90_000), "90 s");
    }

    #[tokio::test(start_paused = true)]
    async fn an_unchecked_huge_wall_clock_does_not_panic() {
        let b = budget(Limits {
            wall_clock: Duration::from_secs(u64::MAX),
            ..Limits::default()
        });
        assert!(b.deadline() > Instant::now());
        assert!(b.exhausted().is_none());
    }
}
