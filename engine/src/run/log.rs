//! `RunLog`: the port through which runs are read back — a newest-first
//! list of summaries and one run with its steps, as typed records. The
//! engine owns it; a store implements it (dragnet-store on PostgreSQL and
//! SQLite), and whoever shows runs (the CLI, an HTTP API, a web UI) reads
//! through it without knowing where they are kept.

use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::record::{RunRecord, RunStatus};

/// What a `RunLog` returns.
pub type LogFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, RunLogError>> + Send + 'a>>;

/// Reads recorded runs.
pub trait RunLog: Send + Sync {
    /// The `limit` most recent runs, newest first.
    fn list(&self, limit: u32) -> LogFuture<'_, Vec<RunSummary>>;
    /// The `limit` most recent runs started `trigger`'s way (any way when
    /// `None`), newest first.
    fn list_triggered(
        &self,
        limit: u32,
        trigger: Option<super::trigger::TriggerKind>,
    ) -> LogFuture<'_, Vec<RunSummary>>;
    /// Run `run_id` with its steps in workflow order, or `None`.
    fn get<'a>(&'a self, run_id: &'a str) -> LogFuture<'a, Option<RunRecord>>;
}

/// A line of a run listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: String,
    pub workflow: String,
    pub status: RunStatus,
    pub started_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub steps: u64,
    pub failed: u64,
    pub skipped: u64,
    /// How it was started (null on runs recorded before this was kept).
    #[serde(default)]
    pub trigger: Option<super::trigger::TriggerKind>,
}

/// The log could not be read; the source is the implementation's own error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RunLogError(Box<dyn std::error::Error + Send + Sync>);

impl RunLogError {
    pub fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        RunLogError(Box::new(source))
    }
}
