//! The writer task behind `StoreObserver`: applies the observer's events to
//! the store in order and beats the heartbeat of the run in progress.
//! Events that are already queued, and step events that come within
//! `LINGER` (2 ms) of the first, are taken together (up to `MAX_BATCH`):
//! the steps they finish are written in one transaction, and a step that
//! starts and finishes within one batch is written once, finished. Nothing
//! here panics or stops on a failed write; failures are logged.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use dragnet_core::clock::Clock;
use dragnet_engine::run::{RunRecord, StepRecord, StepStatus};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::observer::{Event, ObserverOptions};
use crate::runs::Runs;

/// The most queued events taken in one batch.
const MAX_BATCH: usize = 256;

/// How long the writer waits for more step events once one came, so that
/// steps finishing in a burst are written in one transaction (a group
/// commit). Only step events wait: a run's start, its end, a flush and
/// `Close` are written as soon as they come.
const LINGER: Duration = Duration::from_millis(2);

/// The pauses after each failed try of a run's final write (four tries).
const FINAL_WRITE_RETRIES: [Duration; 4] = [
    Duration::from_millis(100),
    Duration::from_millis(500),
    Duration::from_secs(2),
    Duration::ZERO,
];

/// The shortest heartbeat period accepted.
const MIN_HEARTBEAT: Duration = Duration::from_millis(10);

/// The run being written.
struct Current {
    /// What the writer knows of the run, kept up to date by every event.
    record: RunRecord,
    index: HashMap<String, usize>,
    /// The run's row (and its steps) landed at least once.
    row_written: bool,
    /// Step `i`'s finished record landed.
    step_written: Vec<bool>,
    finished: bool,
}

pub(crate) struct Writer {
    runs: Runs,
    clock: Arc<dyn Clock>,
    options: ObserverOptions,
    current: Option<Current>,
    /// A write was refused: another attempt holds the run; nothing more
    /// is written.
    fenced: bool,
}

impl Writer {
    pub(crate) fn new(runs: Runs, clock: Arc<dyn Clock>, options: ObserverOptions) -> Writer {
        Writer {
            runs,
            clock,
            options,
            current: None,
            fenced: false,
        }
    }

    fn lease(&self) -> Option<&crate::runs::Lease> {
        self.options.fencing.as_ref().map(|f| &f.lease)
    }

    /// Takes note of a write's outcome: a refused write stops the writer
    /// and signals the run; other failures are logged.
    fn settle(&mut self, run_id: &str, event: &'static str, result: crate::error::Result<()>) {
        if let Err(crate::error::Error::Fenced { attempt, .. }) = &result {
            if !self.fenced {
                tracing::warn!(
                    run_id,
                    attempt,
                    event,
                    "another attempt holds the run's lease now: this one stops writing"
                );
            }
            self.fenced = true;
            if let Some(f) = &self.options.fencing {
                f.lost.cancel();
            }
            return;
        }
        log_failure(run_id, event, result);
    }

