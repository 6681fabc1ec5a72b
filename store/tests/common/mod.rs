//! The store suites' harness: the crate's `testing` module, plus helpers
//! only these suites use.
#![allow(dead_code)]

use chrono::{DateTime, Duration as Span, Utc};
use dragnet_core::ports::cache::CacheEntry;

pub use dragnet_store::testing::*;

/// An entry of `payload.len() / 10` items, cached at `at` for `ttl`.
pub fn entry(
    scope: &str,
    key: &str,
    tool: &str,
    payload: &[u8],
    at: DateTime<Utc>,
    ttl: Span,
) -> CacheEntry {
    CacheEntry {
        scope: scope.into(),
        key: key.into(),
        tool: tool.into(),
        payload: payload.to_vec(),
        items: payload.len() as u64 / 10,
        cached_at: at,
        expires_at: at + ttl,
        payload_row: None,
    }
}

/// The payload a walk keeps of page `body`: its collection under `key`
/// split into items, the rest as the envelope.
pub fn collection_payload(body: &str, key: &str) -> anyhow::Result<dragnet_core::Payload> {
    use anyhow::Context;
    use dragnet_walk::collection;
    use serde_json::value::RawValue;

    let root: Box<RawValue> = serde_json::from_str(body)?;
    let path = vec![key.to_string()];
    let page = collection::split(&root, &path).context("the page splits")?;
    Ok(dragnet_core::Payload::Collection {
        envelope: collection::envelope(&root, &path),
        items: page.items.into_iter().map(RawValue::get).collect(),
    })
}
