//! Reading run records back into the engine's typed `RunRecord` and
//! `RunSummary`: a newest-first list, and one run with its steps in order.
//! Statuses are read by the names they were stored by (`interrupted` too),
//! verdicts and inputs from their JSON, outputs kept as the raw JSON text
//! they were written as (inflated from `output_packed`, or from the `output`
//! text of rows older than it; a step served from the cache is the payload
//! it points at written again with its `_loop` text, byte for byte). A listing reads the runs' rows and counts of
//! their steps, never an output. `Runs` is the engine's `RunLog`.

use dragnet_core::Document;
use dragnet_walk::result::served_document;

use chrono::{DateTime, Utc};
use dragnet_engine::run::{
    LogFuture, RunLog, RunLogError, RunRecord, RunStatus, RunSummary, RunTrigger, StepRecord,
    StepVerdict, TriggerKind,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Runs;
use crate::codec::{self, Codec};
use crate::db::{col, to_u64, with_pool, OnDb, Stamp};
use crate::error::{Error, Result};

/// The columns of a listing: a run's row and counts of its steps.
macro_rules! list_select {
    () => {
        "SELECT r.run_id, r.workflow, r.status, r.started_at, r.duration_ms, r.trigger_kind, \
         (SELECT COUNT(*) FROM run_steps s WHERE s.run_id = r.run_id) AS steps, \
         (SELECT COUNT(*) FROM run_steps s WHERE s.run_id = r.run_id AND s.status = 'failed') AS failed, \
         (SELECT COUNT(*) FROM run_steps s WHERE s.run_id = r.run_id AND s.status = 'skipped') AS skipped \
         FROM runs r"
    };
}

#[cfg(all(test, feature = "testing"))]
pub(crate) const LIST: &str = concat!(
    list_select!(),
    " ORDER BY r.started_at DESC, r.run_id DESC LIMIT $1"
);

/// Which runs a listing shows; every field left empty shows all.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only this team's runs.
    pub team_id: Option<String>,
    pub workflow: Option<String>,
    pub status: Option<RunStatus>,
    /// Only runs started this way.
    pub trigger: Option<TriggerKind>,
    /// Only runs listed after this one (started at, run id): the cursor of
    /// the page before.
    pub before: Option<(DateTime<Utc>, String)>,
    /// Only runs started at or after this time.
    pub since: Option<DateTime<Utc>>,
}

impl RunFilter {
    /// The statement: conditions numbered in the order they are bound.
    fn sql(&self) -> String {
        let mut conditions = Vec::new();
        let mut n = 0;
        let mut next = || {
            n += 1;
            n
        };
        if self.team_id.is_some() {
            conditions.push(format!("r.team_id = ${}", next()));
        }
        if self.workflow.is_some() {
            conditions.push(format!("r.workflow = ${}", next()));
        }
        if self.status.is_some() {
            conditions.push(format!("r.status = ${}", next()));
        }
        if self.trigger.is_some() {
            conditions.push(format!("r.trigger_kind = ${}", next()));
        }
        if self.since.is_some() {
            conditions.push(format!("r.started_at >= ${}", next()));
        }
        if self.before.is_some() {
            let (at, id) = (next(), next());
            conditions.push(format!(
                "(r.started_at < ${at} OR (r.started_at = ${at} AND r.run_id < ${id}))"
            ));
        }
        let filter = match conditions.is_empty() {
            true => String::new(),
            false => format!(" WHERE {}", conditions.join(" AND ")),
        };
        format!(
            "{}{filter} ORDER BY r.started_at DESC, r.run_id DESC LIMIT ${}",
            list_select!(),
            next()
        )
    }
}

const RUN: &str = "SELECT run_id, workflow, source, status, inputs, started_at, finished_at, \
     duration_ms, trigger_kind, trigger_scheduled_for, trigger_fired_at, trigger_schedule_id, \
     started_by FROM runs WHERE run_id = $1";

/// A step served from the cache reads the payload it points at too.
const STEPS: &str = "SELECT s.id, s.kind, s.status, s.reason, s.started_at, s.finished_at, \
     s.duration_ms, s.attempts, s.verdict, s.output, s.output_packed, s.output_bytes, s.output_loop, \
     p.codec AS served_codec, p.payload AS served_payload, p.payload_bytes AS served_bytes \
     FROM run_steps s LEFT JOIN cache_payloads p ON p.id = s.output_payload \
     WHERE s.run_id = $1 ORDER BY s.idx";

