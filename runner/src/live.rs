//! The runs this process is running, each with its cancellation token and
//! the events of its stream. Events are numbered from 1 as the run emits
//! them and kept in memory while it runs; when it ends they are written to
//! the store before the run leaves this registry, so a reader finds every
//! event either here or there. A run handed back at shutdown (SPEC §9) is
//! another process's to finish: what its cancellation produces is neither
//! stored nor streamed, and its stream ends saying it was handed back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use dragnet_core::progress::ProgressEvent;
use dragnet_engine::run::{RunObserver, RunRecord, RunStatus, StepRecord, StepStatus};
use dragnet_store::RunEvent;
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The SSE event names.
pub const EVENT_RUN: &str = "run";
pub const EVENT_STEP: &str = "step";
pub const EVENT_PROGRESS: &str = "data-tool-loop-progress";
pub const EVENT_END: &str = "end";

/// One running run.
pub struct LiveRun {
    pub run_id: String,
    pub team_id: String,
    /// Cancels the run (a cancel request, or shutdown past its grace).
    pub cancel: CancellationToken,
    /// Set when shutdown handed it back: nothing more of this attempt is
    /// recorded; the next claimer resumes it.
    handed_back: AtomicBool,
    /// Set when its run begins (it has its slots).
    started: AtomicBool,
    events: Mutex<Vec<RunEvent>>,
    /// The number of the latest event, and whether the run has ended.
    latest: watch::Sender<(u64, bool)>,
}

impl LiveRun {
    fn events(&self) -> MutexGuard<'_, Vec<RunEvent>> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Events numbered after `after`, and whether the run has ended.
    pub fn events_after(&self, after: u64) -> (Vec<RunEvent>, bool) {
        let events = self.events();
        let ended = self.latest.borrow().1;
        let start = events.partition_point(|e| e.seq <= after);
        (events[start..].to_vec(), ended)
    }

    /// Every event, for the store.
    pub fn all_events(&self) -> Vec<RunEvent> {
        self.events().clone()
    }

    /// Waits for news after the state `seen` was read.
    pub fn watch(&self) -> watch::Receiver<(u64, bool)> {
        self.latest.subscribe()
    }

    /// Whether it still waits for a slot (its run has not begun).
    pub fn is_queued(&self) -> bool {
        !self.started.load(Ordering::SeqCst) && !self.latest.borrow().1
    }

    /// Whether shutdown handed it back.
    pub fn is_handed_back(&self) -> bool {
        self.handed_back.load(Ordering::SeqCst)
    }

    /// The first event: the run exists and waits for a slot.
    pub fn announce_queued(&self, workflow: &str) {
        self.push(
            EVENT_RUN,
            json!({"runId": self.run_id, "workflow": workflow, "status": RunStatus::Queued}),
            false,
        );
    }

    /// Stops the run because the server is shutting down: it is handed
    /// back, not ended.
    pub fn hand_back(&self) {
        self.handed_back.store(true, Ordering::SeqCst);
        self.cancel.cancel();
    }

    fn push(&self, event: &str, data: Value, ends: bool) {
        let mut events = self.events();
        let seq = events.len() as u64 + 1;
        events.push(RunEvent {
            seq,
            event: event.to_string(),
            data: data.to_string(),
        });
        drop(events);
        self.latest.send_replace((seq, ends));
    }
}

/// The registry of running runs.
#[derive(Default)]
pub struct LiveRuns(Mutex<HashMap<String, Arc<LiveRun>>>);

impl LiveRuns {
    fn map(&self) -> MutexGuard<'_, HashMap<String, Arc<LiveRun>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a run about to start.
    pub fn add(&self, run_id: &str, team_id: &str, cancel: CancellationToken) -> Arc<LiveRun> {
        let run = Arc::new(LiveRun {
            run_id: run_id.to_string(),
            team_id: team_id.to_string(),
            cancel,
            handed_back: AtomicBool::new(false),
            started: AtomicBool::new(false),
            events: Mutex::new(Vec::new()),
            latest: watch::channel((0, false)).0,
        });
        self.map().insert(run_id.to_string(), run.clone());
        run
    }

    pub fn get(&self, run_id: &str) -> Option<Arc<LiveRun>> {
        self.map().get(run_id).cloned()
    }

    pub fn remove(&self, run_id: &str) {
        self.map().remove(run_id);
    }

