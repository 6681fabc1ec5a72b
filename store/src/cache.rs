//! The cache of complete walks, `Cache` (SPEC §5): the `CacheStore` seam of
//! dragnet-core. Rows are keyed by `(scope, key)`, so a lookup can only
//! ever see its own scope's entries; a put is one upsert statement, so two
//! writers racing on the same key leave one whole entry (the last one);
//! entries whose `expires_at` is at or before `now` are misses and are
//! deleted by `sweep`. Payloads are compressed at rest, with the codec named
//! in the row (`lz4` now; `zlib` in rows written before it, still read).
//!
//! A payload is written to a row of its own (`cache_payloads`), which the
//! entry names; entries written before that hold theirs inline, and are
//! still read. A hit says which payload row it read
//! ([`CacheEntry::payload_row`]), so a run's step served from it can point
//! at that row instead of storing the rows again (`runs::write`). A
//! payload row is deleted once neither an entry nor a step output names it:
//! after a put replaces its entry, after a sweep or purge that deleted
//! entries, and after the retention cleared step outputs
//! ([`Cache::collect_payloads`]); the foreign keys on both make a step's
//! pointer and that deletion exclusive, so a step output never names a
//! payload that is gone.

use chrono::{DateTime, Utc};
use dragnet_core::ports::cache::{CacheEntry, CacheListing, CacheStore, PayloadRow, StoreError};
use dragnet_core::ports::BoxFuture;

use crate::codec::{self, Codec};
use crate::db::{col, handle, to_i64, to_u64, with_pool, BeginWrite, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// The cache of complete walks (`Db::cache`): dragnet-core's `CacheStore`.
    Cache
}

const GET: &str = "SELECT e.tool, COALESCE(p.codec, e.codec) AS codec, \
     COALESCE(p.payload, e.payload) AS payload, COALESCE(p.payload_bytes, e.payload_bytes) AS payload_bytes, \
     e.items, e.cached_at, e.expires_at, e.payload_id \
     FROM cache_entries e LEFT JOIN cache_payloads p ON p.id = e.payload_id \
     WHERE e.scope = $1 AND e.key = $2 AND e.expires_at > $3";

/// An entry; its payload is inline (`$4`) or in the row `$11` names.
const PUT: &str = "INSERT INTO cache_entries \
     (scope, key, tool, payload, payload_bytes, items, stored_bytes, cached_at, expires_at, codec, payload_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
     ON CONFLICT (scope, key) DO UPDATE SET \
     tool = excluded.tool, codec = excluded.codec, payload = excluded.payload, payload_bytes = excluded.payload_bytes, \
     items = excluded.items, stored_bytes = excluded.stored_bytes, \
     cached_at = excluded.cached_at, expires_at = excluded.expires_at, payload_id = excluded.payload_id";

const PUT_PAYLOAD: &str =
    "INSERT INTO cache_payloads (codec, payload, payload_bytes) VALUES ($1, $2, $3) RETURNING id";

const PAYLOAD_OF: &str = "SELECT payload_id FROM cache_entries WHERE scope = $1 AND key = $2";

/// Payload rows nothing names any more (`$1` the one row, or every row).
const COLLECT: &str = "DELETE FROM cache_payloads WHERE ($1 IS NULL OR id = $1) \
     AND NOT EXISTS (SELECT 1 FROM cache_entries e WHERE e.payload_id = cache_payloads.id) \
     AND NOT EXISTS (SELECT 1 FROM run_steps s WHERE s.output_payload = cache_payloads.id)";

const LIST: &str = "SELECT scope, key, tool, items, stored_bytes, cached_at, expires_at \
     FROM cache_entries ORDER BY tool, scope, key";

/// A row of `GET`, before its payload is decompressed.
struct Found {
    tool: String,
    codec: String,
    payload: Vec<u8>,
    payload_bytes: i64,
    items: i64,
    cached_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    payload_id: Option<i64>,
}