    /// Runs until `Close`, the channel's end, or cancellation plus grace.
    pub(crate) async fn run(
        mut self,
        mut events: UnboundedReceiver<Event>,
        cancel: CancellationToken,
    ) {
        let period = self.options.heartbeat.max(MIN_HEARTBEAT);
        let mut beats = tokio::time::interval_at(Instant::now() + period, period);
        beats.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    None | Some(Event::Close) => return,
                    Some(event) => {
                        if self.handle_batch(event, &mut events).await {
                            return;
                        }
                    }
                },
                _ = beats.tick(), if self.in_progress() => self.beat().await,
                _ = cancel.cancelled() => break,
            }
        }
        // Cancelled: no more heartbeats, but the run's last events (its
        // final status) are still written if they come within the grace.
        let grace = self.options.grace;
        let drained = tokio::time::timeout(grace, async {
            while self.in_progress() || !events.is_empty() {
                match events.recv().await {
                    None | Some(Event::Close) => return,
                    Some(event) => self.handle(event).await,
                }
            }
        })
        .await;
        if drained.is_err() {
            let run_id = self.current.as_ref().map(|c| c.record.run_id.as_str());
            tracing::warn!(run_id, "run store writer stopped before the run finished");
        }
    }

    /// Handles `first` and the events queued behind it; true when one of
    /// them was `Close` (the ones before it are handled).
    async fn handle_batch(&mut self, first: Event, events: &mut UnboundedReceiver<Event>) -> bool {
        let batch = gather(first, events).await;
        let finished_here: HashSet<String> = batch
            .iter()
            .filter_map(|e| match e {
                Event::StepFinished(record) => Some(record.id.clone()),
                _ => None,
            })
            .collect();
        let mut done: Vec<usize> = Vec::new();
        for event in batch {
            match event {
                Event::StepFinished(record) => {
                    let Some(idx) = self.step_index(&record.id) else {
                        continue;
                    };
                    if let Some(cur) = self.current.as_mut() {
                        cur.record.steps[idx] = *record;
                    }
                    done.push(idx);
                }
                Event::StepStarted(id, at) if finished_here.contains(&id) => {
                    // Finished in this batch too: only its final row is written.
                    if let Some(idx) = self.step_index(&id) {
                        if let Some(cur) = self.current.as_mut() {
                            cur.record.steps[idx].started_at = Some(at);
                        }
                    }
                }
                Event::Close => {
                    self.write_finished(&mut done).await;
                    return true;
                }
                other => {
                    self.write_finished(&mut done).await;
                    self.handle(other).await;
                }
            }
        }
        self.write_finished(&mut done).await;
        false
    }

    /// Writes the steps of `done` (finished in the current batch) in one
    /// transaction, and empties it.
    async fn write_finished(&mut self, done: &mut Vec<usize>) {
        if done.is_empty() {
            return;
        }
        let now = self.clock.now();
        if self.ensure_row(now).await {
            // The whole run, these steps included, was just written.
            done.clear();
            return;
        }
        let lease = self.options.fencing.as_ref().map(|f| &f.lease);
        let Some(cur) = self.current.as_mut().filter(|_| !self.fenced) else {
            done.clear();
            return;
        };
        let steps: Vec<(usize, &StepRecord)> =
            done.iter().map(|&i| (i, &cur.record.steps[i])).collect();
        let written = self
            .runs
            .write_steps_fenced(&cur.record.run_id, &steps, lease)
            .await;
        if written.is_ok() {
            for &i in done.iter() {
                cur.step_written[i] = cur.record.steps[i].is_finished();
            }
        }
        let run_id = cur.record.run_id.clone();
        self.settle(&run_id, "step_finished", written);
        done.clear();
        self.move_watermarks().await;
    }

    /// Stores the watermarks that steps whose records landed carry: each
    /// move is taken from its record once. A move that fails is logged;
    /// the step's next walk reads the same window again.
    async fn move_watermarks(&mut self) {
        let Some(target) = self.options.watermarks.clone() else {
            return;
        };
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        let run_id = cur.record.run_id.clone();
        let moves: Vec<_> = cur
            .record
            .steps
            .iter_mut()
            .zip(&cur.step_written)
            .filter(|(_, written)| **written)
            .filter_map(|(step, _)| step.watermark.take())
            .collect();
        for to in moves {
            if let Err(error) = target.apply(&to).await {
                tracing::warn!(run_id = %run_id, step_id = %to.step, %error,
                    "the step's watermark could not be moved: its next walk reads the same window again");
            }
        }
    }

    fn in_progress(&self) -> bool {
        self.current.as_ref().is_some_and(|c| !c.finished)
    }

    async fn handle(&mut self, event: Event) {
        match event {
            Event::RunStarted(record, now) => {
                let index = record
                    .steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.id.clone(), i))
                    .collect();
                let n = record.steps.len();
                self.current = Some(Current {
                    record: *record,
                    index,
                    row_written: false,
                    step_written: vec![false; n],
                    finished: false,
                });
                self.ensure_row(now).await;
            }
            Event::StepStarted(id, at) => {
                let Some(idx) = self.step_index(&id) else {
                    return;
                };
                let Some(cur) = self.current.as_mut() else {
                    return;
                };
                let step = &mut cur.record.steps[idx];
                step.status = StepStatus::Running;
                step.started_at = Some(at);
                if self.ensure_row(at).await {
                    return;
                }
                let Some(cur) = self.current.as_ref().filter(|_| !self.fenced) else {
                    return;
                };
                let step = &cur.record.steps[idx];
                let written = self
                    .runs
                    .mark_step_running_fenced(
                        &cur.record.run_id,
                        idx,
                        &step.id,
                        step.kind,
                        at,
                        self.lease(),
                    )
                    .await;
                let run_id = cur.record.run_id.clone();
                self.settle(&run_id, "step_started", written);
            }
            Event::StepFinished(record) => {
                let Some(idx) = self.step_index(&record.id) else {
                    return;
                };
                if let Some(cur) = self.current.as_mut() {
                    cur.record.steps[idx] = *record;
                }
                let now = self.clock.now();
                if !self.ensure_row(now).await {
                    self.write_step(idx).await;
                }
            }
            Event::RunFinished(record) => self.finish(*record).await,
            Event::Flush(done) => {
                let _ = done.send(());
            }
            Event::Close => {}
        }
    }

    fn step_index(&self, id: &str) -> Option<usize> {
        let cur = self.current.as_ref()?;
        let idx = cur
            .index
            .get(id)
            .copied()
            .filter(|&i| i < cur.record.steps.len());
        if idx.is_none() {
            tracing::warn!(run_id = %cur.record.run_id, step_id = id, "event for an unknown step");
        }
        idx
    }

    /// Writes the whole run when its row never landed; true if it did so
    /// now (the caller's write is then included).
    async fn ensure_row(&mut self, heartbeat_at: chrono::DateTime<chrono::Utc>) -> bool {
        let Some(cur) = self.current.as_mut() else {
            return false;
        };
        if cur.row_written {
            return false;
        }
        if self.fenced {
            // Nothing of this attempt is written any more: callers skip.
            return true;
        }
        let lease = self.options.fencing.as_ref().map(|f| &f.lease);
        let written = self
            .runs
            .write_run_fenced(&cur.record, &self.options.owner, heartbeat_at, lease)
            .await;
        if written.is_ok() {
            cur.row_written = true;
            for (done, step) in cur.step_written.iter_mut().zip(&cur.record.steps) {
                *done = step.is_finished();
            }
        }
        let (run_id, landed) = (cur.record.run_id.clone(), cur.row_written);
        self.settle(&run_id, "run_started", written);
        if landed {
            self.move_watermarks().await;
        }
        landed
    }

    async fn write_step(&mut self, idx: usize) {
        if self.fenced {
            return;
        }
        let lease = self.options.fencing.as_ref().map(|f| &f.lease);
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        let step = &cur.record.steps[idx];
        let written = self
            .runs
            .write_steps_fenced(&cur.record.run_id, &[(idx, step)], lease)
            .await;
        if written.is_ok() {
            cur.step_written[idx] = step.is_finished();
        }
        let run_id = cur.record.run_id.clone();
        self.settle(&run_id, "step_finished", written);
        self.move_watermarks().await;
    }

    async fn finish(&mut self, record: RunRecord) {
        let now = self.clock.now();
        let known = self.current.as_ref().is_some_and(|c| {
            c.record.run_id == record.run_id && c.step_written.len() == record.steps.len()
        });
        if !known {
            // A run this writer never heard start: write it whole.
            let n = record.steps.len();
            let index = HashMap::new();
            self.current = Some(Current {
                record,
                index,
                row_written: false,
                step_written: vec![false; n],
                finished: false,
            });
        } else if let Some(cur) = self.current.as_mut() {
            cur.record = record;
        }
        if !self.ensure_row(now).await {
            // Steps that ended without their own event (skipped at the end,
            // or failed when their task died) are written now.
            // In one transaction, as a batch of finished steps is.
            let mut pending: Vec<usize> = self.current.as_ref().map_or_else(Vec::new, |cur| {
                (0..cur.record.steps.len())
                    .filter(|&i| !cur.step_written[i])
                    .collect()
            });
            self.write_finished(&mut pending).await;
            if let Some(cur) = self.current.as_ref().filter(|_| !self.fenced) {
                // The final status is what frees the run: a transient
                // failure (a lock, a dropped connection) is retried a few
                // times before the lease's expiry is left to recover it; a
                // refusal or any other failure would fail the same way again.
                let mut written = Ok(());
                for pause in FINAL_WRITE_RETRIES {
                    written = self
                        .runs
                        .write_run_row_fenced(&cur.record, &self.options.owner, now, self.lease())
                        .await;
                    match &written {
                        Err(error) if error.is_transient() => {
                            tracing::debug!(run_id = %cur.record.run_id, %error, "retrying the run's final write");
                            tokio::time::sleep(pause).await;
                        }
                        Err(_) | Ok(()) => break,
                    }
                }
                let run_id = cur.record.run_id.clone();
                self.settle(&run_id, "run_finished", written);
            }
        }
        if let Some(cur) = self.current.as_mut() {
            cur.finished = true;
        }
    }

    async fn beat(&mut self) {
        let now = self.clock.now();
        if self.ensure_row(now).await {
            return;
        }
        let Some(cur) = self.current.as_ref().filter(|_| !self.fenced) else {
            return;
        };
        let run_id = cur.record.run_id.clone();
        // Under a lease, the beat renews it first; a renewal refused means
        // another attempt took the run over.
        if let Some(f) = &self.options.fencing {
            match f.leases.renew_lease(&f.lease, f.length).await {
                Ok(Some(renewal)) => {
                    if renewal.cancel_requested && !f.cancel_requested.is_cancelled() {
                        tracing::info!(run_id = %run_id, "the run's cancellation was asked for");
                        f.cancel_requested.cancel();
                    }
                }
                Ok(None) => {
                    let refused = Err(crate::error::Error::Fenced {
                        run_id: run_id.clone(),
                        attempt: f.lease.attempt,
                    });
                    self.settle(&run_id, "heartbeat", refused);
                    return;
                }
                Err(e) => {
                    log_failure(&run_id, "lease renewal", Err(e));
                    return;
                }
            }
        }
        let beat = self.runs.heartbeat(&run_id, now).await.map(|_| ());
        log_failure(&run_id, "heartbeat", beat);
    }
}

