//! The page journal of leased runs (SPEC §9): `RunPages` keeps every page
//! a tool step of the run fetches, LZ4-compressed, under its request's key
//! in the step's scope, and reads them back for the attempt that takes the
//! run over, so a walk resumes at its first page not fetched. Only the
//! attempt holding the run keeps pages (the insert names the attempt and
//! its owner); a page that cannot be kept or read back is logged and
//! fetched again. A run's pages are deleted once it ends.

use dragnet_core::ports::journal::{KeptPage, PageJournal};
use dragnet_core::ports::BoxFuture;

use super::{Lease, Runs};
use crate::codec::{self, Codec};
use crate::db::{col, to_i64, to_u64, with_pool, OnDb};
use crate::error::{Error, Result};

const KEEP: &str = "INSERT INTO walk_pages \
     (run_id, scope, request_key, status, body_packed, body_bytes, attempt, next_link) \
     SELECT $1, $2, $3, $4, $5, $6, $7, $9 \
     WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = $1 AND attempt = $7 AND lease_owner = $8) \
     ON CONFLICT (run_id, scope, request_key) DO UPDATE SET \
     status = excluded.status, body_packed = excluded.body_packed, \
     body_bytes = excluded.body_bytes, attempt = excluded.attempt, \
     next_link = excluded.next_link";

const RECALL: &str = "SELECT status, body_packed, body_bytes, next_link FROM walk_pages \
     WHERE run_id = $1 AND scope = $2 AND request_key = $3";

/// The journal of one leased run, written under its lease.
#[derive(Debug, Clone)]
pub struct RunPages {
    runs: Runs,
    lease: Lease,
}

impl RunPages {
    pub fn new(runs: Runs, lease: Lease) -> RunPages {
        RunPages { runs, lease }
    }

    async fn kept(&self, scope: &str, key: &str) -> Result<Option<KeptPage>> {
        let op = || Error::query(self.runs.backend(), "walk_pages.recall");
        let row = with_pool!(&self.runs, |pool, T| {
            sqlx::query(RECALL)
                .bind(&self.lease.run_id)
                .bind(scope)
                .bind(key)
                .fetch_optional(pool)
                .await
                .map_err(op())?
                .map(|row| -> Result<(i64, Vec<u8>, i64, Option<String>)> {
                    Ok((
                        col(&row, "status")?,
                        col(&row, "body_packed")?,
                        col(&row, "body_bytes")?,
                        col(&row, "next_link")?,
                    ))
                })
                .transpose()?
        });
        let Some((status, packed, bytes, next_link)) = row else {
            return Ok(None);
        };
        let len = to_u64(bytes, "walk_pages.body_bytes")?;
        let body = codec::decompress(packed, len, Codec::Lz4, "a kept page").await?;
        Ok(Some(KeptPage {
            status: u16::try_from(status).unwrap_or(200),
            next_link,
            body: body.into(),
        }))
    }

    async fn put(&self, scope: &str, key: &str, page: &KeptPage) -> Result<()> {
        let op = || Error::query(self.runs.backend(), "walk_pages.keep");
        let bytes = to_i64(page.body.len() as u64, "page bytes")?;
        let packed = codec::compress(page.body.clone()).await?;
        with_pool!(&self.runs, |pool, T| {
            sqlx::query(KEEP)
                .bind(&self.lease.run_id)
                .bind(scope)
                .bind(key)
                .bind(i64::from(page.status))
                .bind(packed)
                .bind(bytes)
                .bind(self.lease.attempt)
                .bind(&self.lease.owner)
                .bind(page.next_link.as_deref())
                .execute(pool)
                .await
                .map_err(op())?;
        });
        Ok(())
    }
}

impl PageJournal for RunPages {
    fn recall<'a>(&'a self, scope: &'a str, key: &'a str) -> BoxFuture<'a, Option<KeptPage>> {
        Box::pin(async move {
            match self.kept(scope, key).await {
                Ok(page) => page,
                Err(error) => {
                    tracing::warn!(run_id = %self.lease.run_id, scope, %error, "a kept page could not be read back: it is fetched again");
                    None
                }
            }
        })
    }

    fn keep<'a>(&'a self, scope: &'a str, key: &'a str, page: &'a KeptPage) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(error) = self.put(scope, key, page).await {
                tracing::warn!(run_id = %self.lease.run_id, scope, %error, "a fetched page could not be kept");
            }
        })
    }
}

impl Runs {
    /// Deletes the pages kept for run `run_id` (it ended); how many.
    pub async fn forget_pages(&self, run_id: &str) -> Result<u64> {
        let op = || Error::query(self.backend(), "walk_pages.forget");
        let deleted = with_pool!(self, |pool, T| {
            sqlx::query("DELETE FROM walk_pages WHERE run_id = $1")
                .bind(run_id)
                .execute(pool)
                .await
                .map_err(op())?
                .rows_affected()
        });
        Ok(deleted)
    }

    /// How many pages are kept for run `run_id`, in every scope or one.
    pub async fn kept_pages(&self, run_id: &str, scope: Option<&str>) -> Result<u64> {
        let op = || Error::query(self.backend(), "walk_pages.count");
        let n: i64 = with_pool!(self, |pool, T| {
            sqlx::query_scalar(
                "SELECT COUNT(*) FROM walk_pages WHERE run_id = $1 AND ($2 IS NULL OR scope = $2)",
            )
            .bind(run_id)
            .bind(scope)
            .fetch_one(pool)
            .await
            .map_err(op())?
        });
        to_u64(n, "walk_pages count")
    }
}
