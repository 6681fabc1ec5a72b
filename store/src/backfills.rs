//! Backfills (issue 25 §2): a team's request to run every tick of a
//! workflow's schedules in a window, with one row per tick. The runner's
//! pass takes a backfill's turn, starts its next pending
//! ticks while fewer than its concurrency run, marks ticks that already
//! have a complete run skipped, and settles the backfill when nothing is
//! pending or running. Cancelling marks the pending ticks `cancelled` and
//! hands back the runs still going, for the caller to cancel.
//! A pass holds a backfill's turn until a time ([`Backfills::take_turn`],
//! [`Backfills::end_turn`]): no other process advances it meanwhile.

use chrono::{DateTime, Utc};

use crate::db::{col, handle, with_pool, BeginWrite, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// Backfills and their ticks (`Db::backfills`).
    Backfills
}

/// A backfill to record, with its ticks in the order they start.
#[derive(Debug, Clone)]
pub struct NewBackfill<'a> {
    pub backfill_id: &'a str,
    pub team_id: &'a str,
    pub workflow: &'a str,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub newest_first: bool,
    pub concurrency: u32,
    pub rerun: bool,
    /// `token:<id>` of who asked.
    pub created_by: Option<&'a str>,
    pub created_at: DateTime<Utc>,
    /// Each tick and the schedule it is of, in start order.
    pub ticks: &'a [(DateTime<Utc>, String)],
}

/// A recorded backfill, with how its ticks stand.
#[derive(Debug, Clone, PartialEq)]
pub struct BackfillRow {
    pub backfill_id: String,
    pub team_id: String,
    pub workflow: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub newest_first: bool,
    pub concurrency: u32,
    pub rerun: bool,
    /// running | succeeded | partial | failed | cancelled
    pub status: String,
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// One tick of a backfill, with its run's status when it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct BackfillTick {
    pub idx: u32,
    pub scheduled_for: DateTime<Utc>,
    pub schedule_id: String,
    /// pending | started | skipped | cancelled
    pub state: String,
    pub run_id: Option<String>,
    pub reason: Option<String>,
    /// queued | running | succeeded | partial | failed | cancelled | interrupted
    pub run_status: Option<String>,
}

const COLUMNS: &str = "backfill_id, team_id, workflow, window_from, window_to, newest_first, \
     concurrency, rerun, status, created_by, created_at, finished_at";

macro_rules! backfill_row {
    ($row:expr, $T:ident) => {{
        let flag = |v: i64| v != 0;
        BackfillRow {
            backfill_id: col($row, "backfill_id")?,
            team_id: col($row, "team_id")?,
            workflow: col($row, "workflow")?,
            from: $T::dec(col($row, "window_from")?)?,
            to: $T::dec(col($row, "window_to")?)?,
            newest_first: flag(col::<_, i64>($row, "newest_first")?),
            concurrency: u32::try_from(col::<_, i64>($row, "concurrency")?).unwrap_or(1),
            rerun: flag(col::<_, i64>($row, "rerun")?),
            status: col($row, "status")?,
            created_by: col($row, "created_by")?,
            created_at: $T::dec(col($row, "created_at")?)?,
            finished_at: $T::dec_opt(col($row, "finished_at")?)?,
        }
    }};
}

