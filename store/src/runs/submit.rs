//! Runs submitted to a server: the run's row is written before it starts,
//! with its team and workflow version, together with the request's
//! idempotency key in one transaction, so the same key never makes two
//! runs. A key is honoured for 24 hours.

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use super::{Lease, LeaseLength, RunOwner, Runs};
use crate::db::{col, with_pool, BeginWrite, OnDb, Stamp};
use crate::error::{Error, Result};

/// How long an idempotency key answers with its first run.
pub const IDEMPOTENCY_WINDOW: Duration = Duration::hours(24);

/// The row of a run about to start: `queued` until its run begins, and
/// claimed at once by the process submitting it when `NewRun::claim` says
/// so (attempt 1, its lease from the database clock), so that no other
/// claimer ever sees it unclaimed.
pub(crate) const INSERT_RUN_PG: &str =
    "INSERT INTO runs (run_id, workflow, source, status, inputs, \
     started_at, duration_ms, host, pid, heartbeat_at, team_id, workflow_version, launch, \
     attempt, lease_owner, lease_expires_at, \
     trigger_kind, trigger_scheduled_for, trigger_fired_at, trigger_schedule_id, started_by) \
     VALUES ($1, $2, $3, 'queued', $4, $5, 0, $6, $7, $5, $8, $9, $10, $11, $12, \
     CASE WHEN $13::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $13::float8) END, \
     $14, $15, $16, $17, $18)";
pub(crate) const INSERT_RUN_SQLITE: &str = "INSERT INTO runs (run_id, workflow, source, status, \
     inputs, started_at, duration_ms, host, pid, heartbeat_at, team_id, workflow_version, launch, \
     attempt, lease_owner, lease_expires_at, \
     trigger_kind, trigger_scheduled_for, trigger_fired_at, trigger_schedule_id, started_by) \
     VALUES ($1, $2, $3, 'queued', $4, $5, 0, $6, $7, $5, $8, $9, $10, $11, $12, \
     CASE WHEN $13 IS NULL THEN NULL \
     ELSE CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) + $13 END, \
     $14, $15, $16, $17, $18)";

/// Writes the row of `$run` (a `NewRun`) in transaction `$tx` of `$db`,
/// timestamps through the backend's codec `$T`.
macro_rules! insert_run {
    ($db:expr, $tx:ident, $T:ident, $run:expr, $inputs:expr, $owner:expr, $now:expr) => {{
        let (sql, length) = match ($crate::db::OnDb::db($db), &$run.claim) {
            ($crate::db::Db::Postgres(_), claim) => (
                $crate::runs::submit::INSERT_RUN_PG,
                claim.as_ref().map(|(_, l)| l.get().as_secs_f64()),
            ),
            ($crate::db::Db::Sqlite(_), claim) => (
                $crate::runs::submit::INSERT_RUN_SQLITE,
                claim.as_ref().map(|(_, l)| l.get().as_millis() as f64),
            ),
        };
        sqlx::query(sql)
            .bind($run.run_id)
            .bind($run.workflow)
            .bind($run.source)
            .bind($inputs)
            .bind($T::enc($now))
            .bind(&$owner.host)
            .bind(i64::from($owner.pid))
            .bind($run.team_id)
            .bind($run.version)
            .bind($run.launch.map(|l: &serde_json::Value| l.to_string()))
            .bind(if $run.claim.is_some() { 1_i64 } else { 0_i64 })
            .bind($run.claim.as_ref().map(|(o, _)| o.to_string()))
            .bind(length)
            .bind($run.trigger.as_ref().map(|t| t.kind.as_str()))
            .bind(
                $run.trigger
                    .as_ref()
                    .and_then(|t| t.scheduled_for)
                    .map($T::enc),
            )
            .bind($run.trigger.as_ref().and_then(|t| t.fired_at).map($T::enc))
            .bind($run.trigger.as_ref().and_then(|t| t.schedule_id.clone()))
            .bind($run.trigger.as_ref().and_then(|t| t.started_by.clone()))
            .execute(&mut *$tx)
            .await
    }};
}
pub(crate) use insert_run;

/// Inputs as the JSON text a run row keeps.
pub(crate) fn inputs_text(inputs: &Value) -> Result<String> {
    serde_json::to_string(inputs).map_err(|source| Error::Json {
        what: "run inputs",
        source,
    })
}

/// A run about to start.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub run_id: &'a str,
    pub team_id: &'a str,
    pub workflow: &'a str,
    pub version: i64,
    pub source: &'a str,
    pub inputs: &'a Value,
    /// The request's `Idempotency-Key` and a hash of what it asked for.
    pub idempotency: Option<(&'a str, &'a str)>,
    /// What another process needs to start it (`$.trigger`, cache flags,
    /// kept steps), as the server writes it.
    pub launch: Option<&'a Value>,
    /// Claimed by the submitting process as it is written: its lease
    /// owner and the lease's length (the run's first attempt is 1).
    pub claim: Option<(&'a str, LeaseLength)>,
    /// What started it (its kind, tick, schedule and who asked), kept in
    /// the row's trigger columns.
    pub trigger: Option<dragnet_engine::run::RunTrigger>,
}

