//! Cron schedules and their ticks. A schedule is one trigger of a team's
//! current workflow version; pushing a version brings its triggers'
//! schedules up to date (new ones start from now, removed ones stop), and
//! deleting the workflow stops them all. Every tick handled is a row keyed
//! by schedule and time, written in the transaction that creates its run:
//! a tick another scheduler (or this one before a restart) handled already
//! is refused, so each tick fires once.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::{col, handle, with_pool, BeginWrite, Db, OnDb, Stamp};
use crate::error::{Error, Result};
use crate::runs::submit::{inputs_text, insert_run};
use crate::runs::{NewRun, RunOwner};

mod pause;

handle! {
    /// Workflows' schedules and their ticks, timed by the database's clock
    /// (`Db::schedules`).
    Schedules
}

/// A trigger as a schedule: what a push declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleSpec {
    pub schedule_id: String,
    pub cron: String,
    pub timezone: String,
    pub catch_up: String,
    pub overlap: String,
    /// Consecutive failed (and partial) runs that pause it.
    pub pause_after_failed: Option<u32>,
    pub pause_after_partial: Option<u32>,
}

/// A stored schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScheduleRow {
    pub schedule_id: String,
    pub team_id: String,
    pub workflow: String,
    pub cron: String,
    pub timezone: String,
    pub catch_up: String,
    pub overlap: String,
    pub active: bool,
    pub last_tick_at: DateTime<Utc>,
    /// Set while the schedule is paused.
    pub paused: Option<Pause>,
    /// When it was last resumed (runs before do not count towards
    /// `pause_after`).
    pub resumed_at: Option<DateTime<Utc>>,
    pub pause_after_failed: Option<u32>,
    pub pause_after_partial: Option<u32>,
}

/// A schedule's pause: since when, why, and by whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pause {
    pub at: DateTime<Utc>,
    pub reason: String,
    /// `token:<name>` of whoever paused it.
    pub by: String,
}

/// How a tick was handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TickStatus {
    Fired,
    Skipped,
    Missed,
    Queued,
    /// Its time fell while the schedule was paused, and `catch_up` did not
    /// fire it on resume.
    Paused,
}

impl TickStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TickStatus::Fired => "fired",
            TickStatus::Skipped => "skipped",
            TickStatus::Missed => "missed",
            TickStatus::Queued => "queued",
            TickStatus::Paused => "paused",
        }
    }

    fn parse(s: &str) -> Result<TickStatus> {
        Ok(match s {
            "fired" => TickStatus::Fired,
            "skipped" => TickStatus::Skipped,
            "missed" => TickStatus::Missed,
            "queued" => TickStatus::Queued,
            "paused" => TickStatus::Paused,
            _ => {
                return Err(Error::BadValue {
                    what: "tick status",
                })
            }
        })
    }
}

/// A tick as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TickRow {
    pub scheduled_for: DateTime<Utc>,
    pub status: TickStatus,
    pub reason: Option<String>,
    pub run_id: Option<String>,
    pub handled_at: DateTime<Utc>,
    pub fired_at: Option<DateTime<Utc>>,
}

/// A tick to record; a fired one carries its run.
#[derive(Debug, Clone)]
pub struct TickWrite<'a> {
    pub schedule_id: &'a str,
    pub scheduled_for: DateTime<Utc>,
    pub status: TickStatus,
    pub reason: Option<String>,
    pub run: Option<NewRun<'a>>,
}

/// A run of a schedule, as `$.trigger.previous` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScheduleRun {
    pub run_id: String,
    pub status: String,
    pub started_at: DateTime<Utc>,
}

const SCHEDULE_COLUMNS: &str = "schedule_id, team_id, workflow, cron, timezone, catch_up, \
     overlap, active, last_tick_at, paused_at, paused_reason, paused_by, resumed_at, \
     pause_after_failed, pause_after_partial";

const TICK_COLUMNS: &str = "scheduled_for, status, reason, run_id, handled_at, fired_at";

/// The latest run of a schedule (of any status, or succeeded).
const LATEST_RUN: &str = "SELECT r.run_id, r.status, r.started_at FROM schedule_ticks t \
     JOIN runs r ON r.run_id = t.run_id WHERE t.schedule_id = $1 \
     ORDER BY t.scheduled_for DESC LIMIT 1";

const LATEST_COMPLETE_RUN: &str = "SELECT r.run_id, r.status, r.started_at FROM schedule_ticks t \
     JOIN runs r ON r.run_id = t.run_id WHERE t.schedule_id = $1 AND r.status = 'succeeded' \
     ORDER BY t.scheduled_for DESC LIMIT 1";

