//! Pausing schedules (issue 25 §3): by hand, with a reason, and by a
//! trigger's `pause_after` (the statuses of the runs it fired since it was
//! last resumed); resuming, with the ticks of the pause its `catch_up` does
//! not fire recorded `paused` in the same transaction.

use chrono::{DateTime, Utc};

use super::{Pause, Schedules};
use crate::db::{with_pool, BeginWrite, OnDb, Stamp};
use crate::error::{Error, Result};

impl Schedules {
    /// How many active schedules are paused (of every team).
    pub async fn paused_count(&self) -> Result<u64> {
        with_pool!(self, |pool, T| {
            let n: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM schedules WHERE active = 1 AND paused_at IS NOT NULL",
            )
            .fetch_one(pool)
            .await
            .map_err(Error::query(self.backend(), "schedules.paused"))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    /// Pauses the team's active schedule `schedule_id` with `pause`; false
    /// when it is not one, is retired, or is paused already (the first
    /// pause stands).
    pub async fn pause_schedule(
        &self,
        team_id: &str,
        schedule_id: &str,
        pause: &Pause,
    ) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let done = sqlx::query(
                "UPDATE schedules SET paused_at = $3, paused_reason = $4, paused_by = $5, \
                 updated_at = $3 WHERE team_id = $1 AND schedule_id = $2 AND active = 1 \
                 AND paused_at IS NULL",
            )
            .bind(team_id)
            .bind(schedule_id)
            .bind(T::enc(pause.at))
            .bind(&pause.reason)
            .bind(&pause.by)
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "schedules.pause"))?;
            Ok(done.rows_affected() > 0)
        })
    }

    /// Resumes the team's paused schedule `schedule_id`, recording
    /// `paused` (the ticks of the pause its `catch_up` does not fire) with
    /// `reason` and moving its mark past them, in one transaction; the
    /// next pass handles the ticks after. False when it was not paused.
    pub async fn resume_schedule(
        &self,
        team_id: &str,
        schedule_id: &str,
        paused: &[DateTime<Utc>],
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let mut tx = pool.begin_write().await.map_err(op("schedules.resume"))?;
            let done = sqlx::query(
                "UPDATE schedules SET paused_at = NULL, paused_reason = NULL, paused_by = NULL, \
                 resumed_at = $3, updated_at = $3 WHERE team_id = $1 AND schedule_id = $2 AND paused_at IS NOT NULL",
            )
            .bind(team_id)
            .bind(schedule_id)
            .bind(T::enc(now))
            .execute(&mut *tx)
            .await
            .map_err(op("schedules.resume"))?;
            if done.rows_affected() == 0 {
                return Ok(false);
            }
            for at in paused {
                sqlx::query(
                    "INSERT INTO schedule_ticks \
                     (schedule_id, scheduled_for, status, reason, run_id, handled_at, fired_at) \
                     VALUES ($1, $2, 'paused', $3, NULL, $4, NULL) ON CONFLICT DO NOTHING",
                )
                .bind(schedule_id)
                .bind(T::enc(*at))
                .bind(reason)
                .bind(T::enc(now))
                .execute(&mut *tx)
                .await
                .map_err(op("schedules.resume"))?;
            }
            if let Some(last) = paused.iter().max() {
                sqlx::query(
                    "UPDATE schedules SET last_tick_at = $2 WHERE schedule_id = $1 \
                     AND last_tick_at < $2",
                )
                .bind(schedule_id)
                .bind(T::enc(*last))
                .execute(&mut *tx)
                .await
                .map_err(op("schedules.mark"))?;
            }
            tx.commit().await.map_err(op("schedules.resume"))?;
            Ok(true)
        })
    }

    /// The statuses of the schedule's `limit` latest runs that ended and
    /// started after `since`, newest first (what `pause_after` counts).
    pub async fn ended_run_statuses(
        &self,
        schedule_id: &str,
        since: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<String>> {
        with_pool!(self, |pool, T| {
            sqlx::query_scalar::<_, String>(
                "SELECT r.status FROM schedule_ticks t JOIN runs r ON r.run_id = t.run_id \
                 WHERE t.schedule_id = $1 AND r.started_at > $2 \
                 AND r.status NOT IN ('queued', 'running') \
                 ORDER BY t.scheduled_for DESC LIMIT $3",
            )
            .bind(schedule_id)
            .bind(T::enc(since))
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await
            .map_err(Error::query(self.backend(), "schedules.ended_runs"))
        })
    }
}
