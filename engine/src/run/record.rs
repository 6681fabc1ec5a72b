//! Run records: what every run and step did — status, timing, verdicts,
//! outputs, errors and skip reasons — typed both ways: serialized for
//! `--json` and stores, and read back (from a store, a `--output` file)
//! into the same types. Statuses are closed enums, `interrupted` included.

use dragnet_core::Document;
use dragnet_walk::result::ServedFrom;
use std::fmt;

use crate::watermark::WatermarkMove;
use chrono::{DateTime, Utc};
use dragnet_core::StopReason;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a step ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    Running,
    Succeeded,
    Failed,
    Skipped,
    Cancelled,
    /// It was running when its run's process died (set by a store).
    Interrupted,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Waiting for a concurrency slot (set by a server, never by a run).
    Queued,
    Running,
    /// Every step succeeded or was skipped, every walk complete.
    Succeeded,
    /// Every step succeeded or was skipped, but some walk was partial.
    Partial,
    Failed,
    Cancelled,
    /// Its process died before it finished (set by a store, never by a run).
    Interrupted,
}

impl StepStatus {
    /// The snake_case name it is stored and printed by.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Running => "running",
            StepStatus::Succeeded => "succeeded",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
            StepStatus::Cancelled => "cancelled",
            StepStatus::Interrupted => "interrupted",
        }
    }
}

impl RunStatus {
    /// The snake_case name it is stored and printed by.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for StepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Which kind of step a record is of (the workflow file's `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepType {
    Tool,
    Branch,
}

impl StepType {
    pub fn as_str(self) -> &'static str {
        match self {
            StepType::Tool => "tool",
            StepType::Branch => "branch",
        }
    }
}

/// The verdict of a tool step, as in its `_loop`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepVerdict {
    pub complete: bool,
    pub requests: u32,
    pub item_count: usize,
    /// `null` when complete; otherwise spelled as SPEC §3.3 (`wall_clock`…).
    #[serde(with = "stop_reason")]
    pub stopped_by: Option<StopReason>,
    pub note: String,
    /// With the cache involved: whether the walk was served from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit: Option<bool>,
    /// Successful upstream answers (pages), failed attempts (any other
    /// status or none, retried or not) and 429s among them; 0 for records
    /// written before they were counted.
    #[serde(default)]
    pub pages: u32,
    #[serde(default)]
    pub upstream_errors: u32,
    #[serde(default)]
    pub throttled: u32,
    /// The answer had no collection (one item-less result, returned
    /// whole): nothing was walked, so there are no walk counters to show.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_collection: bool,
    /// An incremental step's window and whether it moved its watermark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incremental: Option<IncrementalReport>,
}

/// What an incremental step did with its watermark, as in its
/// `_loop.incremental`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncrementalReport {
    /// The watermark the walk started from (the stored one, or `initial`).
    pub from: Value,
    /// What the walk passed in its `param`: `from` less the lag.
    pub asked: Value,
    /// The watermark after the walk: the largest value read when the walk
    /// moved it, `from` when it did not.
    pub to: Value,
    /// Whether the walk moves the stored watermark (only a complete walk
    /// that read something past `from` does).
    pub advanced: bool,
    /// Rows dropped by `dedupe_by` (read at `from` by the last walk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deduped: Option<usize>,
}

impl IncrementalReport {
    /// In words, for the run page and `runs show`; `complete` is the
    /// walk's verdict.
    pub fn describe(&self, complete: bool) -> String {
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let asked = match self.asked == self.from {
            true => String::new(),
            false => format!(" (asked from {})", text(&self.asked)),
        };
        let outcome = match (self.advanced, complete) {
            (true, _) => format!("watermark moved to {}", text(&self.to)),
            (false, true) => "watermark stays: nothing newer was read".to_string(),
            (false, false) => {
                "watermark stays: the walk was not complete, the next run reads this window again"
                    .to_string()
            }
        };
        let deduped = match self.deduped {
            Some(1) => "; dropped 1 row read at it before".to_string(),
            Some(n) if n > 1 => format!("; dropped {n} rows read at it before"),
            _ => String::new(),
        };
        format!(
            "incremental from {}{asked}: {outcome}{deduped}",
            text(&self.from)
        )
    }
}

/// One step of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRecord {
    pub id: String,
    pub kind: StepType,
    pub status: StepStatus,
    /// Why it was skipped or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: u64,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<StepVerdict>,
    /// The step's output (tool payload with `_loop`, or the branch decision),
    /// kept as the raw JSON it was written as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Document>,
    /// An incremental step's new watermark, stored once this record is
    /// (never serialized: it is the store's instruction, not the record).
    #[serde(skip)]
    pub watermark: Option<WatermarkMove>,
    /// When `output` is a cached payload as served, with `_loop` after it:
    /// where the store keeps that payload and the `_loop` text, so the
    /// store may point at the payload instead of keeping a copy (never
    /// serialized, like `watermark`).
    #[serde(skip)]
    pub served_from: Option<ServedFrom>,
}

