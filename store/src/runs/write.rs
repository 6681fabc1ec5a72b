//! Writing run records. Every write is an upsert of whole rows, so a write
//! that follows a failed one still lands: a step's row is complete on its
//! own, and a run's row carries everything the run knows at that moment.
//! A step's output is stored as it was rendered (never re-serialised),
//! LZ4-compressed into `output_packed`; the old `output` text column is
//! left NULL by this build (it is still read for rows written before).
//! A step served from the cache as it was stored (`StepRecord::served_from`)
//! is written as a pointer instead: the cached payload's row and the
//! `_loop` text (`output_payload`, `output_loop`), in the same transaction
//! that checks the payload is still there and holds it; a payload gone
//! meanwhile (the cache replaced and collected it) means the output is
//! compressed and written whole after all.

use chrono::{DateTime, Utc};
use dragnet_engine::run::{RunRecord, StepRecord, StepType};

use super::{Lease, RunOwner, Runs};
use crate::codec;
use crate::db::{to_i64, with_pool, BeginWrite, Db, OnDb, Stamp};
use crate::error::{Error, Result};

/// What started the run is written by the first write of its row (a
/// server's submit, which knows who asked) and kept by later ones.
const UPSERT_RUN: &str = "INSERT INTO runs \
     (run_id, workflow, source, status, inputs, started_at, finished_at, duration_ms, host, pid, heartbeat_at, \
      trigger_kind, trigger_scheduled_for, trigger_fired_at, trigger_schedule_id, started_by) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
     ON CONFLICT (run_id) DO UPDATE SET \
     workflow = excluded.workflow, source = excluded.source, status = excluded.status, \
     inputs = excluded.inputs, started_at = excluded.started_at, finished_at = excluded.finished_at, \
     duration_ms = excluded.duration_ms, host = excluded.host, pid = excluded.pid, \
     heartbeat_at = excluded.heartbeat_at, \
     trigger_kind = COALESCE(runs.trigger_kind, excluded.trigger_kind), \
     trigger_scheduled_for = COALESCE(runs.trigger_scheduled_for, excluded.trigger_scheduled_for), \
     trigger_fired_at = COALESCE(runs.trigger_fired_at, excluded.trigger_fired_at), \
     trigger_schedule_id = COALESCE(runs.trigger_schedule_id, excluded.trigger_schedule_id), \
     started_by = COALESCE(runs.started_by, excluded.started_by)";

/// Step rows are written many to a statement (`upsert_steps`): a run's
/// first write holds every step, and a statement is a round trip (to the
/// server, or to SQLite's worker thread), so a 1,000-step run would
/// otherwise spend most of its time handing statements over.
const UPSERT_STEPS: &str = "INSERT INTO run_steps \
     (run_id, idx, id, kind, status, reason, started_at, finished_at, duration_ms, attempts, verdict, \
      output, output_packed, output_bytes, output_payload, output_loop) ";

const UPSERT_STEPS_CONFLICT: &str = " ON CONFLICT (run_id, idx) DO UPDATE SET \
     id = excluded.id, kind = excluded.kind, status = excluded.status, reason = excluded.reason, \
     started_at = excluded.started_at, finished_at = excluded.finished_at, \
     duration_ms = excluded.duration_ms, attempts = excluded.attempts, \
     verdict = excluded.verdict, output = excluded.output, \
     output_packed = excluded.output_packed, output_bytes = excluded.output_bytes, \
     output_payload = excluded.output_payload, output_loop = excluded.output_loop";

/// How many step rows one statement writes (15 parameters each). A
/// statement of each size is prepared once per connection and reused
/// (sqlx keeps prepared statements by their text), so rows go out in
/// these sizes, largest first, rather than one statement of whatever a
/// batch holds: parsing a new statement of n rows cost about as much as
/// writing them (SQLite's parser was 9% of a 1,000-step run's
/// instructions, `docs/PERFORMANCE.md`, P4). The largest is small enough
/// that preparing each size once stays cheap for a short process.
const STATEMENT_SIZES: [usize; 4] = [64, 16, 4, 1];

