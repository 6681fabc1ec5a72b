//! Complete walks served again from the cache, stored once. Every complete
//! walk is stored for the thread (SPEC §4), so an agent, or a hundred
//! callers in one thread, asking again for a walk the cache holds would
//! store the same rows once per answer: a compressed copy and a write
//! each, most of a cached call's cost. Instead, an answer that says
//! exactly what an earlier one said — the same thread, the same cache
//! entry as of the same `cachedAt`, the same text — within
//! [`REUSE_WINDOW`] of the answer that stored it names that stored result.
//! Its 15 minutes run from the answer that stored it, so a reused id has
//! at least 14 minutes left. Only answers that fit whole are reused (a
//! cut one also holds the thread to reading it, which stays per answer),
//! and this gateway process remembers what it stored: another replica,
//! or this one after a restart, stores anew.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use dragnet_core::ports::cache::EntryName;
use dragnet_core::ResultScope;
use dragnet_walk::LoopResult;

use crate::results::ResultLink;

/// How long after storing a complete walk the same answer names it again.
pub const REUSE_WINDOW: Duration = Duration::minutes(1);
/// Answers remembered at most; past it the oldest half is forgotten.
const CAPACITY: usize = 4096;

/// What makes two answers the same stored result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Said {
    org: String,
    thread: String,
    entry: EntryName,
    cached_at: DateTime<Utc>,
    /// The whole answer's text, hashed, and its length.
    text: (u64, usize),
}

impl Said {
    /// What `full` (the whole answer to `scope`) says, when `result` is a
    /// complete walk served from the cache; `None` for anything else.
    pub fn of(result: &LoopResult, scope: &ResultScope, full: &str) -> Option<Said> {
        let label = result.cache.as_ref().filter(|c| c.hit)?;
        if !result.verdict.complete {
            return None;
        }
        let mut hasher = DefaultHasher::new();
        full.hash(&mut hasher);
        Some(Said {
            org: scope.org.clone(),
            thread: scope.thread.clone(),
            entry: label.entry.clone()?,
            cached_at: label.cached_at?,
            text: (hasher.finish(), full.len()),
        })
    }
}

/// The complete walks this process stored from cache hits, by what their
/// answers said.
#[derive(Debug, Default)]
pub struct StoredHits {
    kept: Mutex<HashMap<Said, (ResultLink, DateTime<Utc>)>>,
}

impl StoredHits {
    /// The stored result an answer saying `said` names at `now`, if one was
    /// stored within the window.
    pub fn find(&self, said: &Said, now: DateTime<Utc>) -> Option<ResultLink> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let (link, at) = kept.get(said)?;
        (now >= *at && now - *at < REUSE_WINDOW).then(|| link.clone())
    }

    /// Remembers that the answer saying `said` was stored as `link` at `now`.
    pub fn keep(&self, said: Said, link: ResultLink, now: DateTime<Utc>) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= CAPACITY {
            kept.retain(|_, (_, at)| now - *at < REUSE_WINDOW);
        }
        if kept.len() >= CAPACITY {
            let mut ages: Vec<DateTime<Utc>> = kept.values().map(|(_, at)| *at).collect();
            ages.sort_unstable();
            let median = ages[ages.len() / 2];
            kept.retain(|_, (_, at)| *at > median);
        }
        kept.insert(said, (link, now));
    }
}

#[cfg(test)]
mod tests {
    use dragnet_core::budget::CallStats;
    use dragnet_core::ports::cache::{CacheLabel, CacheMode};
    use dragnet_core::Verdict;
    use serde_json::{json, Value};