macro_rules! schedule_row {
    ($row:expr, $T:ident) => {
        ScheduleRow {
            schedule_id: col($row, "schedule_id")?,
            team_id: col($row, "team_id")?,
            workflow: col($row, "workflow")?,
            cron: col($row, "cron")?,
            timezone: col($row, "timezone")?,
            catch_up: col($row, "catch_up")?,
            overlap: col($row, "overlap")?,
            active: col::<_, i64>($row, "active")? != 0,
            last_tick_at: $T::dec(col($row, "last_tick_at")?)?,
            paused: match $T::dec_opt(col($row, "paused_at")?)? {
                Some(at) => Some(Pause {
                    at,
                    reason: col::<_, Option<String>>($row, "paused_reason")?.unwrap_or_default(),
                    by: col::<_, Option<String>>($row, "paused_by")?.unwrap_or_default(),
                }),
                None => None,
            },
            resumed_at: $T::dec_opt(col($row, "resumed_at")?)?,
            pause_after_failed: limit(col($row, "pause_after_failed")?),
            pause_after_partial: limit(col($row, "pause_after_partial")?),
        }
    };
}

/// A stored `pause_after` limit (a count that does not fit is none).
fn limit(stored: Option<i64>) -> Option<u32> {
    stored.and_then(|n| u32::try_from(n).ok())
}

impl Schedules {
    /// The database's clock: what schedules and ticks are timed by.
    pub async fn db_now(&self) -> Result<DateTime<Utc>> {
        match self.db() {
            Db::Postgres(pool) => sqlx::query_scalar::<_, DateTime<Utc>>("SELECT now()")
                .fetch_one(pool)
                .await
                .map_err(Error::query("postgres", "now")),
            Db::Sqlite(pool) => {
                let ms: i64 = sqlx::query_scalar(
                    "SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
                )
                .fetch_one(pool)
                .await
                .map_err(Error::query("sqlite", "now"))?;
                DateTime::from_timestamp_millis(ms).ok_or(Error::BadValue { what: "now" })
            }
        }
    }