/// `rows` cut into pieces of [`STATEMENT_SIZES`], largest first.
fn in_statements<T>(rows: &[T]) -> impl Iterator<Item = &[T]> {
    let mut rest = rows;
    std::iter::from_fn(move || {
        let size = STATEMENT_SIZES.into_iter().find(|&n| n <= rest.len())?;
        let (piece, after) = rest.split_at(size);
        rest = after;
        Some(piece)
    })
}

const STEP_RUNNING: &str = "INSERT INTO run_steps (run_id, idx, id, kind, status, started_at) \
     VALUES ($1, $2, $3, $4, 'running', $5) \
     ON CONFLICT (run_id, idx) DO UPDATE SET status = 'running', started_at = excluded.started_at";

/// The fence a write of attempt `$2` (held by `$3`) passes first, in its
/// transaction: the run's row is locked and must still be that attempt's.
const FENCE_PG: &str = "SELECT attempt FROM runs WHERE run_id = $1 AND attempt = $2 \
     AND lease_owner = $3 FOR UPDATE";
const FENCE_SQLITE: &str =
    "SELECT attempt FROM runs WHERE run_id = $1 AND attempt = $2 AND lease_owner = $3";

/// Passes the fence of `$lease` in transaction `$tx` of `$db`, or returns
/// `Error::Fenced` from the enclosing function.
macro_rules! pass_fence {
    ($db:expr, $tx:ident, $lease:expr, $op:expr) => {
        if let Some(lease) = $lease {
            let sql = match $crate::db::OnDb::db($db) {
                Db::Postgres(_) => FENCE_PG,
                Db::Sqlite(_) => FENCE_SQLITE,
            };
            let held: Option<i64> = sqlx::query_scalar(sql)
                .bind(&lease.run_id)
                .bind(lease.attempt)
                .bind(&lease.owner)
                .fetch_optional(&mut *$tx)
                .await
                .map_err($op)?;
            if held.is_none() {
                return Err(Error::Fenced {
                    run_id: lease.run_id.clone(),
                    attempt: lease.attempt,
                });
            }
        }
    };
}

/// A cached payload a step output is about to point at: still there? On
/// PostgreSQL the row is also held until the write commits, so that
/// collecting it waits and then finds the pointer.
const SERVED_PG: &str = "SELECT id FROM cache_payloads WHERE id = $1 FOR KEY SHARE";
const SERVED_SQLITE: &str = "SELECT id FROM cache_payloads WHERE id = $1";

/// In transaction `$tx` of `$db`: each of `$rows` (encoding `$steps`) that
/// points at a cached payload keeps its pointer if the payload is there,
/// and is written whole otherwise.
macro_rules! keep_served {
    ($db:expr, $tx:ident, $rows:expr, $steps:expr, $op:expr) => {
        for (row, step) in $rows.iter_mut().zip($steps) {
            let Some((id, _)) = row.served.as_ref() else {
                continue;
            };
            let sql = match $crate::db::OnDb::db($db) {
                Db::Postgres(_) => SERVED_PG,
                Db::Sqlite(_) => SERVED_SQLITE,
            };
            let there: Option<i64> = sqlx::query_scalar(sql)
                .bind(*id)
                .fetch_optional(&mut *$tx)
                .await
                .map_err($op)?;
            if there.is_none() {
                row.write_whole(step).await?;
            }
        }
    };
}

const HEARTBEAT: &str =
    "UPDATE runs SET heartbeat_at = $2 WHERE run_id = $1 AND status IN ('running', 'queued')";

/// A run's row, encoded.
struct RunRow {
    status: &'static str,
    inputs: String,
    duration_ms: i64,
    pid: i64,
}

/// A step's row, encoded.
struct StepRow {
    idx: i64,
    status: &'static str,
    verdict: Option<String>,
    /// The output's JSON text, LZ4-compressed, and its length before.
    packed: Option<Vec<u8>>,
    output_bytes: Option<i64>,
    /// Instead of `packed`: the cached payload's row and the `_loop` text.
    served: Option<(i64, String)>,
    duration_ms: i64,
    attempts: i64,
}