fn log_failure(run_id: &str, event: &'static str, result: crate::error::Result<()>) {
    if let Err(error) = result {
        tracing::warn!(run_id, event, %error, "writing the run record failed");
    }
}

/// `first` and the events behind it, up to [`MAX_BATCH`]: those already
/// queued and, while every one taken is a step event, those that come
/// within [`LINGER`] of the first. Any other event (a run's end, a flush,
/// `Close`) ends the wait at once, so lingering never delays a run's end.
async fn gather(first: Event, events: &mut UnboundedReceiver<Event>) -> Vec<Event> {
    let is_step = |e: &Event| matches!(e, Event::StepStarted(..) | Event::StepFinished(_));
    let mut batch = vec![first];
    drain(&mut batch, events);
    let until = Instant::now() + LINGER;
    let mut lingering = batch.iter().all(is_step);
    while lingering && batch.len() < MAX_BATCH {
        let taken = batch.len();
        match tokio::time::timeout_at(until, events.recv()).await {
            Ok(Some(event)) => {
                batch.push(event);
                drain(&mut batch, events);
            }
            Ok(None) | Err(_) => break,
        }
        lingering = batch[taken..].iter().all(is_step);
    }
    batch
}

/// Moves what is queued into `batch`, up to [`MAX_BATCH`] events.
fn drain(batch: &mut Vec<Event>, events: &mut UnboundedReceiver<Event>) {
    while batch.len() < MAX_BATCH {
        match events.try_recv() {
            Ok(event) => batch.push(event),
            Err(_) => break,
        }
    }
}
