//! Concurrency slots: at most `max_running_runs` runs of the server run at
//! once, and at most a workflow's `concurrency` runs of it; later runs
//! wait, queued, in the order they came. A run takes its place in line
//! ([`Gate::line_up`]) when it is handed to this process, before its task
//! is spawned: tokio's semaphores are fair in the order waiters are first
//! polled, and two runs' tasks may first run in either order (a worker's
//! newest task is not stolen by another worker), so the place is taken by
//! polling once there and then. A run takes its workflow's slot first, so
//! a run held by its own workflow's limit does not keep a server slot from
//! others; it lines up for the server once it holds its workflow's slot.
//! A workflow's limit applies as its latest run read it: a new version
//! with another limit starts a new count, and runs already holding slots
//! keep them. A server with no slots runs nothing itself: it never claims
//! a run.

use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};

/// Each workflow's slots by (team, workflow), with the limit they count.
type WorkflowSlots = HashMap<(String, String), (u32, Arc<Semaphore>)>;

/// The server's slots.
pub struct Gate {
    server: Arc<Semaphore>,
    workflows: Mutex<WorkflowSlots>,
}

/// A run's slots, given back when it is dropped.
pub struct Slot {
    _workflow: Option<OwnedSemaphorePermit>,
    _server: Option<OwnedSemaphorePermit>,
}

/// A run's place in line for its slots; dropping it leaves the line.
pub struct Place {
    /// The workflow's slot when it has a limit.
    workflow: Option<Turn>,
    server: ServerTurn,
}

/// Where a run stands for the server's slot.
enum ServerTurn {
    /// In line already (the run holds its workflow's slot, or needs none).
    InLine(Turn),
    /// Lined up for once the run holds its workflow's slot.
    After(Arc<Semaphore>),
}

/// A permit of one semaphore: held, or waited for with a place in line.
enum Turn {
    Held(OwnedSemaphorePermit),
    Waiting(Acquiring),
}

type Acquiring = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

impl Turn {
    /// Takes a place in `semaphore`'s line now, not when first awaited:
    /// the acquiring future is polled once here, which is when tokio puts
    /// a waiter in line. A later poll with the task's own waker keeps the
    /// place.
    fn line_up(semaphore: Arc<Semaphore>) -> Turn {
        let mut acquiring: Acquiring = Box::pin(semaphore.acquire_owned());
        let mut cx = Context::from_waker(Waker::noop());
        match acquiring.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(permit)) => Turn::Held(permit),
            // Pending, or closed (ours never are): awaited as it stands.
            _ => Turn::Waiting(acquiring),
        }
    }

    /// The permit, once it is this place's turn (none if the semaphore
    /// was closed, which the gate's never are).
    async fn take(self) -> Option<OwnedSemaphorePermit> {
        match self {
            Turn::Held(permit) => Some(permit),
            Turn::Waiting(acquiring) => acquiring.await.ok(),
        }
    }
}

impl Gate {
    pub fn new(max_running_runs: usize) -> Gate {
        Gate {
            server: Arc::new(Semaphore::new(max_running_runs)),
            workflows: Mutex::new(HashMap::new()),
        }
    }

    fn workflow(&self, team_id: &str, workflow: &str, limit: NonZeroU32) -> Arc<Semaphore> {
        let mut map = self.workflows.lock().unwrap_or_else(|p| p.into_inner());
        let key = (team_id.to_string(), workflow.to_string());
        match map.get(&key) {
            Some((n, sem)) if *n == limit.get() => sem.clone(),
            _ => {
                let sem = Arc::new(Semaphore::new(limit.get() as usize));
                map.insert(key, (limit.get(), sem.clone()));
                sem
            }
        }
    }

    /// Whether a run could take a server slot now (never with no slots:
    /// a server that runs nothing itself, leaving its runs to workers).
    pub fn has_free_slot(&self) -> bool {
        self.server.available_permits() > 0
    }

