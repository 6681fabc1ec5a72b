//! The handle runs are started through: the store, the settings, the
//! clock, the runs this process is running and its concurrency slots, the
//! counters its runs feed, the workflow versions it compiled, the tracker
//! its tasks are spawned on, the two tokens that stop them, and the notice
//! an ended run gives the claimer. The API's run requests, the scheduler
//! and the claim passes each hold one (never the API's state).

use std::sync::Arc;

use dragnet_core::clock::Clock;
use dragnet_store::{Db, LeaseLength};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::compile::Compiled;
use crate::config::{RunnerConfig, TickClock};
use crate::gate::Gate;
use crate::live::LiveRuns;
use crate::metrics::Metrics;

/// Starts and tracks runs; cloning is cheap.
#[derive(Clone)]
pub struct Launcher(Arc<Inner>);

struct Inner {
    db: Db,
    config: RunnerConfig,
    clock: Arc<dyn Clock>,
    live: LiveRuns,
    gate: Gate,
    metrics: Arc<Metrics>,
    /// Workflow versions compiled here, kept for the next run of each.
    compiled: Compiled,
    tracker: TaskTracker,
    /// Cancelled when this process stops taking work.
    stopping: CancellationToken,
    /// Cancelled when every background task must end now.
    halt: CancellationToken,
    /// Who this process is when it holds a lease: host, pid and a random
    /// tag (a pid can be reused).
    lease_owner: String,
    /// Told when a run here ends and gives its slots back, so a run queued
    /// in the store is claimed then, not at the next pass.
    slot_freed: Notify,
}

impl Launcher {
    /// Runs on `db` with `config`, their tasks on `tracker`; `halt` is the
    /// root token (cancelled when everything must stop at once).
    pub fn new(
        db: Db,
        config: RunnerConfig,
        clock: Arc<dyn Clock>,
        tracker: TaskTracker,
        halt: CancellationToken,
    ) -> Launcher {
        Launcher(Arc::new(Inner {
            db,
            gate: Gate::new(config.max_running_runs),
            metrics: Arc::new(Metrics::default()),
            compiled: Compiled::default(),
            config,
            clock,
            live: LiveRuns::default(),
            tracker,
            stopping: CancellationToken::new(),
            slot_freed: Notify::new(),
            halt,
            lease_owner: format!(
                "{}:{}:{:08x}",
                dragnet_store::hostname(),
                std::process::id(),
                rand::random::<u32>()
            ),
        }))
    }

    /// The claim a run this process submits is written with: this
    /// process's while it has a free slot, else none — the run is queued
    /// for any process with room to claim.
    pub fn claim_on_submit(&self) -> Option<(&str, LeaseLength)> {
        self.gate()
            .has_free_slot()
            .then(|| (self.lease_owner(), self.config().lease))
    }

    /// Whether a claim pass may take one more run: fewer runs here than
    /// `max_running_runs`, and a slot free.
    pub fn can_claim(&self) -> bool {
        self.live().all().len() < self.config().max_running_runs && self.gate().has_free_slot()
    }

    /// Told when a run here has ended and given its slots back (a claimer
    /// waiting on it makes a pass).
    pub(crate) fn slot_freed(&self) -> &Notify {
        &self.0.slot_freed
    }

    /// Who this process is on the leases it holds.
    pub fn lease_owner(&self) -> &str {
        &self.0.lease_owner
    }

    pub fn db(&self) -> &Db {
        &self.0.db
    }

    pub fn config(&self) -> &RunnerConfig {
        &self.0.config
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.0.clock
    }

    pub fn live(&self) -> &LiveRuns {
        &self.0.live
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.0.metrics
    }

    /// The workflow versions compiled here (`compile::version` keeps them).
    pub fn compiled(&self) -> &Compiled {
        &self.0.compiled
    }

    pub(crate) fn gate(&self) -> &Gate {
        &self.0.gate
    }

    pub fn tracker(&self) -> &TaskTracker {
        &self.0.tracker
    }

    /// Cancelled once this process stops taking work.
    pub fn stopping(&self) -> &CancellationToken {
        &self.0.stopping
    }

    /// Where schedules read the time.
    pub fn tick_clock(&self) -> TickClock {
        self.0
            .config
            .scheduler
            .as_ref()
            .map_or(TickClock::Database, |s| s.clock.clone())
    }

    /// The root token: cancelled when everything must stop at once.
    pub fn halt(&self) -> &CancellationToken {
        &self.0.halt
    }

    /// Tells every claimer listening that a run can be claimed now.
    pub async fn announce(&self) {
        if let Err(error) = self.db().leases().notify_claimable().await {
            tracing::debug!(%error, "telling claimers about a run");
        }
    }
}
