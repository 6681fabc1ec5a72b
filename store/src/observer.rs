//! `StoreObserver`: run records written as the run progresses. The engine's
//! observer calls are synchronous, so each becomes an event on a channel to
//! one writer task (tracked, cancellable) that writes it; the writer also
//! beats the running run's heartbeat. A failed write is logged and the
//! writer goes on: every later write is a whole-row upsert, and a run whose
//! first row never landed is written whole again before its next write.
//! A run executed under a lease has every write fenced by its attempt; the
//! first refused write (or failed renewal) stops the writer for good and
//! says so through `Fencing::lost`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use dragnet_core::clock::Clock;
use dragnet_core::progress::ProgressEvent;
use dragnet_engine::run::{RunObserver, RunRecord, StepRecord};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::runs::{Lease, LeaseLength, Leases, RunOwner, Runs};
use crate::writer::Writer;

/// How a `StoreObserver` behaves.
#[derive(Debug, Clone)]
pub struct ObserverOptions {
    /// How often the running run's heartbeat is written (at least 10 ms).
    pub heartbeat: Duration,
    /// After cancellation, how long the writer still waits for the run's
    /// last events (its final status) before it stops.
    pub grace: Duration,
    /// Stored with the run; `mark_interrupted` reads it.
    pub owner: RunOwner,
    /// The lease the run is executed under (server runs): every write is
    /// fenced by it, and heartbeats renew it.
    pub fencing: Option<Fencing>,
    /// Where incremental steps' watermarks move once their records land
    /// (the run's team's); none moves nothing.
    pub watermarks: Option<crate::watermarks::TeamWatermarks>,
}

/// A run's lease, as its writer uses it.
#[derive(Debug, Clone)]
pub struct Fencing {
    pub lease: Lease,
    /// Where each heartbeat renews it.
    pub leases: Leases,
    /// How far each heartbeat extends the lease.
    pub length: LeaseLength,
    /// Cancelled when a write is refused or a renewal fails: another
    /// attempt holds the run now, and this one must stop.
    pub lost: CancellationToken,
    /// Cancelled when a renewal reads that someone asked for the run to be
    /// cancelled (from another process, say).
    pub cancel_requested: CancellationToken,
}

impl Default for ObserverOptions {
    fn default() -> Self {
        ObserverOptions {
            heartbeat: Duration::from_secs(5),
            grace: Duration::from_secs(5),
            owner: RunOwner::this_process(),
            fencing: None,
            watermarks: None,
        }
    }
}

/// What the engine told the observer, in order.
pub(crate) enum Event {
    RunStarted(Box<RunRecord>, DateTime<Utc>),
    StepStarted(String, DateTime<Utc>),
    StepFinished(Box<StepRecord>),
    RunFinished(Box<RunRecord>),
    /// Answered once every earlier event is written.
    Flush(oneshot::Sender<()>),
    /// No more events: the writer stops after the earlier ones.
    Close,
}

/// Writes one run at a time to the store's `Runs` as it progresses. Give it to the
/// executor as its observer; call `close` after the run returns.
pub struct StoreObserver {
    events: mpsc::UnboundedSender<Event>,
    clock: Arc<dyn Clock>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl StoreObserver {
    /// Starts the writer task on `tracker`; `cancel` stops it (after a
    /// grace period for the run's final events).
    pub fn start(
        runs: Runs,
        clock: Arc<dyn Clock>,
        options: ObserverOptions,
        tracker: &TaskTracker,
        cancel: CancellationToken,
    ) -> StoreObserver {
        let (events, receiver) = mpsc::unbounded_channel();
        let writer = Writer::new(runs, clock.clone(), options);
        let handle = tracker.spawn(writer.run(receiver, cancel));
        StoreObserver {
            events,
            clock,
            writer: Mutex::new(Some(handle)),
        }
    }

    /// Waits until every event sent so far is written (or failed and was
    /// logged).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.events.send(Event::Flush(done)).is_ok() {
            // An error means the writer stopped: nothing is left to wait for.
            let _ = wait.await;
        }
    }

    /// Writes what is queued, then stops the writer and waits for it. Call
    /// it after the run returns; later events are dropped (and logged).
    pub async fn close(&self) {
        let _ = self.events.send(Event::Close);
        let handle = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(handle) = handle {
            if let Err(error) = handle.await {
                tracing::error!(%error, "the run store writer ended abnormally");
            }
        }
    }

    fn send(&self, event: Event) {
        if self.events.send(event).is_err() {
            tracing::warn!("run store writer is closed: an event of the run was not written");
        }
    }
}

impl RunObserver for StoreObserver {
    fn run_started(&self, record: &RunRecord) {
        self.send(Event::RunStarted(
            Box::new(record.clone()),
            self.clock.now(),
        ));
    }

    fn step_started(&self, step: &str) {
        self.send(Event::StepStarted(step.to_string(), self.clock.now()));
    }

    fn step_progress(&self, _step: &str, _event: &ProgressEvent) {}

    fn step_finished(&self, record: &StepRecord) {
        self.send(Event::StepFinished(Box::new(record.clone())));
    }

    fn run_finished(&self, record: &RunRecord) {
        self.send(Event::RunFinished(Box::new(record.clone())));
    }
}
