//! Run records: what every run and step did — status, timing, verdicts,
//! outputs, errors and skip reasons — serializable for `--json` and stores.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// How a step ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    Running,
    Succeeded,
    Failed,
    Skipped,
    Cancelled,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// Every step succeeded or was skipped, every walk complete.
    Succeeded,
    /// Every step succeeded or was skipped, but some walk was partial.
    Partial,
    Failed,
    Cancelled,
}

/// The verdict of a tool step, as in its `_loop`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepVerdict {
    pub complete: bool,
    pub requests: u32,
    pub item_count: usize,
    pub stopped_by: Option<&'static str>,
    pub note: String,
}

/// One step of a run.
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    pub id: String,
    pub kind: &'static str,
    pub status: StepStatus,
    /// Why it was skipped or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: u64,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<StepVerdict>,
    /// The step's output (tool payload with `_loop`, or the branch decision).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Arc<RawValue>>,
}

impl StepRecord {
    pub fn pending(id: &str, kind: &'static str) -> Self {
        StepRecord {
            id: id.to_string(),
            kind,
            status: StepStatus::Pending,
            reason: None,
            started_at: None,
            finished_at: None,
            duration_ms: 0,
            attempts: 0,
            verdict: None,
            output: None,
        }
    }

    pub fn is_finished(&self) -> bool {
        !matches!(self.status, StepStatus::Pending | StepStatus::Running)
    }
}

/// One run of a workflow.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub run_id: String,
    pub workflow: String,
    pub source: String,
    pub status: RunStatus,
    pub started_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: u64,
    pub inputs: Value,
    pub steps: Vec<StepRecord>,
}

impl RunRecord {
    pub fn step(&self, id: &str) -> Option<&StepRecord> {
        self.steps.iter().find(|s| s.id == id)
    }

    /// The run's status from its steps, once all are finished.
    pub fn settle(&mut self, cancelled: bool) {
        let any = |st: StepStatus| self.steps.iter().any(|s| s.status == st);
        self.status = if cancelled {
            RunStatus::Cancelled
        } else if any(StepStatus::Failed) {
            RunStatus::Failed
        } else if self
            .steps
            .iter()
            .any(|s| s.verdict.as_ref().is_some_and(|v| !v.complete))
        {
            RunStatus::Partial
        } else {
            RunStatus::Succeeded
        };
    }
}