    /// Every running run.
    pub fn all(&self) -> Vec<Arc<LiveRun>> {
        self.map().values().cloned().collect()
    }

    /// Runs running and runs queued.
    pub fn counts(&self) -> (usize, usize) {
        let runs = self.all();
        let queued = runs.iter().filter(|r| r.is_queued()).count();
        (runs.len() - queued, queued)
    }

    pub fn is_empty(&self) -> bool {
        self.map().is_empty()
    }
}

/// The run's observer: turns what the engine reports into stream events
/// and passes it on to every observer after it (`next`, the store) — except
/// the ends that a hand-back's cancellation produces, which are not this
/// attempt's to record.
pub struct StreamObserver {
    pub run: Arc<LiveRun>,
    pub next: Arc<dyn RunObserver>,
    /// The run's final record, held until `end` sends it: the stream ends
    /// only once the record is stored, so a client reading the run after
    /// `end` finds it ended.
    last: Mutex<Option<RunRecord>>,
}

impl StreamObserver {
    pub fn new(run: Arc<LiveRun>, next: Arc<dyn RunObserver>) -> StreamObserver {
        StreamObserver {
            run,
            next,
            last: Mutex::new(None),
        }
    }

    /// The stream's last event, once the run's record is stored.
    pub fn end(&self) {
        if self.handed_back() {
            let data =
                json!({"runId": self.run.run_id, "status": RunStatus::Queued, "handedBack": true});
            self.run.push(EVENT_END, data, true);
            return;
        }
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(record) = last {
            self.run.push(EVENT_END, end_json(&record), true);
        }
    }

    fn handed_back(&self) -> bool {
        self.run.is_handed_back()
    }
}

/// A step's record as its stream event shows it (never its output).
pub fn step_json(step: &StepRecord) -> Value {
    let mut v = json!({
        "step": step.id,
        "status": step.status,
        "attempts": step.attempts,
        "durationMs": step.duration_ms,
    });
    if let Some(obj) = v.as_object_mut() {
        if let Some(reason) = &step.reason {
            obj.insert("reason".into(), json!(reason));
        }
        if let Some(verdict) = &step.verdict {
            obj.insert("verdict".into(), json!(verdict));
        }
    }
    v
}

/// The final event of a run.
pub fn end_json(run: &RunRecord) -> Value {
    json!({"runId": run.run_id, "status": run.status, "durationMs": run.duration_ms})
}

impl RunObserver for StreamObserver {
    fn run_started(&self, record: &RunRecord) {
        self.run.started.store(true, Ordering::SeqCst);
        self.run.push(
            EVENT_RUN,
            json!({"runId": record.run_id, "workflow": record.workflow, "status": record.status}),
            false,
        );
        self.next.run_started(record);
    }

    fn run_finished(&self, record: &RunRecord) {
        if self.handed_back() {
            return;
        }
        self.next.run_finished(record);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(record.clone());
    }

    fn step_started(&self, step: &str) {
        self.run.push(
            EVENT_STEP,
            json!({"step": step, "status": "running"}),
            false,
        );
        self.next.step_started(step);
    }

    fn step_progress(&self, step: &str, event: &ProgressEvent) {
        let mut data = event.to_json();
        if let Some(obj) = data.as_object_mut() {
            obj.insert("step".into(), json!(step));
        }
        self.run.push(EVENT_PROGRESS, data, false);
        self.next.step_progress(step, event);
    }

    fn step_finished(&self, record: &StepRecord) {
        // A step the hand-back cancelled runs again on the next attempt.
        if self.handed_back() && record.status == StepStatus::Cancelled {
            return;
        }
        self.run.push(EVENT_STEP, step_json(record), false);
        self.next.step_finished(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_numbered_and_read_after_an_id() {
        let runs = LiveRuns::default();
        let run = runs.add("r1", "t1", CancellationToken::new());
        run.push(EVENT_RUN, json!({}), false);
        run.push(EVENT_STEP, json!({"step": "a"}), false);
        run.push(EVENT_END, json!({}), true);
        let (after_one, ended) = run.events_after(1);
        assert!(ended);
        assert_eq!(
            after_one.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(run.events_after(3).0.len(), 0);
        assert!(runs.get("r1").is_some());
        runs.remove("r1");
        assert!(runs.get("r1").is_none());
    }
}
