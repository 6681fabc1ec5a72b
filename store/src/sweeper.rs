//! The sweeper: one tracked task that deletes expired cache entries every
//! so often until its token is cancelled, and, on a whole store, deletes
//! stored results expired more than an hour ago and, with a retention
//! period, clears the step outputs of runs finished longer ago than that
//! (the runs themselves stay), then the cached payloads only those outputs
//! pointed at. The task holds the handles it sweeps (`Cache`, `Results`,
//! `Runs`), never the whole `Db`. The first sweep
//! runs at once; a failed sweep is logged and tried again at the next tick.
//! A one-shot command sweeps once, after its work ([`sweep_store_once`]).

use std::sync::Arc;
use std::time::Duration;

use dragnet_core::ports::cache::CacheStore;

use crate::cache::Cache;
use crate::db::Db;
use crate::results::Results;
use crate::runs::Runs;
use chrono::{DateTime, Utc};
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
        cache: db.cache(),
        results: db.results(),
        runs: db.runs(),
        keep: keep_outputs,
    });
    spawn(Arc::new(db.cache()), outputs, every, clock, tracker, cancel)
}

/// What the sweeper of a whole store sweeps besides the cache.
struct Outputs {
    /// For the cached payloads that cleared outputs pointed at.
    cache: Cache,
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
            // A sweep in progress also stops on cancellation.
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                _ = sweep(store.as_ref(), outputs.as_ref(), clock.now()) => {}
            }
        }
    })
}

/// One sweep of a whole store at `clock`'s now, on the calling task: what
/// [`spawn_store_sweeper`] does at each tick. A one-shot command sweeps
/// once this way after its work, so the sweep neither races the work for
/// connections nor delays it. Failures are logged, never returned.
pub async fn sweep_store_once(db: &Db, keep_outputs: Option<Duration>, clock: &dyn Clock) {
    let outputs = Outputs {
        cache: db.cache(),
        results: db.results(),
        runs: db.runs(),
        keep: keep_outputs,
    };
    sweep(&db.cache(), Some(&outputs), clock.now()).await;
}

/// One pass: expired cache entries, then (on a whole store) expired stored
/// results and step outputs past their retention.
async fn sweep(store: &dyn CacheStore, outputs: Option<&Outputs>, now: DateTime<Utc>) {
    match store.sweep(now).await {
        Ok(0) => {}
        Ok(deleted) => tracing::debug!(deleted, "swept expired cache entries"),
        Err(error) => tracing::warn!(%error, "sweeping the cache failed"),
    }
    let Some(Outputs {
        cache,
        results,
        runs,
        keep,
    }) = outputs
    else {
        return;
    };
    match results.sweep_results(now).await {
        Ok(0) => {}
        Ok(deleted) => tracing::debug!(deleted, "swept expired stored results"),
        Err(error) => tracing::warn!(%error, "sweeping stored results failed"),
    }
    let Some(before) = keep
        .and_then(|keep| chrono::Duration::from_std(keep).ok())
        .and_then(|keep| now.checked_sub_signed(keep))
    else {
        return;
    };
    match runs.prune_outputs(before).await {
        Ok(0) => {}
        Ok(steps) => {
            tracing::debug!(steps, "cleared step outputs past their retention");
            // Outputs served from the cache pointed at cached payloads.
            if let Err(error) = cache.collect_payloads().await {
                tracing::warn!(%error, "collecting unused cache payloads failed");
            }
        }
        Err(error) => tracing::warn!(%error, "clearing old step outputs failed"),
    }
}
