//! Leases on runs (SPEC §9): a process executes a server run only while it
//! holds its lease. The process that submits a run claims it in the
//! statement that writes it (`NewRun::claim`, attempt 1); later claims —
//! takeovers — increment the run's `attempt`, which is the
//! fencing token every later write of that process carries; a lease lasts
//! until an expiry set from the database clock and is renewed by
//! heartbeats; a run whose lease expired can be claimed by anyone (a
//! takeover, with the next attempt). Claims are short statements, never a
//! transaction held while a step runs: on PostgreSQL the next claimable
//! run is picked with `FOR UPDATE SKIP LOCKED`, so concurrent claimers
//! never wait on each other nor take the same run; SQLite serialises its
//! writers, which gives the same.
//!
//! Only server runs (those with a team) are claimable; runs of `dragnet
//! run` have no lease and are never taken over.

use chrono::{DateTime, Utc};

use crate::db::{col, handle, with_pool, OnDb, PgTime, SqliteTime, Stamp};
use crate::error::{Error, Result};

handle! {
    /// Runs' leases and the wake-ups of claimers (`Db::leases`).
    Leases
}

/// The database's clock in SQLite, in milliseconds since the epoch.
const SQLITE_NOW: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// A lease held on a run: which attempt this process runs, until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub run_id: String,
    /// The fencing token: every write of this attempt is conditioned on it.
    pub attempt: i64,
    pub owner: String,
}

/// A lease renewed: until when, and whether the run is to be cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renewal {
    pub expires_at: DateTime<Utc>,
    pub cancel_requested: bool,
}

/// A lease's length, checked: at least one second, at most an hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseLength(std::time::Duration);

impl LeaseLength {
    /// Thirty seconds.
    pub const DEFAULT: LeaseLength = LeaseLength(std::time::Duration::from_secs(30));

    pub fn new(length: std::time::Duration) -> Result<LeaseLength> {
        const MIN: u64 = 1_000;
        const MAX: u64 = 3_600_000;
        let ms = u64::try_from(length.as_millis()).unwrap_or(u64::MAX);
        match ms {
            MIN..=MAX => Ok(LeaseLength(length)),
            value => Err(Error::OutOfRange {
                what: "a lease",
                value,
                unit: "ms",
                min: MIN,
                max: MAX,
            }),
        }
    }

    pub fn get(self) -> std::time::Duration {
        self.0
    }

    fn millis(self) -> i64 {
        i64::try_from(self.0.as_millis()).unwrap_or(i64::MAX)
    }
}

/// What a claim statement returns.
fn lease_of<R>(row: &R, owner: &str) -> Result<Lease>
where
    R: sqlx::Row,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    &'static str: sqlx::ColumnIndex<R>,
{
    Ok(Lease {
        run_id: col(row, "run_id")?,
        attempt: col(row, "attempt")?,
        owner: owner.to_string(),
    })
}

/// What the lease statements say differently on each backend.
trait LeaseSql: Stamp {
    /// The database's clock, as the backend stores a timestamp.
    const NOW: &'static str;
    /// Turns a number of milliseconds into what `NOW` adds.
    const MS: &'static str;
    /// Locks the picked row and skips rows other claimers locked.
    const SKIP_LOCKED: &'static str;
}

impl LeaseSql for PgTime {
    const NOW: &'static str = "now()";
    const MS: &'static str = " * interval '1 millisecond'";
    const SKIP_LOCKED: &'static str = "FOR UPDATE SKIP LOCKED";
}

/// SQLite serialises its writers: no row is ever locked by another claimer.
impl LeaseSql for SqliteTime {
    const NOW: &'static str = SQLITE_NOW;
    const MS: &'static str = "";
    const SKIP_LOCKED: &'static str = "";
}

/// The runs nobody holds: queued and unclaimed, or whose lease expired.
/// Its first two conditions are the predicate of the partial index
/// `runs_claim_order`, written the same way so that both backends' planners
/// see the index applies (SQLite needs each of its terms in the query).
fn unheld(now: &str) -> String {
    format!(
        "status IN ('queued', 'running') AND team_id IS NOT NULL \
         AND ((status = 'queued' AND lease_owner IS NULL) \
         OR lease_expires_at < {now})"
    )
}