/// The same without the outputs (which may be megabytes each).
const STEPS_BARE: &str = "SELECT id, kind, status, reason, started_at, finished_at, duration_ms, \
     attempts, verdict, NULL AS output, NULL AS output_packed, NULL AS output_bytes, \
     NULL AS output_loop, NULL AS served_codec, NULL AS served_payload, NULL AS served_bytes \
     FROM run_steps WHERE run_id = $1 ORDER BY idx";

impl Runs {
    /// The `limit` most recent runs, newest first.
    pub async fn list_runs(&self, limit: u32) -> Result<Vec<RunSummary>> {
        self.list_runs_where(&RunFilter::default(), limit).await
    }

    /// The `limit` most recent runs `filter` lets through, newest first.
    pub async fn list_runs_where(&self, filter: &RunFilter, limit: u32) -> Result<Vec<RunSummary>> {
        let sql = filter.sql();
        with_pool!(self, |pool, T| {
            let mut query = sqlx::query(&sql);
            if let Some(team) = &filter.team_id {
                query = query.bind(team);
            }
            if let Some(workflow) = &filter.workflow {
                query = query.bind(workflow);
            }
            if let Some(status) = filter.status {
                query = query.bind(status.as_str());
            }
            if let Some(kind) = filter.trigger {
                query = query.bind(kind.as_str());
            }
            if let Some(since) = filter.since {
                query = query.bind(T::enc(since));
            }
            if let Some((at, id)) = &filter.before {
                query = query.bind(T::enc(*at)).bind(id);
            }
            let rows = query
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.list"))?;
            rows.iter()
                .map(|row| {
                    Ok(RunSummary {
                        run_id: col(row, "run_id")?,
                        workflow: col(row, "workflow")?,
                        status: name(col(row, "status")?, "run status")?,
                        started_at: T::dec(col(row, "started_at")?)?,
                        duration_ms: to_u64(col(row, "duration_ms")?, "run duration")?,
                        steps: to_u64(col(row, "steps")?, "step count")?,
                        failed: to_u64(col(row, "failed")?, "step count")?,
                        skipped: to_u64(col(row, "skipped")?, "step count")?,
                        trigger: trigger_kind(col(row, "trigger_kind")?)?,
                    })
                })
                .collect()
        })
    }

    /// Run `run_id` with its steps in workflow order, or `None`.
    pub async fn get_run(&self, run_id: &str) -> Result<Option<RunRecord>> {
        self.get_run_with(run_id, true).await
    }

    /// Run `run_id`, its steps' outputs read only when `outputs` is true.
    pub async fn get_run_with(&self, run_id: &str, outputs: bool) -> Result<Option<RunRecord>> {
        let steps_sql = if outputs { STEPS } else { STEPS_BARE };
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
            let step_rows = sqlx::query(steps_sql)
                .bind(run_id)
                .fetch_all(pool)
                .await
                .map_err(op())?;
            let mut steps = Vec::with_capacity(step_rows.len());
            for s in &step_rows {
                let from_cache = (
                    col::<_, Option<String>>(s, "output_loop")?,
                    col::<_, Option<String>>(s, "served_codec")?,
                    col::<_, Option<Vec<u8>>>(s, "served_payload")?,
                    col::<_, Option<i64>>(s, "served_bytes")?,
                );
                let output = match (col::<_, Option<Vec<u8>>>(s, "output_packed")?, from_cache) {
                    (_, (Some(loop_text), Some(codec), Some(payload), Some(len))) => {
                        let len = to_u64(len, "cached payload length")?;
                        Some(served(&codec, payload, len, &loop_text).await?)
                    }
                    (Some(packed), _) => {
                        let len = col::<_, Option<i64>>(s, "output_bytes")?.unwrap_or(0);
                        Some(unpack(packed, to_u64(len, "step output length")?).await?)
                    }
                    (None, _) => raw(col(s, "output")?)?,
                };
                steps.push(StepRecord {
                    id: col(s, "id")?,
                    kind: name(col(s, "kind")?, "step kind")?,
                    status: name(col(s, "status")?, "step status")?,
                    reason: col(s, "reason")?,
                    started_at: T::dec_opt(col(s, "started_at")?)?,
                    finished_at: T::dec_opt(col(s, "finished_at")?)?,
                    duration_ms: to_u64(col(s, "duration_ms")?, "step duration")?,
                    attempts: attempts(col(s, "attempts")?)?,
                    verdict: json::<StepVerdict>(col(s, "verdict")?, "step verdict")?,
                    output,
                    watermark: None,
                    served_from: None,
                });
            }
            Ok(Some(RunRecord {
                run_id: col(&row, "run_id")?,
                workflow: col(&row, "workflow")?,
                source: col(&row, "source")?,
                status: name(col(&row, "status")?, "run status")?,
                started_at: T::dec(col(&row, "started_at")?)?,
                finished_at: T::dec_opt(col(&row, "finished_at")?)?,
                duration_ms: to_u64(col(&row, "duration_ms")?, "run duration")?,
                inputs: json::<Value>(Some(col(&row, "inputs")?), "run inputs")?
                    .unwrap_or(Value::Null),
                steps,
                trigger: match trigger_kind(col(&row, "trigger_kind")?)? {
                    None => None,
                    Some(kind) => Some(RunTrigger {
                        kind,
                        scheduled_for: T::dec_opt(col(&row, "trigger_scheduled_for")?)?,
                        fired_at: T::dec_opt(col(&row, "trigger_fired_at")?)?,
                        schedule_id: col(&row, "trigger_schedule_id")?,
                        started_by: col(&row, "started_by")?,
                    }),
                },
            }))
        })
    }
}

