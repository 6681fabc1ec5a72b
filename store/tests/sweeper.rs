//! The sweeper on paused tokio time: it sweeps at once, then every period
//! with the injected clock's time, keeps going after a failed sweep, and
//! stops when cancelled.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Duration as Span, Utc};
use common::{t0, TestClock};
use dragnet_core::ports::cache::{CacheEntry, CacheListing, CacheStore, StoreError};
use dragnet_core::ports::BoxFuture;
use dragnet_store::spawn_sweeper;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Records the `now` of every sweep; fails the sweeps it is told to.
#[derive(Default)]
struct Recorder {
    sweeps: Mutex<Vec<DateTime<Utc>>>,
    fail: Mutex<bool>,
}

impl Recorder {
    fn sweeps(&self) -> Vec<DateTime<Utc>> {
        self.sweeps.lock().expect("lock").clone()
    }
}

impl CacheStore for Recorder {
    fn get<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: DateTime<Utc>,
    ) -> BoxFuture<'a, Result<Option<CacheEntry>, StoreError>> {
        Box::pin(async { Ok(None) })
    }
    fn put<'a>(&'a self, _: &'a CacheEntry) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
    fn list<'a>(&'a self) -> BoxFuture<'a, Result<Vec<CacheListing>, StoreError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn purge<'a>(&'a self, _: Option<&'a str>) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async { Ok(0) })
    }
    fn sweep<'a>(&'a self, now: DateTime<Utc>) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            self.sweeps.lock().expect("lock").push(now);
            if *self.fail.lock().expect("lock") {
                return Err(StoreError("database is down".into()));
            }
            Ok(3)
        })
    }
}

#[tokio::test(start_paused = true)]
async fn sweeps_every_period_with_the_clocks_time_until_cancelled() {
    let store = Arc::new(Recorder::default());
    let clock = Arc::new(TestClock::new(t0()));
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    let every = Duration::from_secs(300);
    spawn_sweeper(
        store.clone(),
        every,
        clock.clone(),
        &tracker,
        cancel.clone(),
    );

    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(store.sweeps(), vec![t0()], "the first sweep runs at once");

    clock.advance(Span::hours(1));
    tokio::time::sleep(every).await;
    assert_eq!(store.sweeps(), vec![t0(), t0() + Span::hours(1)]);

    // A failed sweep is logged and the next tick tries again.
    *store.fail.lock().expect("lock") = true;
    tokio::time::sleep(every).await;
    *store.fail.lock().expect("lock") = false;
    tokio::time::sleep(every).await;
    assert_eq!(store.sweeps().len(), 4);

    cancel.cancel();
    tracker.close();
    tracker.wait().await;
    tokio::time::sleep(every * 10).await;
    assert_eq!(store.sweeps().len(), 4, "no sweep after cancellation");
}

#[tokio::test(start_paused = true)]
async fn a_zero_period_does_not_spin_or_panic() {
    let store = Arc::new(Recorder::default());
    let clock = Arc::new(TestClock::new(t0()));
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    spawn_sweeper(
        store.clone(),
        Duration::ZERO,
        clock,
        &tracker,
        cancel.clone(),
    );
    tokio::time::sleep(Duration::from_millis(95)).await;
    let n = store.sweeps().len();
    assert!(
        (9..=11).contains(&n),
        "{n} sweeps in 95 ms at the 10 ms floor"
    );
    cancel.cancel();
    tracker.close();
    tracker.wait().await;
}
