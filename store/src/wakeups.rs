//! Wake-ups for claimers (SPEC §9). On PostgreSQL a process that leaves a
//! run for anyone to claim (queued without a claim, or handed back)
//! notifies the channel `dragnet_runs.<schema>`, and every claimer
//! listening on it makes a pass at once instead of at its next poll. The
//! poll stays as the fallback: a notification lost with a connection costs
//! one poll period, never a run. SQLite has one process: nothing to wake.

use sqlx::postgres::PgListener;

use crate::db::{Db, OnDb};
use crate::error::{Error, Result};
use crate::runs::Leases;

const CHANNEL_PREFIX: &str = "dragnet_runs.";

/// Notifications that a run can be claimed.
pub struct Wakeups(PgListener);

impl Wakeups {
    /// The next notification. Errors (the connection dropped) come back
    /// after the listener reconnected; callers poll meanwhile.
    pub async fn next(&mut self) -> Result<()> {
        self.0
            .recv()
            .await
            .map(|_| ())
            .map_err(Error::query("postgres", "runs.wakeups"))
    }
}

impl Leases {
    /// Says that a run can be claimed (no-op on SQLite).
    pub async fn notify_claimable(&self) -> Result<()> {
        if let Db::Postgres(pool) = self.db() {
            sqlx::query(&format!(
                "SELECT pg_notify('{CHANNEL_PREFIX}' || current_schema(), '')"
            ))
            .execute(pool)
            .await
            .map_err(Error::query("postgres", "runs.notify"))?;
        }
        Ok(())
    }

    /// Listens for runs that can be claimed; `None` on SQLite.
    pub async fn wakeups(&self) -> Result<Option<Wakeups>> {
        let Db::Postgres(pool) = self.db() else {
            return Ok(None);
        };
        let op = || Error::query("postgres", "runs.listen");
        let schema: String = sqlx::query_scalar("SELECT current_schema()")
            .fetch_one(pool)
            .await
            .map_err(op())?;
        let mut listener = PgListener::connect_with(pool).await.map_err(op())?;
        listener
            .listen(&format!("{CHANNEL_PREFIX}{schema}"))
            .await
            .map_err(op())?;
        Ok(Some(Wakeups(listener)))
    }
}