impl Cache {
    /// The live entry for `(scope, key)` at `now`; expired ones are misses.
    pub async fn cache_get(
        &self,
        scope: &str,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<CacheEntry>> {
        let found = with_pool!(self, |pool, T| {
            let row = sqlx::query(GET)
                .bind(scope)
                .bind(key)
                .bind(T::enc(now))
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "cache.get"))?;
            match row {
                None => None,
                Some(row) => Some(Found {
                    tool: col(&row, "tool")?,
                    codec: col(&row, "codec")?,
                    payload: col(&row, "payload")?,
                    payload_bytes: col(&row, "payload_bytes")?,
                    items: col(&row, "items")?,
                    cached_at: T::dec(col(&row, "cached_at")?)?,
                    expires_at: T::dec(col(&row, "expires_at")?)?,
                    payload_id: col(&row, "payload_id")?,
                }),
            }
        });
        let Some(found) = found else {
            return Ok(None);
        };
        let len = to_u64(found.payload_bytes, "payload length")?;
        let Some(codec) = Codec::parse(&found.codec) else {
            return Err(Error::CorruptEntry {
                tool: found.tool,
                reason: "its codec is unknown",
            });
        };
        let payload = codec::decompress(found.payload, len, codec, &found.tool).await?;
        Ok(Some(CacheEntry {
            scope: scope.to_string(),
            key: key.to_string(),
            tool: found.tool,
            payload,
            items: to_u64(found.items, "item count")?,
            cached_at: found.cached_at,
            expires_at: found.expires_at,
            payload_row: found.payload_id.map(PayloadRow),
        }))
    }

    /// Stores or replaces the entry for `(entry.scope, entry.key)`, its
    /// payload in a row of its own; the payload it replaces goes unless a
    /// step output names it.
    pub async fn cache_put(&self, entry: &CacheEntry) -> Result<()> {
        let stored = codec::compress(entry.payload.clone()).await?;
        let row = Row::of(entry, &stored)?;
        let op = || Error::query(self.backend(), "cache.put");
        let replaced: Option<i64> = with_pool!(self, |pool, T| {
            let mut tx = pool.begin_write().await.map_err(op())?;
            let id: i64 = sqlx::query_scalar(PUT_PAYLOAD)
                .bind(Codec::Lz4.as_str())
                .bind(&stored)
                .bind(row.payload_bytes)
                .fetch_one(&mut *tx)
                .await
                .map_err(op())?;
            let replaced: Option<Option<i64>> = sqlx::query_scalar(PAYLOAD_OF)
                .bind(&entry.scope)
                .bind(&entry.key)
                .fetch_optional(&mut *tx)
                .await
                .map_err(op())?;
            bind_entry(
                sqlx::query(PUT),
                entry,
                &row,
                &[],
                Codec::Lz4,
                Some(id),
                T::enc,
            )
            .execute(&mut *tx)
            .await
            .map_err(op())?;
            tx.commit().await.map_err(op())?;
            replaced.flatten()
        });
        if let Some(old) = replaced {
            // A step output that names it keeps it; a step writing its
            // pointer at this moment may also make this fail. Either way a
            // later collection takes it once nothing names it.
            if let Err(error) = self.collect(Some(old)).await {
                tracing::debug!(%error, "a replaced cache payload is kept for now");
            }
        }
        Ok(())
    }

    /// Stores `entry` inline and zlib-compressed, as builds before LZ4 and
    /// payload rows did (tests of old rows).
    #[cfg(feature = "testing")]
    pub async fn cache_put_zlib(&self, entry: &CacheEntry) -> Result<()> {
        let stored = codec::compress_zlib(&entry.payload)?;
        let row = Row::of(entry, &stored)?;
        with_pool!(self, |pool, T| {
            bind_entry(
                sqlx::query(PUT),
                entry,
                &row,
                &stored,
                Codec::Zlib,
                None,
                T::enc,
            )
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "cache.put"))?;
        });
        Ok(())
    }

    /// Deletes the payload rows nothing names (only row `one`, when
    /// given); returns how many.
    pub async fn collect_payloads(&self) -> Result<u64> {
        self.collect(None).await
    }

    /// After `deleted` entries went: their payloads too, unless a step
    /// output names them (a failure is logged; the next sweep tries again).
    async fn collect_after_delete(&self, deleted: u64) {
        if deleted == 0 {
            return;
        }
        if let Err(error) = self.collect(None).await {
            tracing::warn!(%error, "collecting unused cache payloads failed");
        }
    }

    async fn collect(&self, one: Option<i64>) -> Result<u64> {
        let done = with_pool!(self, |pool, T| {
            sqlx::query(COLLECT)
                .bind(one)
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "cache.collect_payloads"))?
                .rows_affected()
        });
        Ok(done)
    }

    /// Every entry, expired or not, by tool, scope and key.
    pub async fn cache_list(&self) -> Result<Vec<CacheListing>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(LIST)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "cache.list"))?;
            rows.iter()
                .map(|row| {
                    Ok(CacheListing {
                        scope: col(row, "scope")?,
                        key: col(row, "key")?,
                        tool: col(row, "tool")?,
                        items: to_u64(col(row, "items")?, "item count")?,
                        stored_bytes: to_u64(col(row, "stored_bytes")?, "stored length")?,
                        cached_at: T::dec(col(row, "cached_at")?)?,
                        expires_at: T::dec(col(row, "expires_at")?)?,
                    })
                })
                .collect()
        })
    }

    /// Deletes the entries of one scope (its stored key), or only those of
    /// `tool` in it; returns how many.
    pub async fn cache_purge_scope(&self, scope: &str, tool: Option<&str>) -> Result<u64> {
        let op = Error::query(self.backend(), "cache.purge_scope");
        let done = with_pool!(self, |pool, T| {
            sqlx::query("DELETE FROM cache_entries WHERE scope = $1 AND ($2 IS NULL OR tool = $2)")
                .bind(scope)
                .bind(tool)
                .execute(pool)
                .await
                .map_err(op)?
                .rows_affected()
        });
        self.collect_after_delete(done).await;
        Ok(done)
    }

    /// Deletes every entry, or those of `tool`; returns how many.
    pub async fn cache_purge(&self, tool: Option<&str>) -> Result<u64> {
        let op = Error::query(self.backend(), "cache.purge");
        let done = with_pool!(self, |pool, T| match tool {
            Some(tool) => sqlx::query("DELETE FROM cache_entries WHERE tool = $1")
                .bind(tool)
                .execute(pool)
                .await
                .map_err(op)?
                .rows_affected(),
            None => sqlx::query("DELETE FROM cache_entries")
                .execute(pool)
                .await
                .map_err(op)?
                .rows_affected(),
        });
        self.collect_after_delete(done).await;
        Ok(done)
    }

    /// Deletes the entries expired at `now`; returns how many.
    pub async fn cache_sweep(&self, now: DateTime<Utc>) -> Result<u64> {
        let done = with_pool!(self, |pool, T| {
            sqlx::query("DELETE FROM cache_entries WHERE expires_at <= $1")
                .bind(T::enc(now))
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "cache.sweep"))?
                .rows_affected()
        });
        self.collect_after_delete(done).await;
        Ok(done)
    }
}

