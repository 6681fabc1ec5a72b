//! Retention of step outputs: a finished run's step outputs are kept while
//! the run can still be looked at, resumed or re-run from a step, then
//! cleared by the sweeper (`[runs] keep_outputs_days`). The run's row and
//! its steps' rows (status, timing, verdict) stay; only the outputs go, so
//! `runs show` still shows the run, with `output: null` on those steps. A
//! cached payload an output pointed at goes with the sweep's next
//! collection of unreferenced payloads (`Cache::collect_payloads`).

use chrono::{DateTime, Utc};

use crate::db::{with_pool, OnDb, Stamp};
use crate::error::{Error, Result};
use crate::runs::Runs;

const PRUNE: &str = "UPDATE run_steps SET output = NULL, output_packed = NULL, output_bytes = NULL, \
     output_payload = NULL, output_loop = NULL \
     WHERE (output IS NOT NULL OR output_packed IS NOT NULL OR output_payload IS NOT NULL) AND run_id IN \
     (SELECT run_id FROM runs WHERE finished_at IS NOT NULL AND finished_at < $1)";

impl Runs {
    /// Clears the step outputs of runs that finished before `before`;
    /// returns how many steps lost theirs. Running runs are never touched.
    pub async fn prune_outputs(&self, before: DateTime<Utc>) -> Result<u64> {
        let done = with_pool!(self, |pool, T| {
            sqlx::query(PRUNE)
                .bind(T::enc(before))
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "runs.prune_outputs"))?
                .rows_affected()
        });
        Ok(done)
    }
}
