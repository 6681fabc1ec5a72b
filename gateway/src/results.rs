//! Stored results: what an agent call produced, kept whole for
//! `RESULT_TTL` under a `ResultId`, for the organisation and thread that
//! made it, through dragnet-core's `ResultStore` port (a store implements
//! it). A lookup names the scope it asks from, and a result of another
//! scope is `Unknown` — the answer for an id that never existed — so
//! nobody learns another thread's ids exist. Only a result of the asker's
//! own scope can be `Expired`.

use chrono::{DateTime, Duration, Utc};
use dragnet_core::Payload;
use dragnet_core::{ResultId, ResultScope, ResultStore};

use crate::error::Error;

/// The URI scheme and path stored results are read under as MCP
/// resources: `dragnet://results/<id>`.
pub const RESOURCE_PREFIX: &str = "dragnet://results/";

/// What an answer says of the result it was stored as: its id, and what a
/// reader of it as a resource gets (its size in bytes and media type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultLink {
    pub id: ResultId,
    pub bytes: usize,
    pub media_type: String,
}

impl ResultLink {
    /// The link to `result`, kept under `id`.
    pub fn to(id: &ResultId, result: &StoredResult) -> ResultLink {
        ResultLink {
            id: id.clone(),
            bytes: result.text.len(),
            media_type: result.form.media_type().to_string(),
        }
    }

    /// `dragnet://results/<id>`.
    pub fn uri(&self) -> String {
        format!("{RESOURCE_PREFIX}{}", self.id)
    }
}

/// The result id a resource URI names, as text ([`find`] says whether it
/// is one); `None` when the URI is not a stored result's.
pub fn id_in_uri(uri: &str) -> Option<&str> {
    uri.strip_prefix(RESOURCE_PREFIX)
}

/// How long a stored result is kept.
pub const RESULT_TTL: Duration = Duration::minutes(15);

/// Stored results as the gateway keeps them: the text and the loop
/// layer's payload (what `queryToolResult` filters; `Payload::Single`
/// holds no items).
pub type StoredResult = dragnet_core::StoredResult<Payload>;

/// What a lookup of a stored result found.
pub type Lookup = dragnet_core::Lookup<Payload>;

/// Keeps `result` for `scope` under a fresh id, for `RESULT_TTL` from `now`.
pub async fn keep(
    store: &dyn ResultStore<Payload>,
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
    store: &dyn ResultStore<Payload>,
    id: &ResultId,
    scope: &ResultScope,
    result: &StoredResult,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    Ok(store.put(id, scope, result, now, now + RESULT_TTL).await?)
}

/// The stored result `text` names, for `scope` at `now`, or the error an
/// agent should read: unknown (also another scope's), or expired.
pub async fn find(
    store: &dyn ResultStore<Payload>,
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
