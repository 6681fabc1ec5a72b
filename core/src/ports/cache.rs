//! The cache port (SPEC §5): the `CacheStore` seam that the PostgreSQL and
//! SQLite stores (crate dragnet-store) implement, what it stores, the
//! deployment's cache mode and the label a result carries. The policy of
//! one call (keys, scopes, when to read and write) is dragnet-walk's.

use chrono::{DateTime, Utc};

use super::BoxFuture;

/// The cache setting of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheMode {
    /// Never read, never write.
    Off,
    /// Serve hits; store complete walks.
    On,
    /// Store complete walks, never serve them (to measure before switching on).
    Shadow,
}

impl CacheMode {
    pub fn parse(text: &str) -> Option<CacheMode> {
        match text {
            "off" => Some(CacheMode::Off),
            "on" => Some(CacheMode::On),
            "shadow" => Some(CacheMode::Shadow),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::Off => "off",
            CacheMode::On => "on",
            CacheMode::Shadow => "shadow",
        }
    }
}

/// One stored walk.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    /// `CacheScope::key()` of whoever fetched it.
    pub scope: String,
    /// `cache_key(…)`: tool, arguments, all-pages, fan-out values.
    pub key: String,
    /// The tool id (e.g. `shop.listOrders`), for listing and purging.
    pub tool: String,
    /// The stored payload (`stored::encode`), uncompressed; stores may
    /// compress it at rest.
    pub payload: Vec<u8>,
    pub items: u64,
    pub cached_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// Where the store keeps this payload, as read (`None` on a put, and
    /// from stores that keep payloads inside their entries): a run's step
    /// served from it may point at that row instead of holding a copy.
    pub payload_row: Option<PayloadRow>,
}

/// A stored payload's own row (`cache_payloads.id`). The store keeps it
/// while an entry or a step output points at it, so a step output that
/// names it reads the rows it was served, whatever the cache does after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PayloadRow(pub i64);

/// A line of `dragnet cache list`.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheListing {
    pub scope: String,
    pub key: String,
    pub tool: String,
    pub items: u64,
    /// Bytes at rest (after compression).
    pub stored_bytes: u64,
    pub cached_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// A store failure; the call goes on without the cache.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cache store: {0}")]
pub struct StoreError(pub String);

/// Where cached walks live.
pub trait CacheStore: Send + Sync {
    /// The live entry for `(scope, key)` at `now`; expired entries are misses.
    fn get<'a>(
        &'a self,
        scope: &'a str,
        key: &'a str,
        now: DateTime<Utc>,
    ) -> BoxFuture<'a, Result<Option<CacheEntry>, StoreError>>;
    /// Stores or replaces the entry for `(entry.scope, entry.key)`; racing
    /// writers leave one valid entry.
    fn put<'a>(&'a self, entry: &'a CacheEntry) -> BoxFuture<'a, Result<(), StoreError>>;
    fn list<'a>(&'a self) -> BoxFuture<'a, Result<Vec<CacheListing>, StoreError>>;
    /// Deletes every entry, or those of one tool; returns how many.
    fn purge<'a>(&'a self, tool: Option<&'a str>) -> BoxFuture<'a, Result<u64, StoreError>>;
    /// Deletes entries expired at `now`; returns how many.
    fn sweep<'a>(&'a self, now: DateTime<Utc>) -> BoxFuture<'a, Result<u64, StoreError>>;
}

/// What the cache did for a call.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheLabel {
    pub hit: bool,
    /// A complete walk was written (on a miss, a refresh, or in shadow mode).
    pub stored: bool,
    pub mode: CacheMode,
    pub cached_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    /// The entry served or written: its `CacheEntry::scope` and `key`.
    pub entry: Option<EntryName>,
    /// On a hit, where the store keeps the payload served
    /// (`CacheEntry::payload_row`).
    pub payload_row: Option<PayloadRow>,
}

/// Which cache entry: whose (`CacheEntry::scope`) and which call
/// (`CacheEntry::key`). Two answers naming the same entry and the same
/// `cached_at` hold the same rows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntryName {
    pub scope: String,
    pub key: String,
}
