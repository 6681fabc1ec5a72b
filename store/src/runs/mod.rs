//! Run records at rest (SPEC §8, §9): one `runs` row per run, with the host
//! and process writing it and a heartbeat, and one `run_steps` row per step
//! in workflow order. Rows are written as the run progresses (see
//! `StoreObserver`), read back as the engine's typed records (`Runs` is
//! its `RunLog`), runs whose process died are marked `interrupted`, and the
//! pages a leased run's walks fetched are kept for a takeover (`RunPages`).

mod events;
mod interrupted;
mod lease;
mod pages;
mod read;
mod retention;
pub(crate) mod submit;
mod write;

pub use events::RunEvent;
pub use lease::{Lease, LeaseLength, Leases, Renewal};
pub use pages::RunPages;
pub use read::RunFilter;
pub use submit::{ClaimedRun, NewRun, Submitted, IDEMPOTENCY_WINDOW};

use chrono::{DateTime, Utc};

use crate::db::handle;
use crate::process;

handle! {
    /// Run records, their steps, events and kept pages (`Db::runs`): the
    /// engine's `RunLog`.
    Runs
}

/// Who writes a run: stored with it, read by `Runs::mark_interrupted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOwner {
    pub host: String,
    pub pid: u32,
}

impl RunOwner {
    /// This process on this host.
    pub fn this_process() -> RunOwner {
        RunOwner {
            host: process::hostname(),
            pid: std::process::id(),
        }
    }
}

/// Milliseconds from `from` to `to`, never negative.
pub(crate) fn millis_between(from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    (to - from).num_milliseconds().max(0)
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Run records, their steps, events and kept pages (the engine's
    /// `RunLog`).
    pub fn runs(&self) -> Runs {
        Runs(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_never_go_negative() {
        let a = DateTime::from_timestamp(100, 0).unwrap_or_default();
        let b = DateTime::from_timestamp(101, 500_000_000).unwrap_or_default();
        assert_eq!(millis_between(a, b), 1500);
        assert_eq!(millis_between(b, a), 0);
    }
}
