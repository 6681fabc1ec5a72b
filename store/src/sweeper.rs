//! The sweeper: one tracked task that deletes expired cache entries every
//! so often until its token is cancelled, and, on a whole store, deletes
//! stored results expired more than an hour ago and, with a retention
//! period, clears the step outputs of runs finished longer ago than that
//! (the runs themselves stay). The task holds the handles it sweeps
//! (`Cache`, `Results`, `Runs`), never the whole `Db`. The first sweep
//! runs at once; a failed sweep is logged and tried again at the next tick.

use std::sync::Arc;
use std::time::Duration;

use dragnet_core::ports::cache::CacheStore;

use crate::db::Db;
use crate::results::Results;
use crate::runs::Runs;
use dragnet_core::clock::Clock;
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
    spawn(store, None, every, clock, tracker, cancel)
}

/// Spawns the sweeper of a whole store: expired cache entries as
/// `spawn_sweeper` does, and the outputs of runs finished more than
/// `keep_outputs` ago (never, when `None`), and stored results expired
/// more than an hour ago.
pub fn spawn_store_sweeper(
    db: &Db,
    every: Duration,
    keep_outputs: Option<Duration>,
    clock: Arc<dyn Clock>,
    tracker: &TaskTracker,
    cancel: CancellationToken,
) -> JoinHandle<()> {
    let outputs = Some(Outputs {
        results: db.results(),
        runs: db.runs(),
        keep: keep_outputs,
    });
    spawn(Arc::new(db.cache()), outputs, every, clock, tracker, cancel)
}

/// What the sweeper of a whole store sweeps besides the cache.
struct Outputs {
    results: Results,
    runs: Runs,
    /// How long runs' step outputs are kept (forever, when `None`).
    keep: Option<Duration>,
}

fn spawn(
    store: Arc<dyn CacheStore>,
    outputs: Option<Outputs>,
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
            let Some(Outputs {
                results,
                runs,
                keep,
            }) = &outputs
            else {
                continue;
            };
            let results = tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                swept = results.sweep_results(now) => swept,
            };
            match results {
                Ok(0) => {}
                Ok(deleted) => tracing::debug!(deleted, "swept expired stored results"),
                Err(error) => tracing::warn!(%error, "sweeping stored results failed"),
            }
            let Some(keep) = keep else {
                continue;
            };
            let Some(before) = chrono::Duration::from_std(*keep)
                .ok()
                .and_then(|keep| now.checked_sub_signed(keep))
            else {
                continue;
            };
            let pruned = tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                pruned = runs.prune_outputs(before) => pruned,
            };
            match pruned {
                Ok(0) => {}
                Ok(steps) => tracing::debug!(steps, "cleared step outputs past their retention"),
                Err(error) => tracing::warn!(%error, "clearing old step outputs failed"),
            }
        }
    })
}
