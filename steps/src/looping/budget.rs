//! The bounds of one tool call (SPEC §3.3) and the shared budget that every
//! page of every `_for_each` value draws from.

use std::time::Duration;

use tokio::time::Instant;

use super::verdict::StopReason;

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

impl Limits {
    /// Checks that every bound allows at least one request.
    pub fn validate(&self) -> Result<(), String> {
        let zero = [
            ("max_pages", self.max_pages == 0),
            ("max_requests", self.max_requests == 0),
            ("max_items", self.max_items == 0),
            ("max_bytes", self.max_bytes == 0),
            ("wall_clock", self.wall_clock.is_zero()),
            ("max_for_each_values", self.max_for_each_values == 0),
        ];
        match zero.iter().find(|(_, is_zero)| *is_zero) {
            Some((name, _)) => Err(format!("limit `{name}` must be above zero")),
            None => Ok(()),
        }
    }
}

/// What one call has used so far. Time comes from tokio's clock, so tests
/// with paused time control it.
#[derive(Debug)]
pub struct Budget {
    pub limits: Limits,
    started: Instant,
    pub requests: u32,
    pub bytes: u64,
    pub items: usize,
}

impl Budget {
    pub fn new(limits: Limits) -> Self {
        Budget {
            limits,
            started: Instant::now(),
            requests: 0,
            bytes: 0,
            items: 0,
        }
    }

    pub fn deadline(&self) -> Instant {
        self.started + self.limits.wall_clock
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn remaining(&self) -> Duration {
        self.deadline().saturating_duration_since(Instant::now())
    }

    /// Spends one request, or says which bound forbids it.
    pub fn take_request(&mut self) -> Result<(), StopReason> {
        if self.requests >= self.limits.max_requests {
            return Err(StopReason::Requests);
        }
        if self.remaining().is_zero() {
            return Err(StopReason::WallClock);
        }
        self.requests += 1;
        Ok(())
    }

    /// The first call-wide bound that forbids fetching more, if any.
    pub fn exhausted(&self) -> Option<StopReason> {
        if self.requests >= self.limits.max_requests {
            Some(StopReason::Requests)
        } else if self.items >= self.limits.max_items {
            Some(StopReason::Items)
        } else if self.bytes >= self.limits.max_bytes {
            Some(StopReason::Bytes)
        } else if self.remaining().is_zero() {
            Some(StopReason::WallClock)
        } else {
            None
        }
    }

    /// How many more items fit.
    pub fn items_left(&self) -> usize {
        self.limits.max_items.saturating_sub(self.items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn bounds_in_order() {
        let mut b = Budget::new(Limits {
            max_requests: 2,
            ..Limits::default()
        });
        assert_eq!(b.take_request(), Ok(()));
        assert_eq!(b.take_request(), Ok(()));
        assert_eq!(b.take_request(), Err(StopReason::Requests));
        assert_eq!(b.exhausted(), Some(StopReason::Requests));
    }

    #[tokio::test(start_paused = true)]
    async fn wall_clock_follows_tokio_time() {
        let mut b = Budget::new(Limits {
            wall_clock: Duration::from_secs(5),
            ..Limits::default()
        });
        assert!(b.exhausted().is_none());
        tokio::time::advance(Duration::from_secs(6)).await;
        assert_eq!(b.exhausted(), Some(StopReason::WallClock));
        assert_eq!(b.take_request(), Err(StopReason::WallClock));
    }

    #[test]
    fn zero_limits_are_rejected() {
        let l = Limits {
            max_pages: 0,
            ..Limits::default()
        };
        assert!(l.validate().unwrap_err().contains("max_pages"));
        assert!(Limits::default().validate().is_ok());
    }
}