impl StepRow {
    /// Drops the pointer to a cached payload and writes `step`'s output whole.
    async fn write_whole(&mut self, step: &StepRecord) -> Result<()> {
        self.served = None;
        self.packed = match step.output.as_ref() {
            Some(doc) => Some(codec::compress(doc.clone()).await?),
            None => None,
        };
        Ok(())
    }
}

fn run_row(run: &RunRecord, owner: &RunOwner) -> Result<RunRow> {
    Ok(RunRow {
        status: run.status.as_str(),
        inputs: serde_json::to_string(&run.inputs).map_err(|source| Error::Json {
            what: "run inputs",
            source,
        })?,
        duration_ms: to_i64(run.duration_ms, "run duration")?,
        pid: i64::from(owner.pid),
    })
}

async fn step_row(idx: usize, step: &StepRecord) -> Result<StepRow> {
    let verdict = step
        .verdict
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|source| Error::Json {
            what: "step verdict",
            source,
        })?;
    let (packed, output_bytes, served) = match (step.output.as_ref(), &step.served_from) {
        (Some(doc), Some(from)) => {
            let len = to_i64(doc.get().len() as u64, "step output length")?;
            (None, Some(len), Some((from.row.0, from.loop_text.clone())))
        }
        (Some(doc), None) => {
            let len = to_i64(doc.get().len() as u64, "step output length")?;
            (Some(codec::compress(doc.clone()).await?), Some(len), None)
        }
        (None, _) => (None, None, None),
    };
    Ok(StepRow {
        idx: to_i64(idx as u64, "step index")?,
        status: step.status.as_str(),
        verdict,
        packed,
        output_bytes,
        served,
        duration_ms: to_i64(step.duration_ms, "step duration")?,
        attempts: i64::from(step.attempts),
    })
}

impl Runs {
    /// Writes a run and all its steps as they stand, in one transaction;
    /// `heartbeat_at` is the run's latest sign of life.
    pub async fn write_run(
        &self,
        run: &RunRecord,
        owner: &RunOwner,
        heartbeat_at: DateTime<Utc>,
    ) -> Result<()> {
        self.upsert_run(run, owner, heartbeat_at, true, None).await
    }

    /// `write_run` by the holder of `lease` only: `Error::Fenced`, and
    /// nothing written, once the lease is another attempt's.
    pub async fn write_run_fenced(
        &self,
        run: &RunRecord,
        owner: &RunOwner,
        heartbeat_at: DateTime<Utc>,
        lease: Option<&Lease>,
    ) -> Result<()> {
        self.upsert_run(run, owner, heartbeat_at, true, lease).await
    }

    /// Writes a run's own row only (status, timing, heartbeat), not its steps.
    pub async fn write_run_row(
        &self,
        run: &RunRecord,
        owner: &RunOwner,
        heartbeat_at: DateTime<Utc>,
    ) -> Result<()> {
        self.upsert_run(run, owner, heartbeat_at, false, None).await
    }

    /// `write_run_row` by the holder of `lease` only.
    pub async fn write_run_row_fenced(
        &self,
        run: &RunRecord,
        owner: &RunOwner,
        heartbeat_at: DateTime<Utc>,
        lease: Option<&Lease>,
    ) -> Result<()> {
        self.upsert_run(run, owner, heartbeat_at, false, lease)
            .await
    }

