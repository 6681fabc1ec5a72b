//! The agent's rendering of a `LoopResult`: the tool's own payload with the
//! verdict in the agent's words after it (an answer without a collection
//! passes as it was said: [`as_said`]) — `_pagingComplete`,
//! `_likelyMoreRows`, `_note` (with the `_refresh` advice on a cache hit),
//! `_cache` on a hit, and `_unmatchedFields` / `_forEachErrors` when there
//! is something to report. The size guard adds `_resultId`, `_truncated`
//! and its note through `render_cut`. `dragnet call --json` prints the same
//! rendering.

use dragnet_core::{Form, Payload};
use dragnet_walk::LoopResult;
use serde_json::{json, Value};

/// What an agent's note adds on a cache hit.
pub const AGENT_REFRESH_ADVICE: &str = " Call again with _refresh: true to get the latest data.";

/// The verdict's keys, in the order they are written.
pub fn agent_keys(result: &LoopResult) -> Vec<(&'static str, Value)> {
    let v = &result.verdict;
    let mut keys = vec![
        ("_pagingComplete", json!(v.complete)),
        ("_likelyMoreRows", json!(v.likely_more_rows)),
        ("_note", json!(result.note_with(AGENT_REFRESH_ADVICE))),
    ];
    if let Some(label) = result.cache.as_ref().filter(|l| l.hit) {
        keys.push((
            "_cache",
            json!({"hit": true, "cachedAt": label.cached_at, "expiresAt": label.expires_at}),
        ));
    }
    keys.extend(result.reports());
    keys
}

/// An answer without a collection as its upstream said it (issue 24): a
/// single resource or a tool's plain text is not a walk, so it carries no
/// verdict — a JSON string is its text, anything else its JSON as it came.
/// `None` for a collection, an answer from the cache (its `_cache` label
/// and note say how old it is), or one with something to report
/// (`_unmatchedFields`).
pub fn as_said(result: &LoopResult) -> Option<(String, Form)> {
    let Payload::Single(raw) = &result.payload else {
        return None;
    };
    if result.cache.is_some() || !result.reports().is_empty() {
        return None;
    }
    Some(match serde_json::from_str::<String>(raw.get()) {
        Ok(text) => (
            text,
            Form::Text {
                media_type: "text/plain".into(),
            },
        ),
        Err(_) => (raw.get().to_string(), Form::json()),
    })
}

/// The whole result, as an agent reads it.
pub fn render(result: &LoopResult) -> String {
    result.render_with(&agent_keys(result), usize::MAX)
}

/// The agent rendering written straight to `w` (nothing held twice).
pub fn write(result: &LoopResult, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    result.write_with(&agent_keys(result), w)
}

/// The agent rendering with only the first `limit` visible rows, and
/// `more` after the verdict's keys (a size guard's `_resultId` and note).
pub fn render_cut(result: &LoopResult, limit: usize, more: Vec<(&'static str, Value)>) -> String {
    let mut keys = agent_keys(result);
    keys.extend(more);
    result.render_with(&keys, limit)
}
