//! The size guard (SPEC §4): every agent call's answer is held to a budget
//! of estimated tokens — one token per four characters of the rendered
//! JSON, a common rule of thumb for JSON text, 8,000 by default. An answer
//! over it is cut at an item boundary (a character cut only when there is
//! no collection) and says so under `_truncated`: how many rows it holds of
//! how many, and how to read the rest. The whole answer is stored under a
//! `_resultId` (15 minutes, the caller's organisation and thread), and so
//! is every complete walk, cut or not, so an agent can query it again
//! without walking again. A cache hit that says exactly what an answer
//! stored moments ago names that stored result ([`crate::stored_hits`]).

use chrono::{DateTime, Utc};
use dragnet_core::Payload;
use dragnet_core::{Form, ResultId, ResultScope, ResultStore};
use dragnet_walk::LoopResult;
use serde_json::{json, Value};

use crate::error::Error;
use crate::render::{as_said, render, render_cut};
use crate::results::{keep_as, ResultLink, StoredResult};
use crate::stored_hits::{Said, StoredHits};

/// The budget when none is configured.
pub const DEFAULT_BUDGET_TOKENS: usize = 8_000;
/// Characters per estimated token.
pub const CHARS_PER_TOKEN: usize = 4;
/// Room kept for the note's numbers, which grow with the rows kept.
const NOTE_SLACK: usize = 64;

/// How large an answer may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeBudget {
    pub tokens: usize,
}

impl Default for SizeBudget {
    fn default() -> Self {
        SizeBudget {
            tokens: DEFAULT_BUDGET_TOKENS,
        }
    }
}

impl SizeBudget {
    pub fn chars(self) -> usize {
        self.tokens.saturating_mul(CHARS_PER_TOKEN)
    }
}

/// The estimated tokens of `text`.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

/// What the agent reads.
#[derive(Debug)]
pub struct Guarded {
    pub text: String,
    /// Set when the whole answer was stored: where it is.
    pub stored: Option<ResultLink>,
    /// Set when the answer was cut: rows kept of rows in all (both 0 for
    /// a character cut).
    pub cut: Option<(usize, usize)>,
}

/// Holds `result` to `budget` for `scope`: passes it as it is when it fits
/// and is not a complete walk; otherwise stores it and answers with its
/// `_resultId` (cut when it does not fit).
pub async fn guard(
    result: LoopResult,
    budget: SizeBudget,
    store: &dyn ResultStore<Payload>,
    scope: &ResultScope,
    now: DateTime<Utc>,
    hits: &StoredHits,
) -> Result<Guarded, Error> {
    let (full, form) = as_said(&result).unwrap_or_else(|| (render(&result), Form::json()));
    let fits = estimate_tokens(&full) <= budget.tokens;
    let walk = !matches!(result.payload, Payload::Single(_));
    let complete_walk = walk && result.verdict.complete;
    if fits && !complete_walk {
        return Ok(Guarded {
            text: full,
            stored: None,
            cut: None,
        });
    }
    // A cache hit saying what an answer stored moments ago names it again.
    let said = fits.then(|| Said::of(&result, scope, &full)).flatten();
    if let Some(link) = said.as_ref().and_then(|s| hits.find(s, now)) {
        return Ok(Guarded {
            text: whole_with_id(&result, &link.id),
            stored: Some(link),
            cut: None,
        });
    }
    let id = ResultId::new();
    let total = result.visible().len();
    let (text, cut) = match (fits, walk) {
        (true, _) => (whole_with_id(&result, &id), None),
        (false, true) => {
            let kept = rows_that_fit(&result, &id, total, budget);
            (
                render_cut(&result, kept, cut_keys(&id, kept, total)),
                Some((kept, total)),
            )
        }
        (false, false) => (character_cut(&full, &id, budget), Some((0, 0))),
    };
    let stored = StoredResult {
        text: full,
        form,
        payload: result.payload,
    };
    keep_as(store, &id, scope, &stored, now).await?;
    let link = ResultLink::to(&id, &stored);
    if let Some(said) = said {
        hits.keep(said, link.clone(), now);
    }
    Ok(Guarded {
        text,
        stored: Some(link),
        cut,
    })
}

/// The whole answer, with the `_resultId` it is stored under.
fn whole_with_id(result: &LoopResult, id: &ResultId) -> String {
    render_cut(result, usize::MAX, vec![("_resultId", json!(id.as_str()))])
}