    async fn upsert_run(
        &self,
        run: &RunRecord,
        owner: &RunOwner,
        heartbeat_at: DateTime<Utc>,
        with_steps: bool,
        lease: Option<&Lease>,
    ) -> Result<()> {
        let row = run_row(run, owner)?;
        let mut steps = Vec::new();
        if with_steps {
            for (i, step) in run.steps.iter().enumerate() {
                steps.push(step_row(i, step).await?);
            }
        }
        let op = || Error::query(self.backend(), "runs.write");
        let trigger = run.trigger.as_ref();
        with_pool!(self, |pool, T| {
            let mut tx = pool.begin_write().await.map_err(op())?;
            pass_fence!(self, tx, lease, op());
            sqlx::query(UPSERT_RUN)
                .bind(&run.run_id)
                .bind(&run.workflow)
                .bind(&run.source)
                .bind(row.status)
                .bind(&row.inputs)
                .bind(T::enc(run.started_at))
                .bind(run.finished_at.map(T::enc))
                .bind(row.duration_ms)
                .bind(&owner.host)
                .bind(row.pid)
                .bind(T::enc(heartbeat_at))
                .bind(trigger.map(|t| t.kind.as_str()))
                .bind(trigger.and_then(|t| t.scheduled_for).map(T::enc))
                .bind(trigger.and_then(|t| t.fired_at).map(T::enc))
                .bind(trigger.and_then(|t| t.schedule_id.as_deref()))
                .bind(trigger.and_then(|t| t.started_by.as_deref()))
                .execute(&mut *tx)
                .await
                .map_err(op())?;
            keep_served!(self, tx, steps, run.steps.iter(), op());
            let rows: Vec<_> = run.steps.iter().zip(&steps).collect();
            for chunk in in_statements(&rows) {
                upsert_steps(&run.run_id, chunk, T::enc)
                    .build()
                    .execute(&mut *tx)
                    .await
                    .map_err(op())?;
            }
            tx.commit().await.map_err(op())?;
        });
        Ok(())
    }

    /// Writes step `idx` of run `run_id` whole (its final record, usually).
    pub async fn write_step(&self, run_id: &str, idx: usize, step: &StepRecord) -> Result<()> {
        self.write_steps_fenced(run_id, &[(idx, step)], None).await
    }

    /// Writes steps `(idx, record)` of run `run_id` whole, in one
    /// transaction (one commit for a batch of finished steps).
    pub async fn write_steps(&self, run_id: &str, steps: &[(usize, &StepRecord)]) -> Result<()> {
        self.write_steps_fenced(run_id, steps, None).await
    }

    /// `write_steps` by the holder of `lease` only.
    pub async fn write_steps_fenced(
        &self,
        run_id: &str,
        steps: &[(usize, &StepRecord)],
        lease: Option<&Lease>,
    ) -> Result<()> {
        let mut rows = Vec::with_capacity(steps.len());
        for (idx, step) in steps {
            rows.push(step_row(*idx, step).await?);
        }
        let op = || Error::query(self.backend(), "runs.write_step");
        with_pool!(self, |pool, T| {
            let mut tx = pool.begin_write().await.map_err(op())?;
            pass_fence!(self, tx, lease, op());
            keep_served!(self, tx, rows, steps.iter().map(|(_, step)| *step), op());
            let rows = last_of_each(steps, &rows);
            for chunk in in_statements(&rows) {
                upsert_steps(run_id, chunk, T::enc)
                    .build()
                    .execute(&mut *tx)
                    .await
                    .map_err(op())?;
            }
            tx.commit().await.map_err(op())?;
        });
        Ok(())
    }

    /// Marks step `idx` (`id`, of `kind`) of run `run_id` running since `at`.
    pub async fn mark_step_running(
        &self,
        run_id: &str,
        idx: usize,
        id: &str,
        kind: StepType,
        at: DateTime<Utc>,
    ) -> Result<()> {
        self.mark_step_running_fenced(run_id, idx, id, kind, at, None)
            .await
    }

    /// `mark_step_running` by the holder of `lease` only.
    pub async fn mark_step_running_fenced(
        &self,
        run_id: &str,
        idx: usize,
        id: &str,
        kind: StepType,
        at: DateTime<Utc>,
        lease: Option<&Lease>,
    ) -> Result<()> {
        let idx = to_i64(idx as u64, "step index")?;
        let op = || Error::query(self.backend(), "runs.step_running");
        with_pool!(self, |pool, T| {
            let mut tx = pool.begin_write().await.map_err(op())?;
            pass_fence!(self, tx, lease, op());
            sqlx::query(STEP_RUNNING)
                .bind(run_id)
                .bind(idx)
                .bind(id)
                .bind(kind.as_str())
                .bind(T::enc(at))
                .execute(&mut *tx)
                .await
                .map_err(op())?;
            tx.commit().await.map_err(op())?;
        });
        Ok(())
    }

