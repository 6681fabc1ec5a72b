//! The events of a run as its stream sent them (step status changes,
//! progress, the end), numbered from 1, so a finished run's stream can be
//! replayed and a client resumes after the last id it saw.

use serde::Serialize;

use crate::db::{col, to_i64, to_u64, with_pool, BeginWrite, OnDb};
use crate::error::{Error, Result};
use crate::runs::Runs;

/// One event of a run's stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunEvent {
    pub seq: u64,
    /// The SSE event name (`step`, `data-tool-loop-progress`, `end`…).
    pub event: String,
    /// JSON text.
    pub data: String,
}

impl Runs {
    /// Appends events of run `run_id` in one transaction; an event whose
    /// number is stored already is left as it is.
    pub async fn append_run_events(&self, run_id: &str, events: &[RunEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let op = || Error::query(self.backend(), "runs.events.append");
        with_pool!(self, |pool, T| {
            let mut tx = pool.begin_write().await.map_err(op())?;
            for e in events {
                sqlx::query(
                    "INSERT INTO run_events (run_id, seq, event, data) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (run_id, seq) DO NOTHING",
                )
                .bind(run_id)
                .bind(to_i64(e.seq, "event number")?)
                .bind(&e.event)
                .bind(&e.data)
                .execute(&mut *tx)
                .await
                .map_err(op())?;
            }
            tx.commit().await.map_err(op())?;
            Ok(())
        })
    }

    /// The events of run `run_id` numbered after `after`, in order.
    pub async fn run_events(&self, run_id: &str, after: u64) -> Result<Vec<RunEvent>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(
                "SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq > $2 \
                 ORDER BY seq",
            )
            .bind(run_id)
            .bind(to_i64(after, "event number")?)
            .fetch_all(pool)
            .await
            .map_err(Error::query(self.backend(), "runs.events"))?;
            rows.iter()
                .map(|row| {
                    Ok(RunEvent {
                        seq: to_u64(col(row, "seq")?, "event number")?,
                        event: col(row, "event")?,
                        data: col(row, "data")?,
                    })
                })
                .collect()
        })
    }
}
