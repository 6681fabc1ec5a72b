//! Pacing shared by every walk to one host (SPEC §3.6): what the API said
//! about its rate limit, kept in one place that `send_with_retry` consults
//! before each attempt. A 429/503 with `Retry-After`, or an answer with
//! `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset`, holds every walk
//! until then, not only the one that got it; a positive remaining count is
//! a quota no walk oversteps before the reset (requests still in flight
//! count against it).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::RawResponse;
use dragnet_core::budget::Budget;
use dragnet_core::verdict::StopReason;

/// What an answer's `X-RateLimit-*` headers said, already read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// `X-RateLimit-Remaining`: requests left in the current window.
    pub remaining: u64,
    /// `X-RateLimit-Reset`, turned into a wait from when the answer came.
    pub reset: Option<Duration>,
}

/// The pacing state of one host; shared by every walk through the same
/// upstream (one per provider), and by every clone of it.
#[derive(Debug, Default)]
pub struct Pacing {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// No request goes out before this.
    hold_until: Option<Instant>,
    /// Requests the API still allows before `window_ends`, as far as known.
    quota: Option<u64>,
    window_ends: Option<Instant>,
    /// Requests sent and not answered yet.
    in_flight: u64,
}

impl State {
    /// How long the next request must wait now (zero: it may go).
    fn wait(&mut self, now: Instant) -> Duration {
        if let Some(at) = self.hold_until {
            if at > now {
                return at - now;
            }
            self.hold_until = None;
        }
        match self.window_ends {
            Some(end) if end <= now => {
                // A new window: the old quota no longer says anything.
                self.window_ends = None;
                self.quota = None;
                Duration::ZERO
            }
            Some(end) if self.quota == Some(0) => end - now,
            _ => Duration::ZERO,
        }
    }
}

impl Pacing {
    /// Waits until the host may be sent one more request, then counts it
    /// as in flight. Stops with `WallClock` when the wait would outlast
    /// the call.
    pub async fn admit(&self, budget: &Budget) -> Result<Ticket<'_>, StopReason> {
        loop {
            let wait = {
                let mut state = self.lock();
                let wait = state.wait(Instant::now());
                if wait.is_zero() {
                    state.in_flight += 1;
                    if let Some(q) = state.quota.as_mut() {
                        *q = q.saturating_sub(1);
                    }
                    return Ok(Ticket { pacing: self });
                }
                wait
            };
            if wait >= budget.remaining() {
                return Err(StopReason::WallClock);
            }
            tracing::debug!(
                wait_ms = wait.as_millis() as u64,
                "pacing: waiting for the host's rate limit"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// Holds every request to the host for `delay` from now (a longer hold
    /// already in place stays).
    pub fn hold(&self, delay: Duration) {
        let until = Instant::now() + delay;
        let mut state = self.lock();
        state.hold_until = Some(state.hold_until.map_or(until, |at| at.max(until)));
    }

    fn answered(&self, response: &RawResponse) {
        let now = Instant::now();
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        if matches!(response.status, 429 | 503) {
            if let Some(delay) = response.retry_after {
                let until = now + delay;
                state.hold_until = Some(state.hold_until.map_or(until, |at| at.max(until)));
            }
        }
        let Some(limit) = response.rate_limit else {
            return;
        };
        let Some(reset) = limit.reset else {
            // A count without a reset says nothing about how long to wait.
            return;
        };
        let end = now + reset;
        if limit.remaining == 0 {
            state.hold_until = Some(state.hold_until.map_or(end, |at| at.max(end)));
        }
        // The requests still in flight may each take one of those left.
        state.quota = Some(limit.remaining.saturating_sub(state.in_flight));
        state.window_ends = Some(end);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One admitted request; dropping it without an answer (an error, a
/// cancelled walk) takes it out of the in-flight count.
pub struct Ticket<'a> {
    pacing: &'a Pacing,
}

impl Ticket<'_> {
    /// Records what the answer said about the rate limit.
    pub fn answered(self, response: &RawResponse) {
        self.pacing.answered(response);
        std::mem::forget(self);
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut state = self.pacing.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use dragnet_core::budget::Limits;
    use dragnet_core::clock::SystemClock;

    fn budget() -> Budget {
        Budget::new(Limits::default(), Arc::new(SystemClock))
    }

    fn answer(status: u16, retry_after: Option<u64>, rate: Option<(u64, u64)>) -> RawResponse {
        RawResponse {
            status,
            retry_after: retry_after.map(Duration::from_secs),
            rate_limit: rate.map(|(remaining, reset)| RateLimit {
                remaining,
                reset: Some(Duration::from_secs(reset)),
            }),
            next_link: None,
            body: bytes::Bytes::new(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_holds_every_walk_until_retry_after() {
        let pacing = Pacing::default();
        let b = budget();
        let start = Instant::now();
        let first = pacing.admit(&b).await.unwrap();
        let second = pacing.admit(&b).await.unwrap();
        first.answered(&answer(429, Some(2), None));
        // The other walk's answer says nothing; the next request of either waits.
        second.answered(&answer(200, None, None));
        let _third = pacing.admit(&b).await.unwrap();
        assert_eq!(Instant::now() - start, Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn remaining_zero_holds_until_the_reset() {
        let pacing = Pacing::default();
        let b = budget();
        let start = Instant::now();
        pacing
            .admit(&b)
            .await
            .unwrap()
            .answered(&answer(200, None, Some((0, 3))));
        let _next = pacing.admit(&b).await.unwrap();
        assert_eq!(Instant::now() - start, Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_quota_counts_requests_in_flight() {
        let pacing = Pacing::default();
        let b = budget();
        let start = Instant::now();
        let a = pacing.admit(&b).await.unwrap();
        let _in_flight = pacing.admit(&b).await.unwrap();
        // Two left, one of them already taken by the request in flight.
        a.answered(&answer(200, None, Some((2, 5))));
        let _c = pacing.admit(&b).await.unwrap();
        assert_eq!(Instant::now(), start);
        let _d = pacing.admit(&b).await.unwrap();
        assert_eq!(Instant::now() - start, Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_past_the_wall_clock_stops_the_walk() {
        let pacing = Pacing::default();
        let b = Budget::new(
            Limits {
                wall_clock: Duration::from_secs(1),
                ..Limits::default()
            },
            Arc::new(SystemClock),
        );
        pacing
            .admit(&b)
            .await
            .unwrap()
            .answered(&answer(503, Some(30), None));
        assert_eq!(pacing.admit(&b).await.err(), Some(StopReason::WallClock));
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_ticket_leaves_the_in_flight_count() {
        let pacing = Pacing::default();
        let b = budget();
        drop(pacing.admit(&b).await.unwrap());
        assert_eq!(pacing.lock().in_flight, 0);
        pacing
            .admit(&b)
            .await
            .unwrap()
            .answered(&answer(200, None, None));
        assert_eq!(pacing.lock().in_flight, 0);
    }
}
