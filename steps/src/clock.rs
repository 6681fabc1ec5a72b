//! The one clock of the workspace. Everything whose behaviour depends on
//! time reads it from an injected `Clock`: wall-clock time for run records,
//! cache TTLs and the sweeper; monotonic time for a call's budget (its wall
//! clock bound), the 750 ms progress throttle and elapsed times. Tests
//! inject a clock they set (`dragnet_store::testing::TestClock`) or pause
//! tokio's time, which `instant` follows.

use chrono::{DateTime, Utc};
use tokio::time::Instant;

/// A source of time.
pub trait Clock: Send + Sync {
    /// Wall-clock time.
    fn now(&self) -> DateTime<Utc>;

    /// Monotonic time; tokio's, so paused time in tests controls it.
    fn instant(&self) -> Instant {
        Instant::now()
    }
}

/// The system's clock (and tokio's monotonic one).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}