/// The oldest run nobody holds, locked for this claimer (on PostgreSQL).
fn next_claimable<T: LeaseSql>() -> String {
    format!(
        "SELECT run_id FROM runs WHERE {unheld} ORDER BY started_at, run_id LIMIT 1 {skip}",
        unheld = unheld(T::NOW),
        skip = T::SKIP_LOCKED,
    )
}

impl Leases {
    /// Claims the oldest claimable run: queued and unclaimed, or holding a
    /// lease that expired (its process died or stalled: a takeover).
    pub async fn claim_next(&self, owner: &str, length: LeaseLength) -> Result<Option<Lease>> {
        with_pool!(self, |pool, T| {
            let sql = format!(
                "UPDATE runs SET attempt = attempt + 1, lease_owner = $1, \
                 lease_expires_at = {now} + $2{ms} \
                 WHERE run_id = ({next}) \
                 RETURNING run_id, attempt",
                now = T::NOW,
                ms = T::MS,
                next = next_claimable::<T>(),
            );
            let row = sqlx::query(&sql)
                .bind(owner)
                .bind(length.millis())
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.claim_next"))?;
            row.map(|r| lease_of(&r, owner)).transpose()
        })
    }

    /// Renews `lease` for `length` from now (the database's now). `None`
    /// when the lease is no longer this attempt's: another process took
    /// the run over, and this one must stop and write nothing more. The
    /// renewal says too whether someone asked for the run to be cancelled.
    pub async fn renew_lease(&self, lease: &Lease, length: LeaseLength) -> Result<Option<Renewal>> {
        with_pool!(self, |pool, T| {
            let sql = format!(
                "UPDATE runs SET lease_expires_at = {now} + $4{ms} \
                 WHERE run_id = $1 AND attempt = $2 AND lease_owner = $3 \
                 RETURNING lease_expires_at, cancel_requested",
                now = T::NOW,
                ms = T::MS,
            );
            let row: Option<(<T as Stamp>::Raw, bool)> = sqlx::query_as(&sql)
                .bind(&lease.run_id)
                .bind(lease.attempt)
                .bind(&lease.owner)
                .bind(length.millis())
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.renew_lease"))?;
            row.map(|(at, cancel_requested)| {
                Ok(Renewal {
                    expires_at: T::dec(at)?,
                    cancel_requested,
                })
            })
            .transpose()
        })
    }

    /// Asks for run `run_id` to be cancelled wherever it runs: the process
    /// holding its lease reads the request at its next renewal. False when
    /// the run has ended (or does not exist).
    pub async fn request_cancel(&self, run_id: &str) -> Result<bool> {
        const SQL: &str = "UPDATE runs SET cancel_requested = TRUE \
             WHERE run_id = $1 AND status IN ('queued', 'running')";
        let done = with_pool!(self, |pool, T| {
            sqlx::query(SQL)
                .bind(run_id)
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.request_cancel"))?
                .rows_affected()
        });
        Ok(done > 0)
    }

    /// Claims run `run_id` when nobody holds it (queued and unclaimed, or
    /// its lease expired), whatever this process's room: to end it here,
    /// as a cancel request does with a run nobody runs.
    pub async fn claim_unheld(
        &self,
        run_id: &str,
        owner: &str,
        length: LeaseLength,
    ) -> Result<Option<Lease>> {
        with_pool!(self, |pool, T| {
            let sql = format!(
                "UPDATE runs SET attempt = attempt + 1, lease_owner = $2, \
                 lease_expires_at = {now} + $3{ms} \
                 WHERE run_id = $1 AND {unheld} \
                 RETURNING run_id, attempt",
                now = T::NOW,
                ms = T::MS,
                unheld = unheld(T::NOW),
            );
            let row = sqlx::query(&sql)
                .bind(run_id)
                .bind(owner)
                .bind(length.millis())
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.claim_unheld"))?;
            row.map(|r| lease_of(&r, owner)).transpose()
        })
    }

