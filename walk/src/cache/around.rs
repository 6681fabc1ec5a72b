//! The cache around one call: look up before walking (unless refreshing,
//! off, shadow, or an experiment), serve a hit shaped like a fresh walk,
//! and record a complete walk afterwards. A store failure never fails the
//! call: it is logged and the call goes on as a miss.

use chrono::Duration as ChronoDuration;

use super::{stored, CachePolicy};
use crate::options::LoopOptions;
use crate::result::LoopResult;
use crate::shape::shape;
use crate::verdict_note::cached_verdict;
use dragnet_core::json_rows::Rows;
use dragnet_core::payload::Payload;
use dragnet_core::ports::cache::{CacheEntry, CacheLabel, CacheMode, EntryName};

/// A live entry for this call, decoded, when the policy allows serving.
pub async fn lookup(
    policy: &CachePolicy,
    key: &str,
    options: &LoopOptions,
) -> Option<(Payload, CacheEntry)> {
    if policy.mode != CacheMode::On || !policy.read || options.refresh {
        return None;
    }
    let scope = policy.scope.key();
    match policy.store.get(&scope, key, policy.clock.now()).await {
        Ok(Some(mut entry)) => match stored::decode(std::mem::take(&mut entry.payload)) {
            Some(payload) => Some((payload, entry)),
            None => {
                tracing::warn!(tool = %policy.tool_id, "a cache entry could not be decoded; fetching again");
                None
            }
        },
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(tool = %policy.tool_id, error = %e, "cache lookup failed; fetching again");
            None
        }
    }
}

/// The result of a hit: the stored set shaped by this call's filter and
/// fields, complete, labelled with when it was fetched.
pub fn hit(
    payload: Payload,
    entry: &CacheEntry,
    options: &LoopOptions,
    mode: CacheMode,
) -> LoopResult {
    let (shaped, unmatched_fields) =
        shape(payload.items(), &options.filter, options.fields.as_ref());
    let visible = shaped.as_ref().map(Rows::len);
    let verdict = cached_verdict(
        payload.items().len(),
        visible,
        matches!(payload, Payload::Single(_)),
        entry.cached_at,
        entry.expires_at,
        options,
    );
    LoopResult {
        payload,
        shaped,
        verdict,
        unmatched_fields,
        for_each_errors: Vec::new(),
        stats: Default::default(),
        cache: Some(CacheLabel {
            hit: true,
            stored: false,
            mode,
            cached_at: Some(entry.cached_at),
            expires_at: Some(entry.expires_at),
            entry: Some(EntryName {
                scope: entry.scope.clone(),
                key: entry.key.clone(),
            }),
            payload_row: entry.payload_row,
        }),
    }
}

/// Stores a complete walk (on and shadow modes) and says what happened.
pub async fn record(policy: &CachePolicy, key: String, result: &LoopResult) -> Option<CacheLabel> {
    if policy.mode == CacheMode::Off {
        return None;
    }
    let mut label = CacheLabel {
        hit: false,
        stored: false,
        mode: policy.mode,
        cached_at: None,
        expires_at: None,
        entry: None,
        payload_row: None,
    };
    if !result.verdict.complete {
        // Only complete walks are ever stored.
        return Some(label);
    }
    let now = policy.clock.now();
    let ttl = ChronoDuration::from_std(policy.ttl).unwrap_or(ChronoDuration::hours(1));
    let entry = CacheEntry {
        scope: policy.scope.key(),
        key,
        tool: policy.tool_id.clone(),
        payload: stored::encode(&result.payload),
        items: result.payload.items().len() as u64,
        cached_at: now,
        expires_at: now + ttl,
        payload_row: None,
    };
    match policy.store.put(&entry).await {
        Ok(()) => {
            label.stored = true;
            label.cached_at = Some(entry.cached_at);
            label.expires_at = Some(entry.expires_at);
            label.entry = Some(EntryName {
                scope: entry.scope,
                key: entry.key,
            });
        }
        Err(e) => {
            tracing::warn!(tool = %policy.tool_id, error = %e, "storing a complete walk failed")
        }
    }
    Some(label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn entry() -> CacheEntry {
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap();
        CacheEntry {
            scope: "org:acme".into(),
            key: "k".into(),
            tool: "files.read_file".into(),
            payload: Vec::new(),
            items: 0,
            cached_at: at,
            expires_at: at + ChronoDuration::hours(24),
            payload_row: None,
        }
    }

    /// A hit of each payload kind, written again from its payload and
    /// `_loop` text as a store reads it back, is the step's rendering.
    #[test]
    fn a_served_output_is_written_again_byte_for_byte() {
        use crate::result::served_document;
        let raw = |t: &str| serde_json::value::RawValue::from_string(t.into()).unwrap();
        let root = raw(r#"{"total":2,"data":[{"id":1},{"id":"two"}],"next":null}"#);
        let path = vec!["data".to_string()];
        let page = crate::collection::split(&root, &path).unwrap();
        let payloads = [
            Payload::Collection {
                envelope: crate::collection::envelope(&root, &path),
                items: page.items.into_iter().map(|i| i.get()).collect(),
            },
            Payload::Items(["[1]", "{\"a\":\"\\u00e9\"}"].into_iter().collect()),
            Payload::Single(raw(r#"{"text":"hello","_loop":"theirs"}"#)),
            Payload::Single(raw(r#""plain words""#)),
        ];
        let mut served = entry();
        served.payload_row = Some(dragnet_core::ports::cache::PayloadRow(7));
        for payload in payloads {
            // What the store reads back: the payload as it was stored.
            let read_back = stored::decode(stored::encode(&payload)).unwrap();
            let step = hit(payload, &served, &LoopOptions::default(), CacheMode::On);
            let from = step
                .served_from(None)
                .expect("a plain hit is served as stored");
            assert_eq!(from.row.0, 7);
            let again = served_document(&read_back, &from.loop_text);
            assert_eq!(again.get(), step.workflow_document().get());
        }
        // An entry without a payload row of its own: nothing to point at.
        let old = hit(
            Payload::Items(Default::default()),
            &entry(),
            &LoopOptions::default(),
            CacheMode::On,
        );
        assert!(old.served_from(None).is_none());
    }

    #[test]
    fn a_hit_without_a_collection_counts_no_rows() {
        let raw = serde_json::value::RawValue::from_string(r#"{"text":"hello"}"#.into()).unwrap();
        let single = hit(
            Payload::Single(raw),
            &entry(),
            &LoopOptions::default(),
            CacheMode::On,
        );
        let note = &single.verdict.note;
        assert!(
            note.starts_with(
                "Complete: the answer has no collection; returned whole from the cache, fetched"
            ),
            "{note}"
        );
        assert!(!note.contains("row"), "{note}");
        let rows = hit(
            Payload::Items(Default::default()),
            &entry(),
            &LoopOptions::default(),
            CacheMode::On,
        );
        assert!(
            rows.verdict
                .note
                .starts_with("Complete: all 0 rows served from the cache"),
            "{}",
            rows.verdict.note
        );
    }
}