    /// Records a sign of life of running run `run_id`; false when no such
    /// run is running.
    pub async fn heartbeat(&self, run_id: &str, now: DateTime<Utc>) -> Result<bool> {
        let done = with_pool!(self, |pool, T| {
            sqlx::query(HEARTBEAT)
                .bind(run_id)
                .bind(T::enc(now))
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.heartbeat"))?
                .rows_affected()
        });
        Ok(done > 0)
    }
}

/// The last record of each step in `steps` (encoded as `rows`), in
/// order: one statement may not write a row twice.
fn last_of_each<'a>(
    steps: &[(usize, &'a StepRecord)],
    rows: &'a [StepRow],
) -> Vec<(&'a StepRecord, &'a StepRow)> {
    let mut seen = std::collections::HashSet::new();
    let mut last: Vec<_> = steps
        .iter()
        .zip(rows)
        .rev()
        .filter(|((idx, _), _)| seen.insert(*idx))
        .map(|((_, step), row)| (*step, row))
        .collect();
    last.reverse();
    last
}

/// One statement writing `rows` of run `run_id` whole.
fn upsert_steps<'q, DB, R>(
    run_id: &'q str,
    rows: &[(&'q StepRecord, &'q StepRow)],
    stamp: fn(DateTime<Utc>) -> R,
) -> sqlx::QueryBuilder<'q, DB>
where
    DB: sqlx::Database,
    R: 'q + Send + sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<R>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<&'q [u8]>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut query = sqlx::QueryBuilder::new(UPSERT_STEPS);
    query.push_values(rows, |mut row, (step, enc)| {
        row.push_bind(run_id)
            .push_bind(enc.idx)
            .push_bind(step.id.as_str())
            .push_bind(step.kind.as_str())
            .push_bind(enc.status)
            .push_bind(step.reason.as_deref())
            .push_bind(step.started_at.map(stamp))
            .push_bind(step.finished_at.map(stamp))
            .push_bind(enc.duration_ms)
            .push_bind(enc.attempts)
            .push_bind(enc.verdict.clone())
            // The text column of older builds: never written now.
            .push("NULL")
            .push_bind(enc.packed.as_deref())
            .push_bind(enc.output_bytes)
            .push_bind(enc.served.as_ref().map(|(id, _)| *id))
            .push_bind(enc.served.as_ref().map(|(_, text)| text.clone()));
    });
    query.push(UPSERT_STEPS_CONFLICT);
    query
}

#[cfg(test)]
mod tests {
    use super::{in_statements, STATEMENT_SIZES};

    #[test]
    fn rows_go_out_whole_in_order_in_the_fixed_sizes() {
        for n in [0, 1, 3, 4, 5, 21, 64, 65, 300, 1_000, 1_001] {
            let rows: Vec<usize> = (0..n).collect();
            let pieces: Vec<&[usize]> = in_statements(&rows).collect();
            assert!(
                pieces.iter().all(|p| STATEMENT_SIZES.contains(&p.len())),
                "{n}"
            );
            assert_eq!(pieces.concat(), rows, "{n}");
            // Largest first: no piece after one smaller than it.
            assert!(pieces.windows(2).all(|w| w[0].len() >= w[1].len()), "{n}");
        }
        let sizes = |n: usize| {
            let rows = vec![(); n];
            in_statements(&rows).map(<[()]>::len).collect::<Vec<_>>()
        };
        assert_eq!(sizes(100), [64, 16, 16, 4]);
        assert_eq!(sizes(7), [4, 1, 1, 1]);
    }
}
