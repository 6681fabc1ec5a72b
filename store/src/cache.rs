//! The cache of complete walks, `Cache` (SPEC §5): the `CacheStore` seam of
//! dragnet-core. Rows are keyed by `(scope, key)`, so a lookup can only
//! ever see its own scope's entries; a put is one upsert statement, so two
//! writers racing on the same key leave one whole entry (the last one);
//! entries whose `expires_at` is at or before `now` are misses and are
//! deleted by `sweep`. Payloads are compressed at rest, with the codec named
//! in the row (`lz4` now; `zlib` in rows written before it, still read).

use chrono::{DateTime, Utc};
use dragnet_core::ports::cache::{CacheEntry, CacheListing, CacheStore, StoreError};
use dragnet_core::ports::BoxFuture;

use crate::codec::{self, Codec};
use crate::db::{col, handle, to_i64, to_u64, with_pool, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// The cache of complete walks (`Db::cache`): dragnet-core's `CacheStore`.
    Cache
}

const GET: &str = "SELECT tool, codec, payload, payload_bytes, items, cached_at, expires_at \
     FROM cache_entries WHERE scope = $1 AND key = $2 AND expires_at > $3";

const PUT: &str = "INSERT INTO cache_entries \
     (scope, key, tool, payload, payload_bytes, items, stored_bytes, cached_at, expires_at, codec) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
     ON CONFLICT (scope, key) DO UPDATE SET \
     tool = excluded.tool, codec = excluded.codec, payload = excluded.payload, payload_bytes = excluded.payload_bytes, \
     items = excluded.items, stored_bytes = excluded.stored_bytes, \
     cached_at = excluded.cached_at, expires_at = excluded.expires_at";

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
        }))
    }

    /// Stores or replaces the entry for `(entry.scope, entry.key)`.
    pub async fn cache_put(&self, entry: &CacheEntry) -> Result<()> {
        let stored = codec::compress(entry.payload.clone()).await?;
        self.put_stored(entry, stored, Codec::Lz4).await
    }

    /// Stores `entry` zlib-compressed, as builds before LZ4 did (tests of
    /// old rows).
    #[cfg(feature = "testing")]
    pub async fn cache_put_zlib(&self, entry: &CacheEntry) -> Result<()> {
        let stored = codec::compress_zlib(&entry.payload)?;
        self.put_stored(entry, stored, Codec::Zlib).await
    }

    async fn put_stored(&self, entry: &CacheEntry, stored: Vec<u8>, codec: Codec) -> Result<()> {
        let payload_bytes = to_i64(entry.payload.len() as u64, "payload length")?;
        let stored_bytes = to_i64(stored.len() as u64, "stored length")?;
        let items = to_i64(entry.items, "item count")?;
        with_pool!(self, |pool, T| {
            sqlx::query(PUT)
                .bind(&entry.scope)
                .bind(&entry.key)
                .bind(&entry.tool)
                .bind(&stored)
                .bind(payload_bytes)
                .bind(items)
                .bind(stored_bytes)
                .bind(T::enc(entry.cached_at))
                .bind(T::enc(entry.expires_at))
                .bind(codec.as_str())
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "cache.put"))?;
        });
        Ok(())
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
        Ok(done)
    }
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