    use super::*;
    use crate::guard::{guard, Guarded, SizeBudget};
    use crate::memory::{payload, Memory};
    use crate::results::find;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000 + seconds, 0).unwrap_or_default()
    }

    fn thread(name: &str) -> ResultScope {
        ResultScope {
            org: "acme".into(),
            thread: name.into(),
        }
    }

    /// A complete walk of `rows` rows, served from the cache entry `key`
    /// as it was cached at `cached_at` (`None`: walked, not a hit).
    fn walk(rows: usize, hit: Option<(&str, i64)>) -> LoopResult {
        let items: Vec<String> = (0..rows)
            .map(|i| json!({"id": i, "name": format!("customer {i}")}).to_string())
            .collect();
        LoopResult {
            payload: payload(&items, false),
            shaped: None,
            verdict: Verdict {
                complete: true,
                likely_more_rows: false,
                requests: 0,
                item_count: rows,
                stopped_by: None,
                note: "Complete.".into(),
            },
            unmatched_fields: None,
            for_each_errors: Vec::new(),
            cache: hit.map(|(key, cached_at)| CacheLabel {
                hit: true,
                stored: false,
                mode: CacheMode::On,
                cached_at: Some(at(cached_at)),
                expires_at: Some(at(cached_at + 3600)),
                entry: Some(EntryName {
                    scope: "org:acme".into(),
                    key: key.into(),
                }),
                payload_row: None,
            }),
            stats: CallStats::default(),
        }
    }

    async fn answer(
        result: LoopResult,
        store: &Memory,
        scope: &ResultScope,
        now: DateTime<Utc>,
        hits: &StoredHits,
    ) -> (String, Guarded) {
        let g = guard(result, SizeBudget::default(), store, scope, now, hits)
            .await
            .unwrap();
        let id = g
            .stored
            .as_ref()
            .expect("a complete walk is stored")
            .id
            .to_string();
        let said: Value = serde_json::from_str(&g.text).unwrap();
        assert_eq!(
            said["_resultId"],
            id.as_str(),
            "the answer names its result"
        );
        (id, g)
    }

    #[tokio::test]
    async fn the_same_hit_in_the_same_thread_names_the_result_stored_for_it() {
        let (store, hits, t1) = (Memory::default(), StoredHits::default(), thread("t1"));
        let (first, g1) = answer(walk(5, Some(("k", 0))), &store, &t1, at(10), &hits).await;
        let (again, g2) = answer(walk(5, Some(("k", 0))), &store, &t1, at(69), &hits).await;
        assert_eq!(first, again);
        assert_eq!(g1.text, g2.text);
        assert_eq!(g1.stored, g2.stored);
        assert_eq!(store.kept(), 1, "stored once");
        // The stored result is there for the thread, whole.
        let kept = find(&store, &t1, &again, at(69)).await.unwrap();
        assert_eq!(kept.payload.items().len(), 5);
    }

    #[tokio::test]
    async fn anything_that_differs_stores_anew() {
        let (store, hits, t1) = (Memory::default(), StoredHits::default(), thread("t1"));
        let (first, _) = answer(walk(5, Some(("k", 0))), &store, &t1, at(10), &hits).await;
        let others = [
            // Past the window.
            (walk(5, Some(("k", 0))), thread("t1"), at(71)),
            // Another thread.
            (walk(5, Some(("k", 0))), thread("t2"), at(11)),
            // Another cache entry.
            (walk(5, Some(("other", 0))), thread("t1"), at(12)),
            // The entry cached again since.
            (walk(5, Some(("k", 5))), thread("t1"), at(13)),
            // Other rows said.
            (walk(6, Some(("k", 0))), thread("t1"), at(14)),
            // Not a hit: a walk of its own.
            (walk(5, None), thread("t1"), at(15)),
        ];
        let mut ids = vec![first];
        for (result, scope, now) in others {
            let (id, _) = answer(result, &store, &scope, now, &hits).await;
            assert!(!ids.contains(&id), "{id} named again");
            ids.push(id);
        }
        assert_eq!(store.kept(), ids.len());
    }

    #[tokio::test]
    async fn a_cut_answer_is_stored_for_each_answer() {
        let (store, hits, t1) = (Memory::default(), StoredHits::default(), thread("t1"));
        let budget = SizeBudget { tokens: 200 };
        let mut ids = Vec::new();
        for now in [at(1), at(2)] {
            let g = guard(walk(500, Some(("k", 0))), budget, &store, &t1, now, &hits)
                .await
                .unwrap();
            assert!(g.cut.is_some());
            ids.push(g.stored.unwrap().id.to_string());
        }
        assert_ne!(ids[0], ids[1]);
    }

    #[test]
    fn past_capacity_the_oldest_are_forgotten_first() {
        let hits = StoredHits::default();
        let link = |n: usize| ResultLink {
            id: dragnet_core::ResultId::new(),
            bytes: n,
            media_type: "application/json".into(),
        };
        let said = |n: usize| Said {
            org: "acme".into(),
            thread: format!("t{n}"),
            entry: EntryName {
                scope: "s".into(),
                key: "k".into(),
            },
            cached_at: at(0),
            text: (n as u64, n),
        };
        // All within the window, one a millisecond.
        let when = |n: usize| at(0) + Duration::milliseconds(n as i64);
        for n in 0..CAPACITY {
            hits.keep(said(n), link(n), when(n));
        }
        let now = when(CAPACITY);
        hits.keep(said(CAPACITY), link(CAPACITY), now);
        assert!(hits.find(&said(0), now).is_none(), "the oldest went");
        assert!(hits.find(&said(CAPACITY - 1), now).is_some());
        assert!(hits.find(&said(CAPACITY), now).is_some());
    }
}
