//! The API's response bodies as types, so the OpenAPI document describes
//! what the handlers write. Bodies the engine or store defines (a run
//! record, a run summary) are described here by schema-only types that
//! mirror their serde form; `openapi.rs` checks nothing drifts by testing
//! real answers against the document.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// Every error: `{"error": {kind, message, diagnostics?}}`.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable snake_case name: unauthorized, not_found, invalid_workflow…
    pub kind: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Vec<DiagnosticBody>>,
}

/// A located problem in a workflow file.
#[derive(Serialize, ToSchema)]
pub struct DiagnosticBody {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The YAML path, e.g. `steps[2].needs[0]`.
    pub path: String,
    pub message: String,
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    pub status: String,
}

#[derive(Serialize, ToSchema)]
pub struct Ready {
    pub status: String,
    /// `postgres` or `sqlite`.
    pub store: String,
}

/// The answer of `POST /v1/validate`.
#[derive(Serialize, ToSchema)]
pub struct Validation {
    pub valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Vec<DiagnosticBody>>,
}

/// The answer of a push.
#[derive(Serialize, ToSchema)]
pub struct PushedBody {
    pub name: String,
    pub version: i64,
    /// False when the content equals the current version's.
    pub created: bool,
    pub content_hash: String,
    pub steps: usize,
    /// The ids of the schedules its cron triggers are.
    pub schedules: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct WorkflowItem {
    pub name: String,
    pub current_version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
pub struct WorkflowList {
    pub workflows: Vec<WorkflowItem>,
}

#[derive(Serialize, ToSchema)]
pub struct VersionBody {
    pub version: i64,
    pub content_hash: String,
    pub file_name: String,
    pub created_at: DateTime<Utc>,
}

/// One workflow: its current text, its versions and its schedules.
#[derive(Serialize, ToSchema)]
pub struct WorkflowDetail {
    pub name: String,
    pub current_version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub file_name: String,
    pub source: String,
    /// The paths of the documents uploaded with it.
    pub documents: Vec<String>,
    pub versions: Vec<VersionBody>,
    pub schedules: Vec<ScheduleBody>,
}

#[derive(Serialize, ToSchema)]
pub struct RunLinks {
    #[serde(rename = "self")]
    pub self_: String,
    pub events: String,
}

/// The answer of `POST /v1/workflows/{name}/runs`.
#[derive(Serialize, ToSchema)]
pub struct RunCreated {
    pub run_id: String,
    pub workflow: String,
    pub version: i64,
    /// running, succeeded, partial, failed, cancelled or interrupted.
    pub status: String,
    /// False when an earlier request with the same Idempotency-Key made it.
    pub created: bool,
    pub links: RunLinks,
}

impl RunCreated {
    pub fn new(
        run_id: String,
        workflow: String,
        version: i64,
        status: dragnet_engine::run::RunStatus,
        created: bool,
    ) -> RunCreated {
        RunCreated {
            links: RunLinks {
                self_: format!("/v1/runs/{run_id}"),
                events: format!("/v1/runs/{run_id}/events"),
            },
            run_id,
            workflow,
            version,
            status: status.as_str().to_string(),
            created,
        }
    }
}

/// A line of a run listing (the engine's `RunSummary`).
#[derive(Serialize, ToSchema)]
pub struct RunItem {
    pub run_id: String,
    pub workflow: String,
    /// How it was started: manual, api, schedule or rerun (null on runs
    /// recorded before this was kept).
    pub trigger: Option<String>,
    pub status: String,
    pub started_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub steps: u64,
    pub failed: u64,
    pub skipped: u64,
}

#[derive(Serialize, ToSchema)]
pub struct RunList {
    pub runs: Vec<RunItem>,
    /// Pass as `cursor` for the next page; null on the last.
    pub next_cursor: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct Cancelling {
    pub run_id: String,
    pub status: String,
}

/// A run as recorded (the engine's `RunRecord`) with its workflow version.
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct RunRecordBody {
    pub run_id: String,
    pub workflow: String,
    pub source: String,
    pub status: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: u64,
    #[schema(value_type = Object)]
    pub inputs: serde_json::Value,
    pub steps: Vec<StepRecordBody>,
    pub workflow_version: Option<i64>,
    /// What started it (null on runs recorded before this was kept).
    pub trigger: Option<TriggerBody>,
}

/// What started a run (the engine's `RunTrigger`).
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct TriggerBody {
    /// manual (`dragnet run`), api (the API, `dragnet trigger`, the UI's
    /// Run form), schedule (a cron tick) or rerun.
    #[schema(pattern = "^(manual|api|schedule|rerun)$")]
    pub kind: String,
    /// The tick a scheduled run is for.
    pub scheduled_for: Option<DateTime<Utc>>,
    /// When the scheduler fired it.
    pub fired_at: Option<DateTime<Utc>>,
    pub schedule_id: Option<String>,
    /// `token:<token id>` of the team token that started it (never the
    /// token); null for a scheduled or local run.
    pub started_by: Option<String>,
}

/// A step as recorded.
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct StepRecordBody {
    pub id: String,
    /// tool or branch.
    pub kind: String,
    pub status: String,
    pub reason: Option<String>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: u64,
    pub attempts: u32,
    #[schema(value_type = Option<Object>)]
    pub verdict: Option<serde_json::Value>,
    /// Only with `?outputs=true`.
    #[schema(value_type = Option<Object>)]
    pub output: Option<serde_json::Value>,
}

#[derive(Serialize, ToSchema)]
pub struct TickBody {
    pub scheduled_for: DateTime<Utc>,
    /// fired, skipped, missed or queued.
    pub status: String,
    pub reason: Option<String>,
    pub run_id: Option<String>,
    pub handled_at: DateTime<Utc>,
    /// From the tick's time to when it was handled (its run created).
    pub lateness_ms: i64,
}

/// A schedule: one cron trigger of a workflow's current version.
#[derive(Serialize, ToSchema)]
pub struct ScheduleBody {
    pub schedule_id: String,
    pub workflow: String,
    pub cron: String,
    pub timezone: String,
    pub catch_up: String,
    pub overlap: String,
    pub active: bool,
    /// Set while it is paused: it fires nothing, has no next ticks and is
    /// never late.
    pub paused: Option<PauseBody>,
    pub next_ticks: Vec<DateTime<Utc>>,
    /// Newest first.
    pub last_ticks: Vec<TickBody>,
    /// How long the oldest due tick has waited (0 when none is due).
    pub lateness_ms: i64,
    pub checked_at: DateTime<Utc>,
}

/// A backfill: the runs of its workflow's ticks in a window.
#[derive(Serialize, ToSchema)]
pub struct BackfillBody {
    pub backfill_id: String,
    pub workflow: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// `oldest_first` or `newest_first`.
    pub order: String,
    /// Runs at a time.
    pub concurrency: u32,
    /// Whether ticks that had a complete run run again.
    pub rerun: bool,
    /// running | succeeded | partial | failed | cancelled
    pub status: String,
    /// `token:<id>` of who asked.
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub counts: BackfillCounts,
    /// Every tick in start order (on `GET /v1/backfills/{id}` and when it
    /// is made; not in the list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticks: Option<Vec<BackfillTickBody>>,
}

/// How a backfill's ticks stand.
#[derive(Serialize, ToSchema, Default)]
pub struct BackfillCounts {
    pub ticks: usize,
    pub pending: usize,
    /// Started, their runs queued or running.
    pub running: usize,
    pub succeeded: usize,
    pub partial: usize,
    pub failed: usize,
    /// A complete run of the tick existed.
    pub skipped: usize,
    pub cancelled: usize,
}

/// One tick of a backfill.
#[derive(Serialize, ToSchema)]
pub struct BackfillTickBody {
    pub scheduled_for: DateTime<Utc>,
    pub schedule_id: String,
    /// pending | started | skipped | cancelled
    pub state: String,
    pub run_id: Option<String>,
    pub run_status: Option<String>,
    pub reason: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct BackfillList {
    pub backfills: Vec<BackfillBody>,
}

/// A backfill's dry run: the ticks it would run.
#[derive(Serialize, ToSchema)]
pub struct DryRunBody {
    pub workflow: String,
    pub ticks: Vec<PlannedTickBody>,
}

#[derive(Serialize, ToSchema)]
pub struct PlannedTickBody {
    pub scheduled_for: DateTime<Utc>,
    /// The same instant in its schedule's zone, with its offset.
    pub local: String,
    pub schedule_id: String,
    /// A run of the tick that succeeded: skipped unless `rerun`.
    pub complete_run: Option<String>,
}

/// An incremental step's watermark: the largest value of its field that
/// a complete walk read.
#[derive(Serialize, ToSchema)]
pub struct WatermarkBody {
    pub workflow: String,
    pub step: String,
    /// As the API wrote it; the next walk asks from it less the step's lag.
    #[schema(value_type = Object)]
    pub value: serde_json::Value,
    /// `time` or `number`.
    pub scale: String,
    /// Rows read at `value` whose keys are kept for `dedupe_by`.
    pub keys_at_value: usize,
    /// The run whose walk moved it here.
    pub run_id: String,
    pub updated_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
pub struct WatermarkList {
    pub watermarks: Vec<WatermarkBody>,
}

/// A schedule's pause.
#[derive(Serialize, ToSchema)]
pub struct PauseBody {
    pub at: DateTime<Utc>,
    pub reason: String,
    /// `token:<name>` of whoever paused it.
    pub by: String,
}

#[derive(Serialize, ToSchema)]
pub struct ScheduleList {
    pub schedules: Vec<ScheduleBody>,
}

/// One event of a run's stream, as a server-sent event: its number, its
/// name, and its data (JSON text).
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct StreamEvent {
    /// 1, 2, 3… in the order the run emitted them.
    #[schema(pattern = "^[0-9]+$")]
    pub id: String,
    /// run, step, data-tool-loop-progress or end.
    #[schema(pattern = "^(run|step|data-tool-loop-progress|end)$")]
    pub event: String,
    /// The event's JSON object, as text.
    pub data: String,
}