impl RunLog for Runs {
    fn list(&self, limit: u32) -> LogFuture<'_, Vec<RunSummary>> {
        Box::pin(async move { self.list_runs(limit).await.map_err(RunLogError::new) })
    }

    fn list_triggered(
        &self,
        limit: u32,
        trigger: Option<TriggerKind>,
    ) -> LogFuture<'_, Vec<RunSummary>> {
        let filter = RunFilter {
            trigger,
            ..RunFilter::default()
        };
        Box::pin(async move {
            self.list_runs_where(&filter, limit)
                .await
                .map_err(RunLogError::new)
        })
    }

    fn get<'a>(&'a self, run_id: &'a str) -> LogFuture<'a, Option<RunRecord>> {
        Box::pin(async move { self.get_run(run_id).await.map_err(RunLogError::new) })
    }
}

/// A stored trigger kind (NULL on rows from before it was kept).
fn trigger_kind(stored: Option<String>) -> Result<Option<TriggerKind>> {
    stored
        .map(|k| {
            TriggerKind::parse(&k).ok_or(Error::BadValue {
                what: "trigger kind",
            })
        })
        .transpose()
}

/// A status or kind back from the snake_case name it was stored by.
fn name<T: DeserializeOwned>(stored: String, what: &'static str) -> Result<T> {
    serde_json::from_value(Value::String(stored)).map_err(|_| Error::BadValue { what })
}

fn attempts(stored: i64) -> Result<u32> {
    u32::try_from(stored).map_err(|_| Error::BadValue {
        what: "step attempts",
    })
}

/// Stored JSON text back to a value.
fn json<V: DeserializeOwned>(text: Option<String>, what: &'static str) -> Result<Option<V>> {
    text.map(|t| serde_json::from_str(&t).map_err(|_| Error::BadValue { what }))
        .transpose()
}

/// A packed step output (`len` bytes inflated) as the raw JSON it was.
async fn unpack(packed: Vec<u8>, len: u64) -> Result<Document> {
    let bad = || Error::BadValue {
        what: "step output",
    };
    let text = codec::decompress(packed, len, Codec::Lz4, "a run step")
        .await
        .map_err(|_| bad())?;
    let text = String::from_utf8(text).map_err(|_| bad())?;
    raw(Some(text))?.ok_or_else(bad)
}

/// A step's output served from the cache: the payload it was served
/// (`codec`-compressed, `len` bytes whole) written with its `_loop` text,
/// the same bytes the step rendered.
async fn served(codec: &str, payload: Vec<u8>, len: u64, loop_text: &str) -> Result<Document> {
    let bad = || Error::BadValue {
        what: "step output served from the cache",
    };
    let codec = Codec::parse(codec).ok_or_else(bad)?;
    let bytes = codec::decompress(payload, len, codec, "a run step")
        .await
        .map_err(|_| bad())?;
    let payload = dragnet_walk::cache::stored::decode(bytes).ok_or_else(bad)?;
    Ok(served_document(&payload, loop_text))
}

