//! The one clock of the workspace. Everything whose behaviour depends on
//! time reads it from an injected `Clock`: wall-clock time for run records,
//! cache TTLs and the sweeper; monotonic time for a call's budget (its wall
//! clock bound), the 750 ms progress throttle and elapsed times. Tests
//! inject a clock they set (`TestClock`, with the `test-util` feature) or
//! pause tokio's time, which `instant` follows.

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

#[cfg(feature = "test-util")]
mod test_clock {
    use std::sync::Mutex;

    use chrono::{DateTime, Duration, Utc};

    use super::Clock;

    /// A wall clock the test sets (monotonic time stays tokio's, so paused
    /// time in tests controls it).
    pub struct TestClock(Mutex<DateTime<Utc>>);

    impl TestClock {
        pub fn new(at: DateTime<Utc>) -> TestClock {
            TestClock(Mutex::new(at))
        }

        pub fn set(&self, at: DateTime<Utc>) {
            *self.0.lock().expect("clock lock") = at;
        }

        pub fn advance(&self, by: Duration) {
            let mut now = self.0.lock().expect("clock lock");
            *now += by;
        }
    }

    impl Clock for TestClock {
        fn now(&self) -> DateTime<Utc> {
            *self.0.lock().expect("clock lock")
        }
    }

    /// A fixed, whole-millisecond instant to start clocks at.
    pub fn t0() -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_790_000_000_123).expect("a valid instant")
    }
}

#[cfg(feature = "test-util")]
pub use test_clock::{t0, TestClock};
