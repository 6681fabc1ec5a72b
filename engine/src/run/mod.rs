//! Running a workflow: inputs typed, the plan walked with independent steps
//! in parallel (bounded), each step recorded as it progresses, branches
//! gating their steps, failures failing dependants with a cause, and one
//! cancellation token stopping everything cleanly.

mod branch;
mod executor;
pub mod incremental;
mod inputs;
mod log;
pub mod record;
mod run_id;
mod runner;
mod step_error;
mod step_task;
mod template;
mod tool_step;
pub mod trigger;
mod upstreams;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use dragnet_core::clock::{Clock, SystemClock};
use dragnet_core::ports::cache::{CacheMode, CacheStore};
use dragnet_core::ports::journal::PageJournal;
use dragnet_core::progress::ProgressEvent;
use dragnet_core::secret::Secret;
use dragnet_core::Limits;
use dragnet_providers::DeclaredServer;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use executor::run;
pub use inputs::{parse_input_pairs, resolve_inputs};
pub use log::{LogFuture, RunLog, RunLogError, RunSummary};
pub use record::{
    IncrementalReport, RunRecord, RunStatus, StepRecord, StepStatus, StepType, StepVerdict,
};
pub use run_id::new_run_id;
pub use runner::{CallFuture, CallTarget, LoopLayer, ToolRunner};
pub use step_error::{InputError, ProviderError, StepError};
pub use trigger::{RunTrigger, TriggerKind};

/// Reads an environment variable (injected so tests and servers decide).
pub use dragnet_providers::EnvLookup;

/// How to run a workflow.
#[derive(Clone)]
pub struct RunOptions {
    /// The run's id, when the caller chose it beforehand (a server answers
    /// with it before the run starts); a fresh one otherwise.
    pub run_id: Option<String>,
    /// Input values (typed against the workflow's inputs when the run starts).
    pub inputs: Map<String, Value>,
    /// What `$.trigger` holds.
    pub trigger: Value,
    /// Steps running at once, at least 1.
    pub concurrency: usize,
    /// Bounds of every tool call.
    pub limits: Limits,
    /// Base URLs replacing the file's, by provider name.
    pub base_urls: HashMap<String, String>,
    /// Where credentials' environment variables are read from (a local
    /// run); not read at all when `secrets` is set.
    pub env: EnvLookup,
    /// A server's run: the secrets of its team that its workflow names, by
    /// name. When set, credentials are read here and nowhere else, and a
    /// name missing from it is the step error `MissingSecret`.
    pub secrets: Option<Arc<HashMap<String, Secret>>>,
    /// Cancels the run: running walks stop, nothing new starts.
    pub cancel: CancellationToken,
    /// The cache, for steps that opt in with `loop.cache`.
    pub cache: Option<RunCache>,
    /// Makes tool steps' calls: the loop layer unless a caller wraps it.
    pub tools: Arc<dyn ToolRunner>,
    /// The time every record, budget and cache entry of the run reads.
    pub clock: Arc<dyn Clock>,
    /// Finished tool steps of an earlier run kept as they were (a rerun
    /// from a later step), by step id: each is settled with its recorded
    /// output instead of running. Only succeeded tool steps with an output
    /// are kept; any other entry is ignored and its step runs.
    pub reuse: HashMap<String, StepRecord>,
    /// Where tool steps keep the pages they fetch, each step in a scope of
    /// its id, so another attempt at the run reads them back (a server's
    /// runs, which can be taken over); none keeps nothing.
    pub journal: Option<Arc<dyn PageJournal>>,
    /// Where providers may point (a server's `upstream_hosts`), MCP
    /// servers at a `url` included; `None` anywhere.
    pub hosts: Option<Arc<dragnet_http::HostPolicy>>,
    /// The MCP servers the operator declared (`[server.mcp_servers]`), by
    /// name, for providers written `mcp: {server: NAME}`.
    pub mcp_servers: Arc<BTreeMap<String, DeclaredServer>>,
    /// Whether a provider's `mcp.command` may be started: a local run
    /// starts what its file says; a server's run never does (a team may
    /// not start programs on the server).
    pub mcp_commands: bool,
    /// Where incremental steps read their watermarks (a server's team's,
    /// the local store's); none starts every incremental step at its
    /// `initial`. The moves themselves travel with the step records to
    /// whoever stores them.
    pub watermarks: Option<Arc<dyn crate::watermark::WatermarkSource>>,
}

