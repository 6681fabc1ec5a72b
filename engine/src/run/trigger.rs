//! What started a run, recorded with it (issue 21): its kind, the tick a
//! scheduled run was for and when it fired, its schedule, and who started
//! it. Read from the run's `$.trigger` (which a workflow sees) and the
//! caller (which it does not).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a run was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    /// `dragnet run` on this machine.
    Manual,
    /// `POST /v1/workflows/{name}/runs` (the API, the CLI's `trigger`, the UI's Run form).
    Api,
    /// A cron tick of a schedule (`$.trigger.kind` says `cron`).
    Schedule,
    /// Run again from an earlier run.
    Rerun,
    /// A tick of a backfill (`dragnet backfill`, `POST
    /// /v1/workflows/{name}/backfills`).
    Backfill,
}

impl TriggerKind {
    pub const ALL: [TriggerKind; 5] = [
        TriggerKind::Manual,
        TriggerKind::Api,
        TriggerKind::Schedule,
        TriggerKind::Rerun,
        TriggerKind::Backfill,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Manual => "manual",
            TriggerKind::Api => "api",
            TriggerKind::Schedule => "schedule",
            TriggerKind::Rerun => "rerun",
            TriggerKind::Backfill => "backfill",
        }
    }

    /// A kind by name; `cron` (as `$.trigger.kind` names a tick) is
    /// `schedule`.
    pub fn parse(text: &str) -> Option<TriggerKind> {
        match text {
            "cron" => Some(TriggerKind::Schedule),
            other => TriggerKind::ALL.into_iter().find(|k| k.as_str() == other),
        }
    }
}

impl std::fmt::Display for TriggerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What started a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunTrigger {
    pub kind: TriggerKind,
    /// The tick a scheduled run is for.
    pub scheduled_for: Option<DateTime<Utc>>,
    /// When the scheduler fired it.
    pub fired_at: Option<DateTime<Utc>>,
    pub schedule_id: Option<String>,
    /// Who asked for it: `token:<token id>` on a server (never the token);
    /// none for a scheduled or local run.
    pub started_by: Option<String>,
}

impl RunTrigger {
    /// What `$.trigger` (as `trigger_value` and the scheduler write it)
    /// says; `None` for a value without a known `kind`.
    pub fn from_value(trigger: &Value) -> Option<RunTrigger> {
        let kind = TriggerKind::parse(trigger.get("kind")?.as_str()?)?;
        let time = |key: &str| {
            trigger
                .get(key)
                .and_then(Value::as_str)
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc))
        };
        Some(RunTrigger {
            kind,
            scheduled_for: time("scheduled_for"),
            fired_at: time("fired_at"),
            schedule_id: trigger
                .get("schedule_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            started_by: None,
        })
    }

    /// The same, started by `who`.
    pub fn by(mut self, who: Option<String>) -> RunTrigger {
        self.started_by = who;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trigger_value;

    #[test]
    fn triggers_read_from_their_values() {
        let manual = RunTrigger::from_value(&trigger_value("manual", None)).unwrap();
        assert_eq!(manual.kind, TriggerKind::Manual);
        assert_eq!((manual.scheduled_for, manual.schedule_id), (None, None));
        let tick = serde_json::json!({
            "kind": "cron", "schedule_id": "sch_1",
            "scheduled_for": "2026-12-02T04:00:00Z", "fired_at": "2026-12-02T04:00:01.5Z",
        });
        let tick = RunTrigger::from_value(&tick).unwrap();
        assert_eq!(tick.kind, TriggerKind::Schedule);
        assert_eq!(tick.schedule_id.as_deref(), Some("sch_1"));
        assert_eq!(
            tick.scheduled_for.map(|t| t.to_rfc3339()),
            Some("2026-12-02T04:00:00+00:00".into())
        );
        assert_eq!(
            tick.fired_at.map(|t| t.timestamp_millis() % 1000),
            Some(500)
        );
        assert_eq!(
            RunTrigger::from_value(&serde_json::json!({"kind": "x"})),
            None
        );
        assert_eq!(TriggerKind::parse("schedule"), Some(TriggerKind::Schedule));
        assert_eq!(TriggerKind::parse("rerun"), Some(TriggerKind::Rerun));
    }
}