    /// Takes the run's place in line for its slots, now: runs lined up
    /// one after another enter in that order, whenever each is awaited.
    pub fn line_up(&self, team_id: &str, workflow: &str, limit: Option<NonZeroU32>) -> Place {
        let workflow = limit.map(|n| Turn::line_up(self.workflow(team_id, workflow, n)));
        let server = match workflow {
            Some(Turn::Waiting(_)) => ServerTurn::After(self.server.clone()),
            Some(Turn::Held(_)) | None => ServerTurn::InLine(Turn::line_up(self.server.clone())),
        };
        Place { workflow, server }
    }
}

impl Place {
    /// Waits for the run's turn: its workflow's slot, then the server's.
    pub async fn enter(self) -> Slot {
        let workflow = match self.workflow {
            Some(turn) => turn.take().await,
            None => None,
        };
        let server = match self.server {
            ServerTurn::InLine(turn) => turn,
            ServerTurn::After(semaphore) => Turn::line_up(semaphore),
        };
        Slot {
            _workflow: workflow,
            _server: server.take().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_workflow_limit_queues_its_own_runs_only() {
        let gate = Gate::new(2);
        let one = NonZeroU32::new(1);
        let enter = |workflow| gate.line_up("t", workflow, one).enter();
        let first = enter("w").await;
        let waiting = tokio::time::timeout(Duration::from_millis(50), enter("w"));
        assert!(waiting.await.is_err(), "a second run of w waits");
        let other = tokio::time::timeout(Duration::from_millis(50), enter("v"));
        assert!(other.await.is_ok(), "another workflow runs");
        drop(first);
        let next = tokio::time::timeout(Duration::from_millis(50), enter("w"));
        assert!(
            next.await.is_ok(),
            "w's next run starts once the first ends"
        );
    }

    /// Lines up a run that holds the slot, then `second` and `third`;
    /// awaits the third's place before the second's, frees the slot, and
    /// returns the order the two entered in.
    async fn entry_order(gate: &Gate, limit: Option<NonZeroU32>) -> Vec<&'static str> {
        let held = gate.line_up("t", "w", limit).enter().await;
        let second = gate.line_up("t", "w", limit);
        let third = gate.line_up("t", "w", limit);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut tasks = tokio::task::JoinSet::new();
        for (name, place) in [("third", third), ("second", second)] {
            let tx = tx.clone();
            tasks.spawn(async move {
                let _slot = place.enter().await;
                let _ = tx.send(name);
            });
            // The task runs until it waits for its slot.
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
        }
        assert!(rx.try_recv().is_err(), "both wait while the slot is held");
        drop((tx, held));
        let mut order = Vec::new();
        while let Some(name) = rx.recv().await {
            order.push(name);
        }
        tasks.join_all().await;
        order
    }

    // The flake in api/tests/runs.rs (runs_beyond_a_limit_wait_queued_in_order):
    // a run's task first ran after the next run's, and took its slot first.
    #[tokio::test]
    async fn runs_of_a_limited_workflow_enter_in_the_order_they_lined_up() {
        let order = entry_order(&Gate::new(2), NonZeroU32::new(1)).await;
        assert_eq!(order, ["second", "third"]);
    }

    #[tokio::test]
    async fn runs_enter_the_server_in_the_order_they_lined_up() {
        let order = entry_order(&Gate::new(1), None).await;
        assert_eq!(order, ["second", "third"]);
    }

    #[tokio::test]
    async fn a_place_given_up_leaves_the_line() {
        let gate = Gate::new(1);
        let held = gate.line_up("t", "w", None).enter().await;
        let gone = gate.line_up("t", "w", None);
        let next = gate.line_up("t", "w", None);
        drop(gone);
        drop(held);
        let entered = tokio::time::timeout(Duration::from_secs(5), next.enter()).await;
        assert!(entered.is_ok(), "the place after one given up enters");
        assert!(!gate.has_free_slot());
    }
}