/// `$.trigger` of a run nobody scheduled (`kind`: `manual` from the CLI,
/// `api` from the HTTP API), in the shape a scheduled run's has, so a ref
/// such as `$.trigger.previous_complete.started_at` is `null` rather than
/// missing. Scheduled runs fill in the tick and the schedule's runs.
pub fn trigger_value(kind: &str, previous: Option<(Value, Value)>) -> Value {
    let none = || serde_json::json!({"run_id": null, "status": null, "complete": false, "started_at": null});
    let (previous, complete) = previous.unwrap_or_else(|| (none(), none()));
    serde_json::json!({
        "kind": kind,
        "scheduled_for": null,
        "fired_at": null,
        "previous": previous,
        "previous_complete": complete,
    })
}

/// The deployment's cache as a run uses it. Workflows call with the
/// providers' organisation credentials, so entries are organisation-scoped.
#[derive(Clone)]
pub struct RunCache {
    pub store: Arc<dyn CacheStore>,
    pub mode: CacheMode,
    pub org: String,
    /// An experiment run never reads the cache.
    pub experiment: bool,
    /// Bypass hits and replace entries (`dragnet run --refresh`).
    pub refresh: bool,
}

impl RunOptions {
    /// Where the run's credentials are read: the team's secrets on a
    /// server, else the environment.
    pub fn resolver(&self) -> dragnet_providers::Resolver {
        match &self.secrets {
            Some(secrets) => dragnet_providers::Resolver::Team(secrets.clone()),
            None => dragnet_providers::Resolver::Environment(self.env.clone()),
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            run_id: None,
            inputs: Map::new(),
            trigger: trigger_value("manual", None),
            concurrency: 4,
            limits: Limits::default(),
            base_urls: HashMap::new(),
            env: Arc::new(|var| std::env::var(var).ok()),
            secrets: None,
            cancel: CancellationToken::new(),
            cache: None,
            tools: Arc::new(LoopLayer),
            clock: Arc::new(SystemClock),
            reuse: HashMap::new(),
            journal: None,
            hosts: None,
            mcp_servers: Arc::default(),
            mcp_commands: true,
            watermarks: None,
        }
    }
}

/// Hears about a run as it goes (a progress display, a store, an SSE stream).
pub trait RunObserver: Send + Sync {
    /// The run begins: its id, inputs and every step (pending) are known.
    fn run_started(&self, _record: &RunRecord) {}
    /// The run ended (succeeded, partial, failed or cancelled).
    fn run_finished(&self, _record: &RunRecord) {}
    fn step_started(&self, _step: &str) {}
    fn step_progress(&self, _step: &str, _event: &ProgressEvent) {}
    fn step_finished(&self, _record: &StepRecord) {}
    /// Everything the run could do without waiting is done: it now waits
    /// for a running step, or ends. An observer that holds the executor's
    /// news back (a display writing lines in one go) hands it on now.
    fn waiting(&self) {}
}

/// Several observers hearing the same run, in order.
pub struct Fanout(pub Vec<Arc<dyn RunObserver>>);

impl RunObserver for Fanout {
    fn run_started(&self, record: &RunRecord) {
        self.0.iter().for_each(|o| o.run_started(record));
    }
    fn run_finished(&self, record: &RunRecord) {
        self.0.iter().for_each(|o| o.run_finished(record));
    }
    fn step_started(&self, step: &str) {
        self.0.iter().for_each(|o| o.step_started(step));
    }
    fn step_progress(&self, step: &str, event: &ProgressEvent) {
        self.0.iter().for_each(|o| o.step_progress(step, event));
    }
    fn step_finished(&self, record: &StepRecord) {
        self.0.iter().for_each(|o| o.step_finished(record));
    }
    fn waiting(&self) {
        self.0.iter().for_each(|o| o.waiting());
    }
}

/// An observer that ignores everything.
pub struct Quiet;

impl RunObserver for Quiet {}