    /// Hands `lease` back: it expires now, so any process may claim the
    /// run at once (and resume it); the attempt is kept. Call it once the
    /// run's writer has stopped (its heartbeats would renew the lease
    /// again). False when the lease was no longer this attempt's.
    pub async fn release_lease(&self, lease: &Lease) -> Result<bool> {
        self.expire_lease(lease, "", "", "runs.release_lease").await
    }

    /// Hands run `lease.run_id` back at shutdown: `queued` again, its
    /// lease expired now so any process claims it at once and resumes it
    /// (its finished steps and kept pages stay); the attempt is kept.
    /// Call it once the run's writer has stopped. False when the lease was
    /// no longer this attempt's, or the run had ended.
    pub async fn hand_back(&self, lease: &Lease) -> Result<bool> {
        self.expire_lease(
            lease,
            "status = 'queued', ",
            "AND status IN ('queued', 'running')",
            "runs.hand_back",
        )
        .await
    }

    /// Makes `lease` expire a millisecond ago, setting `set` too, when it is
    /// still this attempt's and `and` holds.
    async fn expire_lease(
        &self,
        lease: &Lease,
        set: &str,
        and: &str,
        op: &'static str,
    ) -> Result<bool> {
        let done = with_pool!(self, |pool, T| {
            let sql = format!(
                "UPDATE runs SET {set}lease_expires_at = {now} - 1{ms} \
                 WHERE run_id = $1 AND attempt = $2 AND lease_owner = $3 {and}",
                now = T::NOW,
                ms = T::MS,
            );
            sqlx::query(&sql)
                .bind(&lease.run_id)
                .bind(lease.attempt)
                .bind(&lease.owner)
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), op))?
                .rows_affected()
        });
        Ok(done > 0)
    }

    /// Whether `lease` is still the run's current one (its attempt and
    /// owner), whatever its expiry: the check a fenced write makes.
    pub async fn holds_lease(&self, lease: &Lease) -> Result<bool> {
        const SQL: &str =
            "SELECT COUNT(*) FROM runs WHERE run_id = $1 AND attempt = $2 AND lease_owner = $3";
        let n: i64 = with_pool!(self, |pool, T| {
            sqlx::query_scalar(SQL)
                .bind(&lease.run_id)
                .bind(lease.attempt)
                .bind(&lease.owner)
                .fetch_one(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.holds_lease"))?
        });
        Ok(n > 0)
    }
}

#[cfg(feature = "testing")]
impl Leases {
    /// How the backend plans to pick the next run to claim with the
    /// statistics it has: the lines of `EXPLAIN` (PostgreSQL) or `EXPLAIN
    /// QUERY PLAN` (SQLite) of the claim's inner query.
    pub async fn claim_plan(&self) -> Result<Vec<String>> {
        let op = || Error::query(self.backend(), "testing.claim_plan");
        with_pool!(self, |pool, T| {
            let (explain, column) = match self.backend() {
                "postgres" => ("EXPLAIN", 0),
                _ => ("EXPLAIN QUERY PLAN", 3),
            };
            let sql = format!("{explain} {}", next_claimable::<T>());
            let rows = sqlx::query(&sql).fetch_all(pool).await.map_err(op())?;
            rows.iter()
                .map(|row| sqlx::Row::try_get::<String, _>(row, column).map_err(op()))
                .collect()
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Runs' leases: claiming, renewing, handing back, and the wake-ups of
    /// claimers.
    pub fn leases(&self) -> Leases {
        Leases(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_lease_is_between_a_second_and_an_hour() {
        assert!(LeaseLength::new(Duration::from_millis(999)).is_err());
        assert!(LeaseLength::new(Duration::from_secs(1)).is_ok());
        assert!(LeaseLength::new(Duration::from_secs(3600)).is_ok());
        assert!(LeaseLength::new(Duration::from_secs(3601)).is_err());
        let refused = LeaseLength::new(Duration::from_millis(999)).err();
        assert_eq!(
            refused.map(|e| e.to_string()),
            Some("a lease of 999 ms: give from 1000 to 3600000".to_string())
        );
        assert!(LeaseLength::new(Duration::MAX).is_err());
    }
}
