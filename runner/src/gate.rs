//! Concurrency slots: at most `max_running_runs` runs of the server run at
//! once, and at most a workflow's `concurrency` runs of it; later runs
//! wait, queued, in the order they came (tokio's semaphores are fair). A
//! run takes its workflow's slot first, so a run held by its own
//! workflow's limit does not keep a server slot from others. A workflow's
//! limit applies as its latest run read it: a new version with another
//! limit starts a new count, and runs already holding slots keep them.
//! A server with no slots runs nothing itself: it never claims a run.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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
    _server: OwnedSemaphorePermit,
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

    /// Waits for the run's slots.
    pub async fn enter(&self, team_id: &str, workflow: &str, limit: Option<NonZeroU32>) -> Slot {
        let workflow = match limit {
            Some(n) => self
                .workflow(team_id, workflow, n)
                .acquire_owned()
                .await
                .ok(),
            None => None,
        };
        // The semaphores are never closed, so acquiring only waits.
        let server = loop {
            if let Ok(p) = self.server.clone().acquire_owned().await {
                break p;
            }
        };
        Slot {
            _workflow: workflow,
            _server: server,
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
        let first = gate.enter("t", "w", one).await;
        let waiting = tokio::time::timeout(Duration::from_millis(50), gate.enter("t", "w", one));
        assert!(waiting.await.is_err(), "a second run of w waits");
        let other = tokio::time::timeout(Duration::from_millis(50), gate.enter("t", "v", one));
        assert!(other.await.is_ok(), "another workflow runs");
        drop(first);
        let next = tokio::time::timeout(Duration::from_millis(50), gate.enter("t", "w", one));
        assert!(
            next.await.is_ok(),
            "w's next run starts once the first ends"
        );
    }
}