/// `_resultId` and `_truncated` of an answer cut to `kept` of `total` rows.
fn cut_keys(id: &ResultId, kept: usize, total: usize) -> Vec<(&'static str, Value)> {
    let note = format!(
        "Cut to the first {kept} of {total} rows to fit the size budget. The whole result is \
         stored as {id} for 15 minutes: call queryToolResult {{resultId, offset: {kept}, filter?, \
         fields?, limit?}} for the rest (the filter runs on every stored row), or \
         fetchToolResult {{resultId, offset, length}} for the raw text. Do not count or total \
         these rows as if they were all."
    );
    vec![
        ("_resultId", json!(id.as_str())),
        (
            "_truncated",
            json!({"returned": kept, "total": total, "nextOffset": kept, "note": note}),
        ),
    ]
}

/// How many visible rows fit with the keys around them.
fn rows_that_fit(result: &LoopResult, id: &ResultId, total: usize, budget: SizeBudget) -> usize {
    let frame = render_cut(result, 0, cut_keys(id, 0, total))
        .chars()
        .count()
        + NOTE_SLACK;
    let mut used = frame;
    let mut kept = 0;
    for row in result.visible().iter() {
        // Bytes, never fewer than characters: the estimate stays under.
        let cost = row.len() + 1;
        if used + cost > budget.chars() {
            break;
        }
        used += cost;
        kept += 1;
    }
    kept
}

/// An answer without a collection, cut by characters into a string.
fn character_cut(full: &str, id: &ResultId, budget: SizeBudget) -> String {
    let total = full.chars().count();
    let note = format!(
        "The result has no collection to cut by rows, so its text was cut at a character. The \
         whole text ({total} characters) is stored as {id} for 15 minutes: call \
         fetchToolResult {{resultId, offset, length}} to read on."
    );
    let build = |keep: usize| {
        let head: String = full.chars().take(keep).collect();
        let kept = head.chars().count();
        json!({
            "_truncatedText": head,
            "_resultId": id.as_str(),
            "_truncated": {"returned": kept, "total": total, "nextOffset": kept, "note": note},
        })
        .to_string()
    };
    // Escapes grow the text by an amount only the text knows: start from
    // the room left and shrink in proportion until it fits.
    let mut keep = budget.chars().saturating_sub(note.len() + 160);
    loop {
        let answer = build(keep);
        let size = answer.chars().count();
        if size <= budget.chars() || keep == 0 {
            return answer;
        }
        let over = size - budget.chars();
        keep = keep.saturating_sub(over.max(keep / 10).max(1));
    }
}

#[cfg(test)]
mod tests {
    use dragnet_core::budget::CallStats;
    use dragnet_core::Verdict;
    use serde_json::Value;

    use super::*;
    use crate::memory::{payload, Memory};
    use crate::results::find;

    fn walk(rows: usize, complete: bool) -> LoopResult {
        let items: Vec<String> = (0..rows)
            .map(|i| json!({"id": i, "name": format!("customer number {i}")}).to_string())
            .collect();
        LoopResult {
            payload: payload(&items, false),
            shaped: None,
            verdict: Verdict {
                complete,
                likely_more_rows: !complete,
                requests: 3,
                item_count: rows,
                stopped_by: None,
                note: "Complete.".into(),
            },
            unmatched_fields: None,
            for_each_errors: Vec::new(),
            cache: None,
            stats: CallStats::default(),
        }
    }

