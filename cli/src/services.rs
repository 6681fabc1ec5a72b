//! What commands that persist share: the database (connected, migrated,
//! stale runs marked interrupted), the cache sweeper, and one root
//! cancellation token with a task tracker drained on the way out.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use dragnet_core::clock::{Clock, SystemClock};
use dragnet_core::ports::cache::CacheMode;
use dragnet_engine::run::RunCache;
use dragnet_store::{
    hostname, pid_alive, spawn_store_sweeper, sweep_store_once, Db, ObserverOptions, StoreObserver,
    TeamWatermarks,
};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{Config, Lifetime};

/// A heartbeat older than this marks a run from another host interrupted.
const STALE_AFTER: Duration = Duration::from_secs(60);

pub struct Services {
    pub db: Db,
    pub config: Config,
    pub clock: Arc<dyn Clock>,
    pub tracker: TaskTracker,
    pub cancel: CancellationToken,
}

impl Services {
    /// Connects (a pool sized for how long the command lives), migrates
    /// and marks runs whose process died as interrupted.
    pub async fn open(config: &Config, lifetime: Lifetime) -> Result<Services> {
        let db = Db::connect_pooled(&config.database_url, config.pool_size(lifetime)).await?;
        db.migrate().await.context("applying migrations")?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        db.runs()
            .mark_interrupted(&hostname(), &pid_alive, STALE_AFTER, clock.now())
            .await
            .context("checking for interrupted runs")?;
        Ok(Services {
            db,
            config: config.clone(),
            clock,
            tracker: TaskTracker::new(),
            cancel: CancellationToken::new(),
        })
    }

    /// Whether there is anything to sweep: the cache is on, or step
    /// outputs have a retention period.
    fn sweeps(&self) -> bool {
        self.config.cache_mode != CacheMode::Off || self.config.keep_outputs.is_some()
    }

    /// For one-shot commands: sweeps once, now, on the calling task (after
    /// the command's work, so the sweep takes no connection of its own
    /// while the work runs).
    pub async fn sweep_once(&self) {
        if self.sweeps() {
            sweep_store_once(&self.db, self.config.keep_outputs, self.clock.as_ref()).await;
        }
    }

    /// Starts the sweeper of expired cache entries and old step outputs.
    pub fn start_sweeper(&self) {
        if self.sweeps() {
            spawn_store_sweeper(
                &self.db,
                self.config.sweep_every,
                self.config.keep_outputs,
                self.clock.clone(),
                &self.tracker,
                self.cancel.child_token(),
            );
        }
    }

    /// The cache as a run uses it.
    pub fn run_cache(&self, experiment: bool, refresh: bool) -> Option<RunCache> {
        (self.config.cache_mode != CacheMode::Off).then(|| RunCache {
            store: Arc::new(self.db.cache()),
            mode: self.config.cache_mode,
            org: self.config.org.clone(),
            experiment,
            refresh,
        })
    }

    /// Incremental steps' watermarks in the local store (no team).
    pub fn watermarks(&self) -> TeamWatermarks {
        TeamWatermarks {
            watermarks: self.db.watermarks(),
            team_id: String::new(),
        }
    }

    /// An observer that writes the run as it progresses, moving its
    /// incremental steps' watermarks as their records land.
    pub fn store_observer(&self) -> Arc<StoreObserver> {
        Arc::new(StoreObserver::start(
            self.db.runs(),
            self.clock.clone(),
            ObserverOptions {
                watermarks: Some(self.watermarks()),
                ..ObserverOptions::default()
            },
            &self.tracker,
            self.cancel.child_token(),
        ))
    }

    /// Stops background work and waits for it (bounded), then closes the pool.
    pub async fn shutdown(self) {
        self.cancel.cancel();
        self.tracker.close();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.tracker.wait()).await;
        self.db.close().await;
    }
}
