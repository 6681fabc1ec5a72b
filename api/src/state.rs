//! What every handler shares: the server's settings and the
//! [`Launcher`] its runs start through (which also holds the store, the
//! clock, the runs this process is running and the tokens that stop it).

use std::sync::Arc;

use dragnet_core::clock::Clock;
use dragnet_runner::{Launcher, RunnerConfig, TickClock};
use dragnet_store::Db;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How the server serves and runs workflows.
#[derive(Clone)]
pub struct ServerConfig {
    /// How its runs are run (shared with `dragnet worker`).
    pub runner: RunnerConfig,
    /// The largest request body accepted (a workflow with its documents).
    pub body_limit: usize,
    /// The bearer token `GET /metrics` asks for; without one it is off.
    pub metrics_token: Option<dragnet_core::secret::Secret>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            runner: RunnerConfig::default(),
            body_limit: 32 * 1024 * 1024,
            metrics_token: None,
        }
    }
}

/// The shared state; cloning is cheap.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

struct Inner {
    launcher: Launcher,
    config: ServerConfig,
}

impl AppState {
    pub fn new(
        db: Db,
        config: ServerConfig,
        clock: Arc<dyn Clock>,
        tracker: TaskTracker,
        halt: CancellationToken,
    ) -> AppState {
        let launcher = Launcher::new(db, config.runner.clone(), clock, tracker, halt);
        AppState(Arc::new(Inner { launcher, config }))
    }

    /// Where runs start (and what the background tasks are handed).
    pub fn launcher(&self) -> &Launcher {
        &self.0.launcher
    }

    pub fn db(&self) -> &Db {
        self.0.launcher.db()
    }

    pub fn config(&self) -> &ServerConfig {
        &self.0.config
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        self.0.launcher.clock()
    }

    /// The runs this process is running.
    pub fn live(&self) -> &dragnet_runner::live::LiveRuns {
        self.0.launcher.live()
    }

    pub fn metrics(&self) -> &Arc<dragnet_runner::metrics::Metrics> {
        self.0.launcher.metrics()
    }

    /// Cancelled once the server stops accepting work.
    pub fn stopping(&self) -> &CancellationToken {
        self.0.launcher.stopping()
    }

    /// Where schedules read the time.
    pub fn tick_clock(&self) -> TickClock {
        self.0.launcher.tick_clock()
    }

    /// The root token: cancelled when everything must stop at once.
    pub fn halt(&self) -> &CancellationToken {
        self.0.launcher.halt()
    }
}
