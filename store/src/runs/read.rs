//! Reading run records: a newest-first list of summaries, and one run with
//! its steps in order, as the JSON `RunRecord` serializes to (field names,
//! order and omitted empties alike), except that a run or step may also be
//! `interrupted`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::db::{col, to_u64, with_pool, Db, Stamp};
use crate::error::{Error, Result};

const LIST: &str = "SELECT r.run_id, r.workflow, r.status, r.started_at, r.duration_ms, \
     (SELECT COUNT(*) FROM run_steps s WHERE s.run_id = r.run_id) AS steps, \
     (SELECT COUNT(*) FROM run_steps s WHERE s.run_id = r.run_id AND s.status = 'failed') AS failed, \
     (SELECT COUNT(*) FROM run_steps s WHERE s.run_id = r.run_id AND s.status = 'skipped') AS skipped \
     FROM runs r ORDER BY r.started_at DESC, r.run_id DESC LIMIT $1";

const RUN: &str = "SELECT run_id, workflow, source, status, inputs, started_at, finished_at, \
     duration_ms FROM runs WHERE run_id = $1";

const STEPS: &str = "SELECT id, kind, status, reason, started_at, finished_at, duration_ms, \
     attempts, verdict, output FROM run_steps WHERE run_id = $1 ORDER BY idx";

/// A line of `dragnet runs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    pub run_id: String,
    pub workflow: String,
    /// `running`, `succeeded`, `partial`, `failed`, `cancelled` or `interrupted`.
    pub status: String,
    pub started_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub steps: u64,
    pub failed: u64,
    pub skipped: u64,
}

impl Db {
    /// The `limit` most recent runs, newest first.
    pub async fn list_runs(&self, limit: u32) -> Result<Vec<RunSummary>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(LIST)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.list"))?;
            rows.iter()
                .map(|row| {
                    Ok(RunSummary {
                        run_id: col(row, "run_id")?,
                        workflow: col(row, "workflow")?,
                        status: col(row, "status")?,
                        started_at: T::dec(col(row, "started_at")?)?,
                        duration_ms: to_u64(col(row, "duration_ms")?, "run duration")?,
                        steps: to_u64(col(row, "steps")?, "step count")?,
                        failed: to_u64(col(row, "failed")?, "step count")?,
                        skipped: to_u64(col(row, "skipped")?, "step count")?,
                    })
                })
                .collect()
        })
    }

    /// Run `run_id` with its steps in workflow order, or `None`.
    pub async fn get_run(&self, run_id: &str) -> Result<Option<Value>> {
        with_pool!(self, |pool, T| {
            let op = || Error::query(self.backend(), "runs.get");
            let Some(row) = sqlx::query(RUN)
                .bind(run_id)
                .fetch_optional(pool)
                .await
                .map_err(op())?
            else {
                return Ok(None);
            };
            let step_rows = sqlx::query(STEPS)
                .bind(run_id)
                .fetch_all(pool)
                .await
                .map_err(op())?;
            let mut steps = Vec::with_capacity(step_rows.len());
            for s in &step_rows {
                let mut step = Map::new();
                step.insert("id".into(), Value::String(col(s, "id")?));
                step.insert("kind".into(), Value::String(col(s, "kind")?));
                step.insert("status".into(), Value::String(col(s, "status")?));
                put_opt(
                    &mut step,
                    "reason",
                    col::<_, Option<String>>(s, "reason")?.map(Value::String),
                );
                put_opt(
                    &mut step,
                    "started_at",
                    T::dec_opt(col(s, "started_at")?)?.map(time),
                );
                put_opt(
                    &mut step,
                    "finished_at",
                    T::dec_opt(col(s, "finished_at")?)?.map(time),
                );
                step.insert(
                    "duration_ms".into(),
                    count(col(s, "duration_ms")?, "step duration")?,
                );
                step.insert(
                    "attempts".into(),
                    count(col(s, "attempts")?, "step attempts")?,
                );
                put_opt(
                    &mut step,
                    "verdict",
                    json(col(s, "verdict")?, "step verdict")?,
                );
                put_opt(&mut step, "output", json(col(s, "output")?, "step output")?);
                steps.push(Value::Object(step));
            }
            let mut run = Map::new();
            run.insert("run_id".into(), Value::String(col(&row, "run_id")?));
            run.insert("workflow".into(), Value::String(col(&row, "workflow")?));
            run.insert("source".into(), Value::String(col(&row, "source")?));
            run.insert("status".into(), Value::String(col(&row, "status")?));
            run.insert("started_at".into(), time(T::dec(col(&row, "started_at")?)?));
            put_opt(
                &mut run,
                "finished_at",
                T::dec_opt(col(&row, "finished_at")?)?.map(time),
            );
            run.insert(
                "duration_ms".into(),
                count(col(&row, "duration_ms")?, "run duration")?,
            );
            let inputs = json(Some(col(&row, "inputs")?), "run inputs")?;
            run.insert("inputs".into(), inputs.unwrap_or(Value::Null));
            run.insert("steps".into(), Value::Array(steps));
            Ok(Some(Value::Object(run)))
        })
    }
}

fn put_opt(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        map.insert(key.to_string(), value);
    }
}

/// A timestamp as chrono serializes it (RFC 3339, UTC).
fn time(at: DateTime<Utc>) -> Value {
    serde_json::to_value(at).unwrap_or(Value::Null)
}

fn count(value: i64, what: &'static str) -> Result<Value> {
    Ok(Value::from(to_u64(value, what)?))
}

/// Stored JSON text back to a value.
fn json(text: Option<String>, what: &'static str) -> Result<Option<Value>> {
    text.map(|t| serde_json::from_str(&t).map_err(|_| Error::BadValue { what }))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_json_that_does_not_parse_is_an_error_not_a_panic() {
        assert!(json(Some("{".into()), "step output").is_err());
        assert_eq!(json(None, "step output").ok(), Some(None));
        assert_eq!(
            json(Some("[1]".into()), "x").ok(),
            Some(Some(serde_json::json!([1])))
        );
        assert!(count(-1, "x").is_err());
    }

    #[test]
    fn times_serialize_like_chrono() {
        let at = DateTime::from_timestamp(1_700_000_000, 5_000_000).unwrap_or_default();
        assert_eq!(time(at), serde_json::to_value(at).unwrap_or(Value::Null));
        assert!(time(at).as_str().is_some_and(|s| s.ends_with('Z')));
    }
}
