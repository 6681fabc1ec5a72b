//! Stored results of agent calls behind dragnet-core's `ResultStore`
//! port (with the loop layer's `Payload`): the call's text and its payload (in the cache's layout), both
//! LZ4-compressed, under the result id with the organisation and thread
//! that may read it. A row of another scope reads as unknown; a row of the
//! asker's scope past its time reads as expired until the sweeper deletes
//! it, an hour after it expired.

use chrono::{DateTime, Duration, Utc};
use dragnet_core::Payload;
use dragnet_core::{Form, ResultId, ResultScope, ResultStore, StoreFuture};
use dragnet_walk::cache::stored;

use crate::codec::{self, Codec};
use crate::db::{col, handle, to_i64, to_u64, with_pool, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// Stored results of agent calls (`Db::results`): dragnet-core's
    /// `ResultStore`.
    Results
}

/// A stored result as the gateway keeps it: its text and the payload.
type StoredResult = dragnet_core::StoredResult<Payload>;
/// What a lookup of a stored result found.
type Lookup = dragnet_core::Lookup<Payload>;

/// How long an expired result still answers "expired" before it is swept.
pub const EXPIRED_KEPT: Duration = Duration::hours(1);

const PUT: &str = "INSERT INTO stored_results (result_id, org, thread, text_packed, text_bytes, \
     items_packed, items_bytes, created_at, expires_at, media_type, encoding) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

const GET: &str = "SELECT org, thread, text_packed, text_bytes, items_packed, items_bytes, \
     expires_at, media_type, encoding FROM stored_results WHERE result_id = $1";

impl Results {
    /// Keeps `result` under `id` for `scope` until `expires_at`.
    pub async fn put_result(
        &self,
        id: &ResultId,
        scope: &ResultScope,
        result: &StoredResult,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<()> {
        let text_bytes = to_i64(result.text.len() as u64, "stored result text")?;
        let text = codec::compress(result.text.clone().into_bytes()).await?;
        let items = stored::encode(&result.payload);
        let items_bytes = to_i64(items.len() as u64, "stored result items")?;
        let items = codec::compress(items).await?;
        with_pool!(self, |pool, T| {
            sqlx::query(PUT)
                .bind(id.as_str())
                .bind(&scope.org)
                .bind(&scope.thread)
                .bind(&text)
                .bind(text_bytes)
                .bind(&items)
                .bind(items_bytes)
                .bind(T::enc(now))
                .bind(T::enc(expires_at))
                .bind(result.form.media_type())
                .bind(result.form.encoding())
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "results.put"))?;
        });
        Ok(())
    }

    /// Result `id` as `scope` may see it at `now`.
    pub async fn get_result(
        &self,
        id: &ResultId,
        scope: &ResultScope,
        now: DateTime<Utc>,
    ) -> Result<Lookup> {
        let row = with_pool!(self, |pool, T| {
            let Some(row) = sqlx::query(GET)
                .bind(id.as_str())
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "results.get"))?
            else {
                return Ok(Lookup::Unknown);
            };
            let org: String = col(&row, "org")?;
            let thread: String = col(&row, "thread")?;
            if org != scope.org || thread != scope.thread {
                return Ok(Lookup::Unknown);
            }
            let expires_at = T::dec(col(&row, "expires_at")?)?;
            if expires_at <= now {
                return Ok(Lookup::Expired {
                    expired_at: expires_at,
                });
            }
            let form = Form::stored(
                col(&row, "media_type")?,
                col::<_, Option<String>>(&row, "encoding")?.as_deref(),
            )
            .ok_or(Error::BadValue {
                what: "stored result encoding",
            })?;
            (
                form,
                col::<_, Vec<u8>>(&row, "text_packed")?,
                to_u64(col(&row, "text_bytes")?, "stored result text")?,
                col::<_, Vec<u8>>(&row, "items_packed")?,
                to_u64(col(&row, "items_bytes")?, "stored result items")?,
            )
        });
        let (form, text, text_len, items, items_len) = row;
        let what = "a stored result";
        let text = codec::decompress(text, text_len, Codec::Lz4, what).await?;
        let text = String::from_utf8(text).map_err(|_| Error::BadValue {
            what: "stored result text",
        })?;
        let items = codec::decompress(items, items_len, Codec::Lz4, what).await?;
        let payload = stored::decode(items).ok_or(Error::CorruptEntry {
            tool: what.to_string(),
            reason: "its items do not read back",
        })?;
        Ok(Lookup::Found(StoredResult {
            text,
            form,
            payload,
        }))
    }

    /// Deletes results expired more than `EXPIRED_KEPT` before `now`.
    pub async fn sweep_results(&self, now: DateTime<Utc>) -> Result<u64> {
        let before = now - EXPIRED_KEPT;
        with_pool!(self, |pool, T| {
            let done = sqlx::query("DELETE FROM stored_results WHERE expires_at < $1")
                .bind(T::enc(before))
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "results.sweep"))?;
            Ok(done.rows_affected())
        })
    }
}

impl ResultStore<Payload> for Results {
    fn put<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        result: &'a StoredResult,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.put_result(id, scope, result, now, expires_at)
                .await
                .map_err(dragnet_core::ports::Error::from)
        })
    }

    fn get<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Lookup> {
        Box::pin(async move {
            self.get_result(id, scope, now)
                .await
                .map_err(dragnet_core::ports::Error::from)
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Stored results of agent calls (dragnet-core's `ResultStore`).
    pub fn results(&self) -> Results {
        Results(self.clone())
    }
}