impl NewRun<'_> {
    /// The lease the submitting process holds once the run is written with
    /// a `claim`.
    pub fn lease(&self) -> Option<Lease> {
        self.claim.as_ref().map(|(owner, _)| Lease {
            run_id: self.run_id.to_string(),
            attempt: 1,
            owner: owner.to_string(),
        })
    }
}

/// A claimed run, as its row describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedRun {
    pub team_id: String,
    pub workflow: String,
    pub version: i64,
    pub inputs: Value,
    pub launch: Option<Value>,
}

/// What submitting did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted {
    /// The run's row is written; start it.
    Created,
    /// The key was used for the same request: this is its run.
    Existing { run_id: String },
    /// The key was used for another request.
    KeyReused,
}

impl Runs {
    /// Writes the row of a run about to start (`queued` until it has a
    /// concurrency slot, owned by `owner`), unless its idempotency key
    /// answers with an earlier run.
    pub async fn submit_run(
        &self,
        run: NewRun<'_>,
        owner: &RunOwner,
        now: DateTime<Utc>,
    ) -> Result<Submitted> {
        let inputs = inputs_text(run.inputs)?;
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let mut tx = pool.begin_write().await.map_err(op("runs.submit"))?;
            if let Some((key, body_hash)) = run.idempotency {
                let earlier = sqlx::query(
                    "SELECT body_hash, run_id, created_at FROM idempotency_keys \
                     WHERE team_id = $1 AND key = $2",
                )
                .bind(run.team_id)
                .bind(key)
                .fetch_optional(&mut *tx)
                .await
                .map_err(op("runs.idempotency"))?;
                if let Some(row) = earlier {
                    let at = T::dec(col(&row, "created_at")?)?;
                    if now - at < IDEMPOTENCY_WINDOW {
                        let hash: String = col(&row, "body_hash")?;
                        return Ok(if hash == body_hash {
                            Submitted::Existing {
                                run_id: col(&row, "run_id")?,
                            }
                        } else {
                            Submitted::KeyReused
                        });
                    }
                    sqlx::query("DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2")
                        .bind(run.team_id)
                        .bind(key)
                        .execute(&mut *tx)
                        .await
                        .map_err(op("runs.idempotency"))?;
                }
                sqlx::query(
                    "INSERT INTO idempotency_keys (team_id, key, body_hash, run_id, created_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(run.team_id)
                .bind(key)
                .bind(body_hash)
                .bind(run.run_id)
                .bind(T::enc(now))
                .execute(&mut *tx)
                .await
                .map_err(op("runs.idempotency"))?;
            }
            insert_run!(self, tx, T, run, &inputs, owner, now).map_err(op("runs.submit"))?;
            tx.commit().await.map_err(op("runs.submit"))?;
            Ok(Submitted::Created)
        })
    }

    /// What a process that claimed run `run_id` needs to start it: its
    /// team, workflow, version, inputs and launch; `None` for no such run
    /// (or one not submitted to a server).
    pub async fn claimed_run(&self, run_id: &str) -> Result<Option<ClaimedRun>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query(
                "SELECT team_id, workflow, workflow_version, inputs, launch FROM runs \
                 WHERE run_id = $1 AND team_id IS NOT NULL",
            )
            .bind(run_id)
            .fetch_optional(pool)
            .await
            .map_err(Error::query(self.backend(), "runs.claimed"))?;
            let Some(row) = row else {
                return Ok(None);
            };
            let text: String = col(&row, "inputs")?;
            let launch: Option<String> = col(&row, "launch")?;
            let json = |text: &str, what| {
                serde_json::from_str(text).map_err(|source| Error::Json { what, source })
            };
            Ok(Some(ClaimedRun {
                team_id: col(&row, "team_id")?,
                workflow: col(&row, "workflow")?,
                version: col::<_, Option<i64>>(&row, "workflow_version")?.unwrap_or(1),
                inputs: json(&text, "run inputs")?,
                launch: launch
                    .as_deref()
                    .map(|l| json(l, "run launch"))
                    .transpose()?,
            }))
        })
    }

    /// Who owns run `run_id`: its team and workflow version, or `None`
    /// when there is no such run.
    pub async fn run_owner(&self, run_id: &str) -> Result<Option<(Option<String>, Option<i64>)>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query("SELECT team_id, workflow_version FROM runs WHERE run_id = $1")
                .bind(run_id)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.owner"))?;
            row.map(|row| Ok((col(&row, "team_id")?, col(&row, "workflow_version")?)))
                .transpose()
        })
    }
}
