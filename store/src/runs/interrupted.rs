//! Interrupted runs: a run still `running` whose process is gone. On this
//! host that is a pid no longer alive; on any host, a heartbeat older than
//! `stale_after`. Such a run becomes `interrupted` (its end set to its last
//! heartbeat), its running steps too; finished steps keep their records and
//! steps that never started stay pending. Runs held under a lease (server
//! runs) are not: when their process dies the lease expires and another
//! process takes them over and resumes them.

use std::time::Duration;

use chrono::{DateTime, Utc};

use dragnet_engine::run::RunStatus;

use super::{millis_between, Runs};
use crate::db::{col, with_pool, BeginWrite, OnDb, Stamp};
use crate::error::{Error, Result};

const RUNNING: &str = "SELECT run_id, host, pid, started_at, heartbeat_at FROM runs \
     WHERE status IN ('running', 'queued') AND lease_owner IS NULL";

/// Only if nothing moved since it was read: a heartbeat in between means
/// the run is alive after all.
const MARK_RUN: &str =
    "UPDATE runs SET status = 'interrupted', finished_at = $2, duration_ms = $3 \
     WHERE run_id = $1 AND status IN ('running', 'queued') AND heartbeat_at = $2";

const MARK_STEPS: &str =
    "UPDATE run_steps SET status = 'interrupted', reason = $2, finished_at = $3 \
     WHERE run_id = $1 AND status = 'running'";

/// A running run, as read.
struct Candidate {
    run_id: String,
    host: String,
    pid: i64,
    started_at: DateTime<Utc>,
    heartbeat_at: DateTime<Utc>,
}

impl Candidate {
    /// Why this run is interrupted, if it is.
    fn verdict(
        &self,
        this_host: &str,
        is_alive: &(dyn Fn(u32) -> bool + Sync),
        stale_after: Duration,
        now: DateTime<Utc>,
    ) -> Option<String> {
        if self.host == this_host {
            if let Ok(pid) = u32::try_from(self.pid) {
                if !is_alive(pid) {
                    return Some(format!(
                        "interrupted: its process ({pid} on {}) is gone",
                        self.host
                    ));
                }
            }
        }
        let silent = (now - self.heartbeat_at).to_std().ok()?;
        (silent > stale_after).then(|| {
            format!(
                "interrupted: no heartbeat from {} (pid {}) for {} s",
                self.host,
                self.pid,
                silent.as_secs()
            )
        })
    }
}

impl Runs {
    /// Marks `interrupted` every running run started on `this_host` by a
    /// process `is_alive` says is gone, and every running run (any host)
    /// whose heartbeat is older than `stale_after` at `now`; returns how
    /// many runs it marked.
    pub async fn mark_interrupted(
        &self,
        this_host: &str,
        is_alive: &(dyn Fn(u32) -> bool + Sync),
        stale_after: Duration,
        now: DateTime<Utc>,
    ) -> Result<u64> {
        let op = || Error::query(self.backend(), "runs.mark_interrupted");
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(RUNNING).fetch_all(pool).await.map_err(op())?;
            let mut marked = 0;
            for row in &rows {
                let run = Candidate {
                    run_id: col(row, "run_id")?,
                    host: col(row, "host")?,
                    pid: col(row, "pid")?,
                    started_at: T::dec(col(row, "started_at")?)?,
                    heartbeat_at: T::dec(col(row, "heartbeat_at")?)?,
                };
                let Some(reason) = run.verdict(this_host, is_alive, stale_after, now) else {
                    continue;
                };
                let ended = T::enc(run.heartbeat_at);
                let mut tx = pool.begin_write().await.map_err(op())?;
                let done = sqlx::query(MARK_RUN)
                    .bind(&run.run_id)
                    .bind(ended)
                    .bind(millis_between(run.started_at, run.heartbeat_at))
                    .execute(&mut *tx)
                    .await
                    .map_err(op())?
                    .rows_affected();
                if done == 0 {
                    continue;
                }
                sqlx::query(MARK_STEPS)
                    .bind(&run.run_id)
                    .bind(&reason)
                    .bind(T::enc(run.heartbeat_at))
                    .execute(&mut *tx)
                    .await
                    .map_err(op())?;
                tx.commit().await.map_err(op())?;
                tracing::info!(run_id = %run.run_id, status = RunStatus::Interrupted.as_str(), %reason, "run marked");
                marked += 1;
            }
            Ok(marked)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap_or_default()
    }

    fn run(host: &str, pid: i64, heartbeat: i64) -> Candidate {
        Candidate {
            run_id: "r".into(),
            host: host.into(),
            pid,
            started_at: at(0),
            heartbeat_at: at(heartbeat),
        }
    }

    #[test]
    fn a_dead_pid_counts_only_on_this_host() {
        let dead = |_| false;
        let stale = Duration::from_secs(60);
        assert!(run("here", 7, 100)
            .verdict("here", &dead, stale, at(101))
            .is_some());
        assert!(run("there", 7, 100)
            .verdict("here", &dead, stale, at(101))
            .is_none());
        let alive = |_| true;
        assert!(run("here", 7, 100)
            .verdict("here", &alive, stale, at(101))
            .is_none());
    }

    #[test]
    fn a_stale_heartbeat_counts_on_any_host() {
        let alive = |_| true;
        let stale = Duration::from_secs(60);
        assert!(run("there", 7, 100)
            .verdict("here", &alive, stale, at(160))
            .is_none());
        let why = run("there", 7, 100).verdict("here", &alive, stale, at(161));
        assert!(why.is_some_and(|w| w.contains("no heartbeat")));
        // A heartbeat from the future (clock skew) is not stale.
        assert!(run("there", 7, 500)
            .verdict("here", &alive, stale, at(161))
            .is_none());
        // A pid that does not fit is left to the heartbeat.
        let dead = |_| false;
        assert!(run("here", -1, 100)
            .verdict("here", &dead, stale, at(101))
            .is_none());
    }
}