/// A step's output as the raw JSON it was written as.
fn raw(text: Option<String>) -> Result<Option<Document>> {
    text.map(|t| {
        Document::parse(t).map_err(|_| Error::BadValue {
            what: "step output",
        })
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dragnet_engine::run::{RunStatus, StepStatus, StepType};

    #[test]
    fn stored_values_that_do_not_read_back_are_errors_not_panics() {
        assert!(json::<Value>(Some("{".into()), "step output").is_err());
        assert_eq!(json::<Value>(None, "step output").ok(), Some(None));
        assert_eq!(
            json::<Value>(Some("[1]".into()), "x").ok(),
            Some(Some(serde_json::json!([1])))
        );
        assert!(raw(Some("{".into())).is_err());
        assert_eq!(
            raw(Some(r#"{"a": 1}"#.into()))
                .ok()
                .flatten()
                .map(|r| r.get().to_string()),
            Some(r#"{"a": 1}"#.to_string()),
            "kept as written"
        );
        assert!(attempts(-1).is_err());
        assert!(name::<RunStatus>("exploded".into(), "run status").is_err());
    }

    #[test]
    fn names_read_back_as_the_engine_writes_them() {
        assert_eq!(
            name::<RunStatus>("interrupted".into(), "s").ok(),
            Some(RunStatus::Interrupted)
        );
        assert_eq!(
            name::<StepStatus>("skipped".into(), "s").ok(),
            Some(StepStatus::Skipped)
        );
        assert_eq!(
            name::<StepType>("branch".into(), "k").ok(),
            Some(StepType::Branch)
        );
    }
}

/// The listing on both backends reads counts, never an output column.
#[cfg(all(test, feature = "testing"))]
mod listing {

    use chrono::{DateTime, Utc};
    use dragnet_core::Document;
    use dragnet_engine::run::{RunRecord, RunStatus, StepRecord, StepStatus, StepType};
    use sqlx::{Column, Row};

    use super::LIST;
    use crate::{Db, RunOwner};

    const COLUMNS: [&str; 9] = [
        "run_id",
        "workflow",
        "status",
        "started_at",
        "duration_ms",
        "trigger_kind",
        "steps",
        "failed",
        "skipped",
    ];

    crate::on_both_backends!(a_listing_returns_counts_and_no_output);

    async fn a_listing_returns_counts_and_no_output(db: Db) -> anyhow::Result<()> {
        let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap_or_default();
        let mut step = StepRecord::pending("fetch", StepType::Tool);
        step.status = StepStatus::Failed;
        let big = format!("[{}]", vec!["1234567890"; 100_000].join(","));
        step.output = Some(Document::parse(big)?);
        let run = RunRecord {
            run_id: "r".into(),
            workflow: "w".into(),
            source: "w.yaml".into(),
            status: RunStatus::Failed,
            started_at: at,
            finished_at: Some(at),
            duration_ms: 5,
            inputs: serde_json::json!({}),
            steps: vec![step, StepRecord::pending("next", StepType::Tool)],
            trigger: None,
        };
        let owner = RunOwner {
            host: "h".into(),
            pid: 1,
        };
        db.runs().write_run(&run, &owner, at).await?;
        let names: Vec<String> = match &db {
            Db::Sqlite(pool) => {
                let rows = sqlx::query(LIST).bind(10i64).fetch_all(pool).await?;
                anyhow::ensure!(rows.len() == 1);
                rows[0]
                    .columns()
                    .iter()
                    .map(|c| c.name().to_string())
                    .collect()
            }
            Db::Postgres(pool) => {
                let rows = sqlx::query(LIST).bind(10i64).fetch_all(pool).await?;
                anyhow::ensure!(rows.len() == 1);
                rows[0]
                    .columns()
                    .iter()
                    .map(|c| c.name().to_string())
                    .collect()
            }
        };
        anyhow::ensure!(names == COLUMNS, "the listing returns {names:?}");
        let listed = db.runs().list_runs(10).await?;
        anyhow::ensure!(listed.len() == 1 && listed[0].steps == 2 && listed[0].failed == 1);
        Ok(())
    }
}
