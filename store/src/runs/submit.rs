//! Runs submitted to a server: the run's row is written before it starts,
//! with its team and workflow version, together with the request's
//! idempotency key in one transaction, so the same key never makes two
//! runs. A key is honoured for 24 hours.

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use super::RunOwner;
use crate::db::{col, with_pool, Db, Stamp};
use crate::error::{Error, Result};

/// How long an idempotency key answers with its first run.
pub const IDEMPOTENCY_WINDOW: Duration = Duration::hours(24);

/// The row of a run about to start: `queued` until its run begins.
pub(crate) const INSERT_RUN: &str = "INSERT INTO runs (run_id, workflow, source, status, inputs, \
     started_at, duration_ms, host, pid, heartbeat_at, team_id, workflow_version) \
     VALUES ($1, $2, $3, 'queued', $4, $5, 0, $6, $7, $5, $8, $9)";

/// Writes the row of `$run` (a `NewRun`) in transaction `$tx`, timestamps
/// through the backend's codec `$T`.
macro_rules! insert_run {
    ($tx:ident, $T:ident, $run:expr, $inputs:expr, $owner:expr, $now:expr) => {
        sqlx::query($crate::runs::submit::INSERT_RUN)
            .bind($run.run_id)
            .bind($run.workflow)
            .bind($run.source)
            .bind($inputs)
            .bind($T::enc($now))
            .bind(&$owner.host)
            .bind(i64::from($owner.pid))
            .bind($run.team_id)
            .bind($run.version)
            .execute(&mut *$tx)
            .await
    };
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

impl Db {
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
            let mut tx = pool.begin().await.map_err(op("runs.submit"))?;
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
            insert_run!(tx, T, run, &inputs, owner, now).map_err(op("runs.submit"))?;
            tx.commit().await.map_err(op("runs.submit"))?;
            Ok(Submitted::Created)
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
