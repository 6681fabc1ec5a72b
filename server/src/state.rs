//! What every handler shares: the store, the server's settings, the clock,
//! the runs this process is running, and the tokens and tracker that shut
//! it all down.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dragnet_steps::cache::CacheMode;
use dragnet_steps::clock::Clock;
use dragnet_steps::Limits;
use dragnet_store::{Db, LeaseLength};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::gate::Gate;
use crate::live::LiveRuns;
use crate::metrics::Metrics;
use crate::scheduler::{SchedulerConfig, TickClock};

/// How the server runs workflows.
#[derive(Clone)]
pub struct ServerConfig {
    /// Where submitted workflows' `openapi:` paths are read from (besides
    /// documents uploaded with them); nothing outside it is read.
    pub workflows_dir: Option<PathBuf>,
    /// Bounds of every tool call.
    pub limits: Limits,
    /// Steps of one run running at once.
    pub step_concurrency: usize,
    /// The cache, for steps that opt in; entries are scoped to the team.
    pub cache_mode: CacheMode,
    /// What teams' secrets are sealed under (`DRAGNET_SECRETS_KEY`): a
    /// run's credentials are its team's secrets, never this process's
    /// environment. Without it no secret can be set, and a workflow naming
    /// one is refused.
    pub secrets: Option<Arc<dragnet_steps::http::Sealer>>,
    /// The largest request body accepted (a workflow with its documents).
    pub body_limit: usize,
    /// On shutdown, how long running runs may go on before they are
    /// stopped and handed back.
    pub shutdown_grace: Duration,
    /// The cron scheduler; `None` runs no passes by itself (tests call
    /// `scheduler::pass`).
    pub scheduler: Option<SchedulerConfig>,
    /// Runs running at once on this server; more wait, queued. With 0 it
    /// runs none itself: the runs it submits are claimed by workers.
    pub max_running_runs: usize,
    /// The bearer token `GET /metrics` asks for; without one it is off.
    pub metrics_token: Option<dragnet_steps::http::Secret>,
    /// How long a lease on a run lasts between heartbeats (which come at a
    /// third of it): a run whose process stops renewing it is taken over
    /// this long after its last renewal.
    pub lease: LeaseLength,
    /// How often this process looks for runs to claim (queued ones nobody
    /// started, and ones whose lease expired); `None` never looks.
    pub claim_every: Option<Duration>,
    /// Where teams' providers may point (`[server] upstream_hosts`):
    /// checked by name when a workflow is pushed, and by every resolved
    /// address when a run calls it. The default refuses only link-local
    /// and cloud metadata addresses.
    pub upstream_hosts: Arc<dragnet_steps::http::HostPolicy>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            workflows_dir: None,
            limits: Limits::default(),
            step_concurrency: 4,
            cache_mode: CacheMode::On,
            secrets: None,
            body_limit: 32 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(30),
            scheduler: Some(SchedulerConfig::default()),
            max_running_runs: 16,
            metrics_token: None,
            lease: LeaseLength::DEFAULT,
            claim_every: Some(Duration::from_secs(1)),
            upstream_hosts: Arc::default(),
        }
    }
}

/// The shared state; cloning is cheap.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

struct Inner {
    db: Db,
    config: ServerConfig,
    clock: Arc<dyn Clock>,
    live: LiveRuns,
    gate: Gate,
    metrics: Arc<Metrics>,
    tracker: TaskTracker,
    /// Cancelled when the server stops taking work.
    stopping: CancellationToken,
    /// Cancelled when every background task must end now.
    halt: CancellationToken,
    /// Who this process is when it holds a lease: host, pid and a random
    /// tag (a pid can be reused).
    lease_owner: String,
}

impl AppState {
    pub fn new(
        db: Db,
        config: ServerConfig,
        clock: Arc<dyn Clock>,
        tracker: TaskTracker,
        halt: CancellationToken,
    ) -> AppState {
        AppState(Arc::new(Inner {
            db,
            gate: Gate::new(config.max_running_runs),
            metrics: Arc::new(Metrics::default()),
            config,
            clock,
            live: LiveRuns::default(),
            tracker,
            stopping: CancellationToken::new(),
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

    /// Who this process is on the leases it holds.
    pub fn lease_owner(&self) -> &str {
        &self.0.lease_owner
    }

    pub fn db(&self) -> &Db {
        &self.0.db
    }

    pub fn config(&self) -> &ServerConfig {
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

    pub fn gate(&self) -> &Gate {
        &self.0.gate
    }

    pub fn tracker(&self) -> &TaskTracker {
        &self.0.tracker
    }

    /// Cancelled once the server stops accepting work.
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
}