/// An entry's numbers, encoded for its row.
struct Row {
    payload_bytes: i64,
    stored_bytes: i64,
    items: i64,
}

impl Row {
    fn of(entry: &CacheEntry, stored: &[u8]) -> Result<Row> {
        Ok(Row {
            payload_bytes: to_i64(entry.payload.len() as u64, "payload length")?,
            stored_bytes: to_i64(stored.len() as u64, "stored length")?,
            items: to_i64(entry.items, "item count")?,
        })
    }
}

/// Binds `PUT`'s eleven parameters: the payload `inline`, or in row
/// `payload_id` (then `inline` is empty).
fn bind_entry<'q, DB, R>(
    query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>,
    entry: &'q CacheEntry,
    row: &'q Row,
    inline: &'q [u8],
    codec: Codec,
    payload_id: Option<i64>,
    stamp: fn(DateTime<Utc>) -> R,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    R: 'q + Send + sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q [u8]: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    query
        .bind(entry.scope.as_str())
        .bind(entry.key.as_str())
        .bind(entry.tool.as_str())
        .bind(inline)
        .bind(row.payload_bytes)
        .bind(row.items)
        .bind(row.stored_bytes)
        .bind(stamp(entry.cached_at))
        .bind(stamp(entry.expires_at))
        .bind(codec.as_str())
        .bind(payload_id)
}

impl CacheStore for Cache {
    fn get<'a>(
        &'a self,
        scope: &'a str,
        key: &'a str,
        now: DateTime<Utc>,
    ) -> BoxFuture<'a, Result<Option<CacheEntry>, StoreError>> {
        Box::pin(async move { Ok(self.cache_get(scope, key, now).await?) })
    }

    fn put<'a>(&'a self, entry: &'a CacheEntry) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { Ok(self.cache_put(entry).await?) })
    }

    fn list<'a>(&'a self) -> BoxFuture<'a, Result<Vec<CacheListing>, StoreError>> {
        Box::pin(async move { Ok(self.cache_list().await?) })
    }

    fn purge<'a>(&'a self, tool: Option<&'a str>) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move { Ok(self.cache_purge(tool).await?) })
    }

    fn sweep<'a>(&'a self, now: DateTime<Utc>) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move { Ok(self.cache_sweep(now).await?) })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// The cache of complete walks (dragnet-core's `CacheStore`).
    pub fn cache(&self) -> Cache {
        Cache(self.clone())
    }
}
