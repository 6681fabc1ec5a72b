//! Stored results: what an agent call produced, kept whole for
//! `RESULT_TTL` under a `ResultId`, for the organisation and thread that
//! made it. The `ResultStore` port is this crate's; a store implements it.
//! A lookup names the scope it asks from, and a result of another scope is
//! `Unknown` — the answer for an id that never existed — so nobody learns
//! another thread's ids exist. Only a result of the asker's own scope can
//! be `Expired`.

use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, Duration, Utc};
use dragnet_steps::Payload;

use crate::error::Error;
use crate::result_id::ResultId;

/// How long a stored result is kept.
pub const RESULT_TTL: Duration = Duration::minutes(15);

/// Whose a stored result is: an organisation, and the thread in it (an MCP
/// session, a thread id the caller presents, or the token's subject).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultScope {
    pub org: String,
    pub thread: String,
}

/// A stored result: the call's whole text as the agent would have read
/// it (what `fetchToolResult` slices), and its payload (what
/// `queryToolResult` filters; `Payload::Single` holds no items).
#[derive(Debug)]
pub struct StoredResult {
    pub text: String,
    pub payload: Payload,
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    Found(StoredResult),
    /// The asker's own result, past its time.
    Expired {
        expired_at: DateTime<Utc>,
    },
    /// No result of that id in the asker's scope.
    Unknown,
}

/// What a `ResultStore` returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// Keeps stored results.
pub trait ResultStore: Send + Sync {
    /// Keeps `result` under `id` for `scope`, stored at `now`, until
    /// `expires_at`.
    fn put<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        result: &'a StoredResult,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreFuture<'a, ()>;

    /// Result `id` as `scope` may see it at `now`.
    fn get<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Lookup>;
}

/// Keeps `result` for `scope` under a fresh id, for `RESULT_TTL` from `now`.
pub async fn keep(
    store: &dyn ResultStore,
    scope: &ResultScope,
    result: &StoredResult,
    now: DateTime<Utc>,
) -> Result<ResultId, Error> {
    let id = ResultId::new();
    keep_as(store, &id, scope, result, now).await?;
    Ok(id)
}

/// Keeps `result` for `scope` under `id` (made beforehand, so the answer
/// naming it is written first), for `RESULT_TTL` from `now`.
pub async fn keep_as(
    store: &dyn ResultStore,
    id: &ResultId,
    scope: &ResultScope,
    result: &StoredResult,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    store.put(id, scope, result, now, now + RESULT_TTL).await
}

/// The stored result `text` names, for `scope` at `now`, or the error an
/// agent should read: unknown (also another scope's), or expired.
pub async fn find(
    store: &dyn ResultStore,
    scope: &ResultScope,
    text: &str,
    now: DateTime<Utc>,
) -> Result<StoredResult, Error> {
    let unknown = || Error::UnknownResult {
        id: text.chars().take(64).collect(),
    };
    let id = ResultId::parse(text).ok_or_else(unknown)?;
    match store.get(&id, scope, now).await? {
        Lookup::Found(result) => Ok(result),
        Lookup::Expired { expired_at } => Err(Error::ExpiredResult {
            id: id.to_string(),
            expired_at,
        }),
        Lookup::Unknown => Err(unknown()),
    }
}