    /// Makes the workflow's schedules those of `specs`: new ones (and ones
    /// coming back) start from `now`, others stop.
    pub async fn sync_schedules(
        &self,
        team_id: &str,
        workflow: &str,
        specs: &[ScheduleSpec],
        now: DateTime<Utc>,
    ) -> Result<()> {
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let mut tx = pool.begin_write().await.map_err(op("schedules.sync"))?;
            let rows = sqlx::query(
                "SELECT schedule_id, active FROM schedules WHERE team_id = $1 AND workflow = $2",
            )
            .bind(team_id)
            .bind(workflow)
            .fetch_all(&mut *tx)
            .await
            .map_err(op("schedules.sync"))?;
            let mut known: HashMap<String, bool> = HashMap::new();
            for row in &rows {
                known.insert(col(row, "schedule_id")?, col::<_, i64>(row, "active")? != 0);
            }
            for spec in specs {
                let sql = match known.remove(&spec.schedule_id) {
                    None => {
                        "INSERT INTO schedules (schedule_id, team_id, workflow, cron, timezone, \
                         catch_up, overlap, active, last_tick_at, created_at, updated_at, \
                         pause_after_failed, pause_after_partial) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $8, $8, $9, $10)"
                    }
                    Some(true) => {
                        "UPDATE schedules SET catch_up = $6, overlap = $7, updated_at = $8, \
                         pause_after_failed = $9, pause_after_partial = $10 \
                         WHERE schedule_id = $1 AND team_id = $2 AND workflow = $3 \
                         AND cron = $4 AND timezone = $5"
                    }
                    Some(false) => {
                        "UPDATE schedules SET catch_up = $6, overlap = $7, updated_at = $8, \
                         pause_after_failed = $9, pause_after_partial = $10, \
                         active = 1, last_tick_at = $8, paused_at = NULL, paused_reason = NULL, \
                         paused_by = NULL \
                         WHERE schedule_id = $1 AND team_id = $2 AND workflow = $3 \
                         AND cron = $4 AND timezone = $5"
                    }
                };
                sqlx::query(sql)
                    .bind(&spec.schedule_id)
                    .bind(team_id)
                    .bind(workflow)
                    .bind(&spec.cron)
                    .bind(&spec.timezone)
                    .bind(&spec.catch_up)
                    .bind(&spec.overlap)
                    .bind(T::enc(now))
                    .bind(spec.pause_after_failed.map(i64::from))
                    .bind(spec.pause_after_partial.map(i64::from))
                    .execute(&mut *tx)
                    .await
                    .map_err(op("schedules.sync"))?;
            }
            for (gone, _) in known.into_iter().filter(|(_, active)| *active) {
                sqlx::query(
                    "UPDATE schedules SET active = 0, updated_at = $2 WHERE schedule_id = $1",
                )
                .bind(&gone)
                .bind(T::enc(now))
                .execute(&mut *tx)
                .await
                .map_err(op("schedules.sync"))?;
            }
            tx.commit().await.map_err(op("schedules.sync"))?;
            Ok(())
        })
    }

    /// Every active schedule that is not paused (of every team): what a
    /// scheduler's pass handles.
    pub async fn active_schedules(&self) -> Result<Vec<ScheduleRow>> {
        let sql = format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE active = 1 AND paused_at IS NULL \
             ORDER BY schedule_id"
        );
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(&sql)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "schedules.active"))?;
            rows.iter().map(|row| Ok(schedule_row!(row, T))).collect()
        })
    }

    /// The team's schedules (active first), for one workflow or all.
    pub async fn team_schedules(
        &self,
        team_id: &str,
        workflow: Option<&str>,
    ) -> Result<Vec<ScheduleRow>> {
        let sql = format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE team_id = $1 \
             AND (CAST($2 AS TEXT) IS NULL OR workflow = $2) \
             ORDER BY active DESC, workflow, cron, timezone"
        );
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(&sql)
                .bind(team_id)
                .bind(workflow)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "schedules.team"))?;
            rows.iter().map(|row| Ok(schedule_row!(row, T))).collect()
        })
    }

    /// The team's schedule `schedule_id` (another team's reads as none).
    pub async fn team_schedule(
        &self,
        team_id: &str,
        schedule_id: &str,
    ) -> Result<Option<ScheduleRow>> {
        let sql = format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE team_id = $1 AND schedule_id = $2"
        );
        with_pool!(self, |pool, T| {
            let row = sqlx::query(&sql)
                .bind(team_id)
                .bind(schedule_id)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "schedules.one"))?;
            row.map(|row| Ok(schedule_row!(&row, T))).transpose()
        })
    }

    /// The `limit` latest ticks of a schedule, newest first.
    pub async fn recent_ticks(&self, schedule_id: &str, limit: u32) -> Result<Vec<TickRow>> {
        let sql = format!(
            "SELECT {TICK_COLUMNS} FROM schedule_ticks WHERE schedule_id = $1 \
             ORDER BY scheduled_for DESC LIMIT $2"
        );
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(&sql)
                .bind(schedule_id)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "schedules.ticks"))?;
            rows.iter()
                .map(|row| {
                    Ok(TickRow {
                        scheduled_for: T::dec(col(row, "scheduled_for")?)?,
                        status: TickStatus::parse(&col::<_, String>(row, "status")?)?,
                        reason: col(row, "reason")?,
                        run_id: col(row, "run_id")?,
                        handled_at: T::dec(col(row, "handled_at")?)?,
                        fired_at: T::dec_opt(col(row, "fired_at")?)?,
                    })
                })
                .collect()
        })
    }

    /// Records a tick (and creates its run, when it carries one) in one
    /// transaction, and moves the schedule's mark past it. False when the
    /// tick was handled already, or the schedule is no longer active:
    /// nothing is written.
    pub async fn record_tick(
        &self,
        tick: &TickWrite<'_>,
        owner: &RunOwner,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let inputs = tick
            .run
            .as_ref()
            .map(|r| inputs_text(r.inputs))
            .transpose()?;
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let mut tx = pool.begin_write().await.map_err(op("schedules.tick"))?;
            let fired_at = tick.run.as_ref().map(|_| T::enc(now));
            // Only while the schedule is active: a pass that read it before
            // a push retired it fires nothing after.
            let inserted = sqlx::query(
                "INSERT INTO schedule_ticks \
                 (schedule_id, scheduled_for, status, reason, run_id, handled_at, fired_at) \
                 SELECT $1, $2, $3, $4, $5, $6, $7 \
                 WHERE EXISTS (SELECT 1 FROM schedules WHERE schedule_id = $1 AND active = 1) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(tick.schedule_id)
            .bind(T::enc(tick.scheduled_for))
            .bind(tick.status.as_str())
            .bind(&tick.reason)
            .bind(tick.run.as_ref().map(|r| r.run_id))
            .bind(T::enc(now))
            .bind(fired_at)
            .execute(&mut *tx)
            .await
            .map_err(op("schedules.tick"))?;
            if inserted.rows_affected() == 0 {
                return Ok(false);
            }
            if let (Some(run), Some(inputs)) = (&tick.run, &inputs) {
                insert_run!(self, tx, T, run, inputs, owner, now)
                    .map_err(op("schedules.tick_run"))?;
            }
            sqlx::query(
                "UPDATE schedules SET last_tick_at = $2 WHERE schedule_id = $1 AND last_tick_at < $2",
            )
            .bind(tick.schedule_id)
            .bind(T::enc(tick.scheduled_for))
            .execute(&mut *tx)
            .await
            .map_err(op("schedules.mark"))?;
            tx.commit().await.map_err(op("schedules.tick"))?;
            Ok(true)
        })
    }

    /// Starts queued tick `scheduled_for` with `run`, in one transaction;
    /// false when it is no longer queued.
    pub async fn fire_queued(
        &self,
        schedule_id: &str,
        scheduled_for: DateTime<Utc>,
        run: &NewRun<'_>,
        owner: &RunOwner,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let inputs = inputs_text(run.inputs)?;
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let mut tx = pool
                .begin_write()
                .await
                .map_err(op("schedules.fire_queued"))?;
            let done = sqlx::query(
                "UPDATE schedule_ticks SET status = 'fired', run_id = $3, fired_at = $4 \
                 WHERE schedule_id = $1 AND scheduled_for = $2 AND status = 'queued'",
            )
            .bind(schedule_id)
            .bind(T::enc(scheduled_for))
            .bind(run.run_id)
            .bind(T::enc(now))
            .execute(&mut *tx)
            .await
            .map_err(op("schedules.fire_queued"))?;
            if done.rows_affected() == 0 {
                return Ok(false);
            }
            insert_run!(self, tx, T, run, &inputs, owner, now).map_err(op("schedules.tick_run"))?;
            tx.commit().await.map_err(op("schedules.fire_queued"))?;
            Ok(true)
        })
    }

    /// Marks queued tick `scheduled_for` skipped with `reason` (its run
    /// could not start).
    pub async fn skip_queued(
        &self,
        schedule_id: &str,
        scheduled_for: DateTime<Utc>,
        reason: &str,
    ) -> Result<()> {
        with_pool!(self, |pool, T| {
            sqlx::query(
                "UPDATE schedule_ticks SET status = 'skipped', reason = $3 \
                 WHERE schedule_id = $1 AND scheduled_for = $2 AND status = 'queued'",
            )
            .bind(schedule_id)
            .bind(T::enc(scheduled_for))
            .bind(reason)
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "schedules.skip_queued"))?;
        });
        Ok(())
    }

    /// Stops every schedule of the team's workflow (it was deleted).
    pub async fn stop_schedules(
        &self,
        team_id: &str,
        workflow: &str,
        now: DateTime<Utc>,
    ) -> Result<()> {
        with_pool!(self, |pool, T| {
            sqlx::query(
                "UPDATE schedules SET active = 0, updated_at = $3 \
                 WHERE team_id = $1 AND workflow = $2 AND active = 1",
            )
            .bind(team_id)
            .bind(workflow)
            .bind(T::enc(now))
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "schedules.stop"))?;
        });
        Ok(())
    }

    /// The oldest queued tick of a schedule.
    pub async fn oldest_queued_tick(&self, schedule_id: &str) -> Result<Option<DateTime<Utc>>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query(
                "SELECT scheduled_for FROM schedule_ticks WHERE schedule_id = $1 \
                 AND status = 'queued' ORDER BY scheduled_for LIMIT 1",
            )
            .bind(schedule_id)
            .fetch_optional(pool)
            .await
            .map_err(Error::query(self.backend(), "schedules.queued"))?;
            row.map(|r| T::dec(col(&r, "scheduled_for")?)).transpose()
        })
    }

    /// The schedule's latest run, and its latest run that succeeded.
    pub async fn schedule_runs(
        &self,
        schedule_id: &str,
    ) -> Result<(Option<ScheduleRun>, Option<ScheduleRun>)> {
        let latest = self.latest_schedule_run(schedule_id).await?;
        let complete = self
            .one_schedule_run(LATEST_COMPLETE_RUN, schedule_id)
            .await?;
        Ok((latest, complete))
    }

    /// The schedule's latest run (what overlap is judged by).
    pub async fn latest_schedule_run(&self, schedule_id: &str) -> Result<Option<ScheduleRun>> {
        self.one_schedule_run(LATEST_RUN, schedule_id).await
    }

    async fn one_schedule_run(&self, sql: &str, schedule_id: &str) -> Result<Option<ScheduleRun>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query(sql)
                .bind(schedule_id)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "schedules.runs"))?;
            row.map(|r| {
                Ok(ScheduleRun {
                    run_id: col(&r, "run_id")?,
                    status: col(&r, "status")?,
                    started_at: T::dec(col(&r, "started_at")?)?,
                })
            })
            .transpose()
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Workflows' schedules, their ticks, and the database's clock.
    pub fn schedules(&self) -> Schedules {
        Schedules(self.clone())
    }
}
