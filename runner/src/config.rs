//! How runs are run: the settings `serve` and `worker` share (the API's
//! own, its body limit and metrics token, stay with the API).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use dragnet_core::clock::Clock;
use dragnet_core::ports::cache::CacheMode;
use dragnet_core::Limits;
use dragnet_engine::workflow::model::DeclaredServer;
use dragnet_http::{HostPolicy, Sealer};
use dragnet_store::{LeaseLength, Schedules};

/// How this process runs workflows.
#[derive(Clone)]
pub struct RunnerConfig {
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
    pub secrets: Option<Arc<Sealer>>,
    /// On shutdown, how long running runs may go on before they are
    /// stopped and handed back.
    pub shutdown_grace: Duration,
    /// The cron scheduler; `None` runs no passes by itself (tests call
    /// the scheduler's `pass`).
    pub scheduler: Option<SchedulerConfig>,
    /// Runs running at once in this process; more wait, queued. With 0 it
    /// runs none itself: the runs it submits are claimed by workers.
    pub max_running_runs: usize,
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
    pub upstream_hosts: Arc<HostPolicy>,
    /// The MCP servers the operator declared (`[server.mcp_servers]`),
    /// which teams' workflows name as `mcp: {server: NAME}`: the only
    /// programs a run on this server starts.
    pub mcp_servers: Arc<BTreeMap<String, DeclaredServer>>,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            workflows_dir: None,
            limits: Limits::default(),
            step_concurrency: 4,
            cache_mode: CacheMode::On,
            secrets: None,
            shutdown_grace: Duration::from_secs(30),
            scheduler: Some(SchedulerConfig::default()),
            max_running_runs: 16,
            lease: LeaseLength::DEFAULT,
            claim_every: Some(Duration::from_secs(1)),
            upstream_hosts: Arc::default(),
            mcp_servers: Arc::default(),
        }
    }
}

/// Where a pass reads the time.
#[derive(Clone)]
pub enum TickClock {
    /// `now()` of the database: one clock for every server on it.
    Database,
    /// An injected clock (tests).
    Fixed(Arc<dyn Clock>),
}

/// How the scheduler runs.
#[derive(Clone)]
pub struct SchedulerConfig {
    /// Time between passes.
    pub every: Duration,
    /// A tick handled later than this after its time was missed.
    pub late_after: Duration,
    pub clock: TickClock,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            every: Duration::from_secs(1),
            late_after: Duration::from_secs(60),
            clock: TickClock::Database,
        }
    }
}

impl TickClock {
    /// The time a schedule's ticks are read against.
    pub async fn now(&self, schedules: &Schedules) -> Result<DateTime<Utc>, dragnet_store::Error> {
        match self {
            TickClock::Database => schedules.db_now().await,
            TickClock::Fixed(c) => Ok(c.now()),
        }
    }
}