impl StepRecord {
    pub fn pending(id: &str, kind: StepType) -> Self {
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
            watermark: None,
            served_from: None,
        }
    }

    pub fn is_finished(&self) -> bool {
        !matches!(self.status, StepStatus::Pending | StepStatus::Running)
    }
}

/// One run of a workflow.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub run_id: String,
    pub workflow: String,
    pub source: String,
    pub status: RunStatus,
    pub started_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: u64,
    pub inputs: Value,
    pub steps: Vec<StepRecord>,
    /// What started it (null on runs recorded before this was kept).
    #[serde(default)]
    pub trigger: Option<super::trigger::RunTrigger>,
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

/// `stoppedBy` as SPEC spells it: `StopReason::as_str` both ways.
mod stop_reason {
    use dragnet_core::StopReason;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(r: &Option<StopReason>, s: S) -> Result<S::Ok, S::Error> {
        match r {
            Some(r) => s.serialize_str(r.as_str()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<StopReason>, D::Error> {
        let Some(name) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        StopReason::parse(&name).map(Some).ok_or_else(|| {
            let names: Vec<&str> = StopReason::ALL.iter().map(|r| r.as_str()).collect();
            serde::de::Error::custom(format!(
                "unknown stoppedBy `{name}`; expected one of {}",
                names.join(", ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(stopped_by: Option<StopReason>) -> StepRecord {
        let mut step = StepRecord::pending("orders", StepType::Tool);
        step.status = StepStatus::Succeeded;
        step.started_at = DateTime::from_timestamp_millis(1_700_000_000_123);
        step.attempts = 1;
        step.verdict = Some(StepVerdict {
            complete: stopped_by.is_none(),
            requests: 20,
            item_count: 2000,
            stopped_by,
            note: "stopped after 20 pages".into(),
            cache_hit: None,
            pages: 20,
            upstream_errors: 0,
            throttled: 0,
            no_collection: false,
            incremental: None,
        });
        step.output = Document::parse(r#"{"data":[1,2],"_loop":{}}"#.into()).ok();
        step
    }

    #[test]
    fn a_record_reads_back_as_it_was_written() {
        let run = RunRecord {
            run_id: "run_1".into(),
            workflow: "audit".into(),
            source: "audit.yaml".into(),
            status: RunStatus::Interrupted,
            started_at: DateTime::from_timestamp_millis(1_700_000_000_000).unwrap_or_default(),
            finished_at: None,
            duration_ms: 5,
            inputs: serde_json::json!({"min_total": 500}),
            steps: vec![
                finished(Some(StopReason::WallClock)),
                StepRecord::pending("gate", StepType::Branch),
            ],
            trigger: None,
        };
        let text = serde_json::to_string(&run).unwrap_or_default();
        let back: RunRecord = serde_json::from_str(&text).expect("it reads back");
        assert_eq!(serde_json::to_string(&back).unwrap_or_default(), text);
        assert_eq!(back.status, RunStatus::Interrupted);
        assert_eq!(back.steps[1].kind, StepType::Branch);
        let verdict = back.steps[0].verdict.as_ref().expect("a verdict");
        assert_eq!(verdict.stopped_by, Some(StopReason::WallClock));
        assert!(text.contains(r#""stoppedBy":"wall_clock""#), "{text}");
        assert!(text.contains(r#""status":"interrupted""#), "{text}");
        assert_eq!(
            back.steps[0].output.as_ref().map(|o| o.get()),
            Some(r#"{"data":[1,2],"_loop":{}}"#)
        );
    }

    #[test]
    fn every_stop_reason_reads_back_and_unknown_ones_are_errors() {
        for r in StopReason::ALL {
            let v = serde_json::to_value(finished(Some(r)).verdict).unwrap_or_default();
            assert_eq!(v["stoppedBy"], r.as_str());
            let back: StepVerdict = serde_json::from_value(v).expect("reads back");
            assert_eq!(back.stopped_by, Some(r));
        }
        let complete = serde_json::to_value(finished(None).verdict).unwrap_or_default();
        assert_eq!(complete["stoppedBy"], Value::Null);
        let bad = r#"{"complete":false,"requests":1,"itemCount":1,"stoppedBy":"tired","note":""}"#;
        let err = serde_json::from_str::<StepVerdict>(bad)
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("unknown stoppedBy `tired`")));
    }

    #[test]
    fn statuses_print_and_serialize_by_one_name() {
        for s in [
            RunStatus::Running,
            RunStatus::Partial,
            RunStatus::Interrupted,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap_or_default(), s.as_str());
            assert_eq!(format!("{s:<12}|"), format!("{:<12}|", s.as_str()));
        }
        for s in [
            StepStatus::Pending,
            StepStatus::Skipped,
            StepStatus::Interrupted,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap_or_default(), s.as_str());
        }
    }
}