    fn scope() -> ResultScope {
        ResultScope {
            org: "acme".into(),
            thread: "t1".into(),
        }
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    /// `guard` at `now()`, remembering no earlier answer.
    async fn guard_once(
        result: LoopResult,
        budget: SizeBudget,
        store: &Memory,
        scope: &ResultScope,
    ) -> Result<Guarded, Error> {
        guard(result, budget, store, scope, now(), &StoredHits::default()).await
    }

    #[tokio::test]
    async fn an_answer_over_the_budget_is_cut_at_a_row_and_stored_whole() {
        let store = Memory::default();
        let budget = SizeBudget { tokens: 500 };
        let g = guard_once(walk(1000, true), budget, &store, &scope())
            .await
            .unwrap();
        assert!(
            estimate_tokens(&g.text) <= budget.tokens,
            "{}",
            estimate_tokens(&g.text)
        );
        let (kept, total) = g.cut.unwrap();
        assert!(kept > 10 && kept < 1000, "{kept}");
        assert_eq!(total, 1000);
        let v: Value = serde_json::from_str(&g.text).expect("the cut answer is JSON");
        assert_eq!(v["items"].as_array().map(Vec::len), Some(kept));
        assert_eq!(v["_truncated"]["nextOffset"], kept);
        assert_eq!(v["_pagingComplete"], true);
        let id = g.stored.unwrap().id;
        assert_eq!(v["_resultId"], id.as_str());
        // The whole answer is stored: every row.
        let stored = find(&store, &scope(), id.as_str(), now()).await.unwrap();
        assert_eq!(stored.payload.items().len(), 1000);
        let whole: Value = serde_json::from_str(&stored.text).unwrap();
        assert_eq!(whole["items"].as_array().map(Vec::len), Some(1000));
    }

    #[tokio::test]
    async fn a_small_answer_passes_and_a_complete_walk_is_kept_anyway() {
        let store = Memory::default();
        let budget = SizeBudget::default();
        let partial = guard_once(walk(5, false), budget, &store, &scope())
            .await
            .unwrap();
        assert!(partial.stored.is_none() && partial.cut.is_none());
        assert_eq!(partial.text, render(&walk(5, false)));
        let complete = guard_once(walk(5, true), budget, &store, &scope())
            .await
            .unwrap();
        assert!(complete.cut.is_none());
        let v: Value = serde_json::from_str(&complete.text).unwrap();
        assert_eq!(v["items"].as_array().map(Vec::len), Some(5));
        assert_eq!(v["_resultId"], complete.stored.unwrap().id.as_str());
    }

    #[tokio::test]
    async fn an_answer_without_a_collection_passes_as_it_was_said() {
        let (store, scope) = (Memory::default(), scope());
        let budget = SizeBudget::default();
        let said = |raw: &str| {
            let mut single = walk(0, true);
            single.payload = Payload::Single(dragnet_core::json::to_raw(raw.to_string()));
            single
        };
        let g = guard_once(said("\"Echo: hello\""), budget, &store, &scope);
        let g = g.await.unwrap();
        assert_eq!(g.text, "Echo: hello");
        assert!(g.stored.is_none() && g.cut.is_none());
        let object = r#"{"id": 7,  "name":"Ada"}"#;
        let g = guard_once(said(object), budget, &store, &scope);
        assert_eq!(g.await.unwrap().text, object);
        // What it would not say alone stays: where an answer came from.
        let mut cached = said(object);
        cached.cache = Some(dragnet_core::ports::cache::CacheLabel {
            hit: true,
            stored: false,
            mode: dragnet_core::ports::cache::CacheMode::On,
            cached_at: Some(now()),
            expires_at: Some(now()),
            entry: None,
            payload_row: None,
        });
        let g = guard_once(cached, budget, &store, &scope).await.unwrap();
        let v: Value = serde_json::from_str(&g.text).unwrap();
        assert_eq!(
            (v["id"].clone(), v["_cache"]["hit"].clone()),
            (json!(7), json!(true))
        );
    }

    #[tokio::test]
    async fn an_answer_without_rows_is_cut_by_characters() {
        let store = Memory::default();
        let mut big = walk(0, true);
        let text = json!({"report": "x".repeat(50_000)}).to_string();
        big.payload = Payload::Single(dragnet_core::json::to_raw(text));
        let budget = SizeBudget { tokens: 1000 };
        let g = guard_once(big, budget, &store, &scope()).await.unwrap();
        assert!(estimate_tokens(&g.text) <= budget.tokens);
        let v: Value = serde_json::from_str(&g.text).unwrap();
        assert!(v["_truncatedText"]
            .as_str()
            .unwrap()
            .starts_with("{\"report\":\"xxx"));
        assert!(v["_truncated"]["note"]
            .as_str()
            .unwrap()
            .contains("fetchToolResult"));
        assert_eq!(g.cut, Some((0, 0)));
        // Text that grows when escaped still fits.
        let mut quoted = walk(0, true);
        let text = json!({"q": "\"\u{1}".repeat(20_000)}).to_string();
        quoted.payload = Payload::Single(dragnet_core::json::to_raw(text));
        let g = guard_once(quoted, budget, &store, &scope()).await.unwrap();
        assert!(
            estimate_tokens(&g.text) <= budget.tokens,
            "{}",
            estimate_tokens(&g.text)
        );
        let v: Value = serde_json::from_str(&g.text).unwrap();
        assert!(v["_truncatedText"].as_str().unwrap().len() > 100);
    }
}