impl Backfills {
    /// Records `new` and its ticks, all pending, in one transaction.
    pub async fn create_backfill(&self, new: &NewBackfill<'_>) -> Result<()> {
        with_pool!(self, |pool, T| {
            let op = || Error::query(self.backend(), "backfills.create");
            let mut tx = pool.begin_write().await.map_err(op())?;
            sqlx::query(&format!(
                "INSERT INTO backfills ({COLUMNS}) VALUES \
                 ($1, $2, $3, $4, $5, $6, $7, $8, 'running', $9, $10, NULL)"
            ))
            .bind(new.backfill_id)
            .bind(new.team_id)
            .bind(new.workflow)
            .bind(T::enc(new.from))
            .bind(T::enc(new.to))
            .bind(i64::from(new.newest_first))
            .bind(i64::from(new.concurrency))
            .bind(i64::from(new.rerun))
            .bind(new.created_by)
            .bind(T::enc(new.created_at))
            .execute(&mut *tx)
            .await
            .map_err(op())?;
            for (idx, (at, schedule_id)) in new.ticks.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO backfill_ticks (backfill_id, idx, scheduled_for, schedule_id, \
                     state) VALUES ($1, $2, $3, $4, 'pending')",
                )
                .bind(new.backfill_id)
                .bind(idx as i64)
                .bind(T::enc(*at))
                .bind(schedule_id)
                .execute(&mut *tx)
                .await
                .map_err(op())?;
            }
            tx.commit().await.map_err(op())?;
            Ok(())
        })
    }

    /// The team's backfills, newest first.
    pub async fn team_backfills(&self, team_id: &str, limit: u32) -> Result<Vec<BackfillRow>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM backfills WHERE team_id = $1 \
                 ORDER BY created_at DESC, backfill_id DESC LIMIT $2"
            ))
            .bind(team_id)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.list"))?;
            rows.iter().map(|row| Ok(backfill_row!(row, T))).collect()
        })
    }

    /// The team's backfill `backfill_id`.
    pub async fn backfill(&self, team_id: &str, backfill_id: &str) -> Result<Option<BackfillRow>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM backfills WHERE team_id = $1 AND backfill_id = $2"
            ))
            .bind(team_id)
            .bind(backfill_id)
            .fetch_optional(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.get"))?;
            row.map(|row| Ok(backfill_row!(&row, T))).transpose()
        })
    }

    /// Every backfill still running (of every team).
    pub async fn running_backfills(&self) -> Result<Vec<BackfillRow>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM backfills WHERE status = 'running' ORDER BY created_at"
            ))
            .fetch_all(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.running"))?;
            rows.iter().map(|row| Ok(backfill_row!(row, T))).collect()
        })
    }

    /// A backfill's ticks in start order, with their runs' statuses.
    pub async fn backfill_ticks(&self, backfill_id: &str) -> Result<Vec<BackfillTick>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(
                "SELECT t.idx, t.scheduled_for, t.schedule_id, t.state, t.run_id, t.reason, \
                 r.status AS run_status FROM backfill_ticks t \
                 LEFT JOIN runs r ON r.run_id = t.run_id \
                 WHERE t.backfill_id = $1 ORDER BY t.idx",
            )
            .bind(backfill_id)
            .fetch_all(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.ticks"))?;
            rows.iter()
                .map(|row| {
                    Ok(BackfillTick {
                        idx: u32::try_from(col::<_, i64>(row, "idx")?).unwrap_or(0),
                        scheduled_for: T::dec(col(row, "scheduled_for")?)?,
                        schedule_id: col(row, "schedule_id")?,
                        state: col(row, "state")?,
                        run_id: col(row, "run_id")?,
                        reason: col(row, "reason")?,
                        run_status: col(row, "run_status")?,
                    })
                })
                .collect()
        })
    }

    /// Takes the running backfill's turn until `until`: true when no other
    /// pass holds it at `now` (none does, or its hold has passed).
    pub async fn take_turn(
        &self,
        backfill_id: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let done = sqlx::query(
                "UPDATE backfills SET turn_until = $3 WHERE backfill_id = $1 \
                 AND status = 'running' AND (turn_until IS NULL OR turn_until <= $2)",
            )
            .bind(backfill_id)
            .bind(T::enc(now))
            .bind(T::enc(until))
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.turn"))?;
            Ok(done.rows_affected() > 0)
        })
    }

    /// Gives the backfill's turn back.
    pub async fn end_turn(&self, backfill_id: &str) -> Result<()> {
        with_pool!(self, |pool, T| {
            sqlx::query("UPDATE backfills SET turn_until = NULL WHERE backfill_id = $1")
                .bind(backfill_id)
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "backfills.end_turn"))?;
            Ok(())
        })
    }

    /// Marks tick `idx` `state` (with its run or the reason), if it is
    /// still pending.
    pub async fn mark_tick(
        &self,
        backfill_id: &str,
        idx: u32,
        state: &str,
        run_id: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let done = sqlx::query(
                "UPDATE backfill_ticks SET state = $3, run_id = $4, reason = $5 \
                 WHERE backfill_id = $1 AND idx = $2 AND state = 'pending'",
            )
            .bind(backfill_id)
            .bind(i64::from(idx))
            .bind(state)
            .bind(run_id)
            .bind(reason)
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.mark"))?;
            Ok(done.rows_affected() > 0)
        })
    }

    /// The newest run of the team's workflow for tick `at` that succeeded
    /// (every walk complete), from a schedule or a backfill.
    pub async fn complete_run_of_tick(
        &self,
        team_id: &str,
        workflow: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<String>> {
        with_pool!(self, |pool, T| {
            let run: Option<String> = sqlx::query_scalar(
                "SELECT run_id FROM runs WHERE team_id = $1 AND workflow = $2 \
                 AND trigger_scheduled_for = $3 AND status = 'succeeded' \
                 ORDER BY started_at DESC LIMIT 1",
            )
            .bind(team_id)
            .bind(workflow)
            .bind(T::enc(at))
            .fetch_optional(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.complete_run"))?;
            Ok(run)
        })
    }

    /// Ends a running backfill with `status`; false when it had ended.
    pub async fn finish_backfill(
        &self,
        backfill_id: &str,
        status: &str,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let done = sqlx::query(
                "UPDATE backfills SET status = $2, finished_at = $3 \
                 WHERE backfill_id = $1 AND status = 'running'",
            )
            .bind(backfill_id)
            .bind(status)
            .bind(T::enc(at))
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "backfills.finish"))?;
            Ok(done.rows_affected() > 0)
        })
    }

    /// Cancels the team's running backfill: its pending ticks become
    /// `cancelled` and it ends `cancelled`, in one transaction. The runs it
    /// started that are still queued or running, for the caller to cancel;
    /// `None` when it is not the team's or not running.
    pub async fn cancel_backfill(
        &self,
        team_id: &str,
        backfill_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Vec<String>>> {
        with_pool!(self, |pool, T| {
            let op = || Error::query(self.backend(), "backfills.cancel");
            let mut tx = pool.begin_write().await.map_err(op())?;
            let done = sqlx::query(
                "UPDATE backfills SET status = 'cancelled', finished_at = $3 \
                 WHERE team_id = $1 AND backfill_id = $2 AND status = 'running'",
            )
            .bind(team_id)
            .bind(backfill_id)
            .bind(T::enc(at))
            .execute(&mut *tx)
            .await
            .map_err(op())?;
            if done.rows_affected() == 0 {
                return Ok(None);
            }
            sqlx::query(
                "UPDATE backfill_ticks SET state = 'cancelled', \
                 reason = 'the backfill was cancelled before this tick started' \
                 WHERE backfill_id = $1 AND state = 'pending'",
            )
            .bind(backfill_id)
            .execute(&mut *tx)
            .await
            .map_err(op())?;
            let going: Vec<String> = sqlx::query_scalar(
                "SELECT t.run_id FROM backfill_ticks t JOIN runs r ON r.run_id = t.run_id \
                 WHERE t.backfill_id = $1 AND r.status IN ('queued', 'running') ORDER BY t.idx",
            )
            .bind(backfill_id)
            .fetch_all(&mut *tx)
            .await
            .map_err(op())?;
            tx.commit().await.map_err(op())?;
            Ok(Some(going))
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Backfills and their ticks.
    pub fn backfills(&self) -> Backfills {
        Backfills(self.clone())
    }
}
