//! The sweeper: one tracked task that deletes expired cache entries every
//! so often until its token is cancelled. The first sweep runs at once; a
//! failed sweep is logged and tried again at the next tick.

use std::sync::Arc;
use std::time::Duration;

use dragnet_steps::cache::CacheStore;
use dragnet_steps::clock::Clock;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The shortest period accepted (a zero period would spin).
const MIN_EVERY: Duration = Duration::from_millis(10);

/// Spawns the sweeper on `tracker`; it stops when `cancel` is cancelled.
/// `every` below 10 ms is taken as 10 ms.
pub fn spawn_sweeper(
    store: Arc<dyn CacheStore>,
    every: Duration,
    clock: Arc<dyn Clock>,
    tracker: &TaskTracker,
    cancel: CancellationToken,
) -> JoinHandle<()> {
    tracker.spawn(async move {
        let mut ticks = tokio::time::interval(every.max(MIN_EVERY));
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                _ = ticks.tick() => {}
            }
            let now = clock.now();
            // A sweep in progress also stops on cancellation.
            let swept = tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                swept = store.sweep(now) => swept,
            };
            match swept {
                Ok(0) => {}
                Ok(deleted) => tracing::debug!(deleted, "swept expired cache entries"),
                Err(error) => tracing::warn!(%error, "sweeping the cache failed"),
            }
        }
    })
}
