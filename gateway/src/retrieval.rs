//! The retrieval tools over stored results.
//!
//! `queryToolResult {resultId, fields?, filter?, offset?, limit?}` reads the
//! stored items: the filter runs on the whole stored set first (a field
//! need not be among those projected when the result was made), then the
//! projection, then the page (`offset` from 0, `limit` 1 to 500, 50 when
//! absent). The answer says how many matched, what it returns and the next
//! offset.
//!
//! `fetchToolResult {resultId, offset?, length?}` returns the stored text
//! itself in character slices (`offset` from 0, `length` 1 to 100,000,
//! 20,000 when absent), for a result without items or to read it as it was.

use chrono::{DateTime, Utc};
use dragnet_core::json;
use dragnet_core::Payload;
use dragnet_core::{ResultScope, ResultStore};
use dragnet_walk::filter::Filter;
use dragnet_walk::options::parse_fields;
use dragnet_walk::shape::shape;
use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::guard::SizeBudget;
use crate::results::find;

/// The page size of `queryToolResult` when none is asked for, and the most.
pub const QUERY_LIMIT_DEFAULT: usize = 50;
pub const QUERY_LIMIT_MAX: usize = 500;
/// The slice length of `fetchToolResult` when none is asked for, and the most.
pub const FETCH_LENGTH_DEFAULT: usize = 20_000;
pub const FETCH_LENGTH_MAX: usize = 100_000;

/// Room kept for an answer's keys and note around its rows.
const ANSWER_FRAME: usize = 600;

/// A non-negative integer argument within `1..=max` (or `0..` for
/// offsets), `default` when absent.
fn count(
    args: &Map<String, Value>,
    name: &str,
    default: usize,
    max: Option<usize>,
) -> Result<usize, Error> {
    let Some(v) = args.get(name).filter(|v| !v.is_null()) else {
        return Ok(default);
    };
    let n = v.as_u64().ok_or_else(|| {
        Error::bad(
            name,
            format!("expects a whole number of at least 0, got {v}"),
        )
    })?;
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    match max {
        Some(max) if n == 0 || n > max => {
            Err(Error::bad(name, format!("expects 1 to {max}, got {n}")))
        }
        _ => Ok(n),
    }
}

fn result_id(args: &Map<String, Value>) -> Result<&str, Error> {
    args.get("resultId")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::bad("resultId", "give the `_resultId` a tool call answered with"))
}

/// `queryToolResult`: the answer's JSON text.
pub async fn query(
    store: &dyn ResultStore<Payload>,
    scope: &ResultScope,
    args: &Map<String, Value>,
    budget: SizeBudget,
    now: DateTime<Utc>,
) -> Result<String, Error> {
    let id = result_id(args)?;
    let fields = args
        .get("fields")
        .filter(|v| !v.is_null())
        .map(parse_fields)
        .transpose()
        .map_err(|e| Error::bad("fields", e.to_string()))?;
    let filter = match args.get("filter").filter(|v| !v.is_null()) {
        Some(v) => Filter::from_json(v).map_err(|e| Error::bad("filter", e.to_string()))?,
        None => Filter::default(),
    };
    let offset = count(args, "offset", 0, None)?;
    let limit = count(args, "limit", QUERY_LIMIT_DEFAULT, Some(QUERY_LIMIT_MAX))?;
    let stored = find(store, scope, id, now).await?;
    if matches!(stored.payload, Payload::Single(_)) {
        return Err(Error::NoItems { id: id.to_string() });
    }
    let items = stored.payload.items();
    let (shaped, unmatched) = shape(items, &filter, fields.as_ref());
    let total = shaped.as_ref().map_or(items.len(), |r| r.len());
    let row = |i: usize| match &shaped {
        Some(rows) => rows.get(i),
        None => items.get(i),
    };
    let start = offset.min(total);
    let asked = offset.saturating_add(limit).min(total);
    // The answer is held to the size budget too: as many rows as fit.
    let room = budget.chars().saturating_sub(ANSWER_FRAME);
    let mut used = 0usize;
    let mut end = start;
    while end < asked {
        let cost = row(end).map_or(4, str::len) + 1;
        if used + cost > room {
            break;
        }
        used += cost;
        end += 1;
    }
    let cut_to_fit = end < asked;
    let mut out = String::from("{\"resultId\":");
    json::write_str(&mut out, id);
    out.push_str(",\"items\":[");
    for (n, i) in (start..end).enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(row(i).unwrap_or("null"));
    }
    let returned = end - start;
    // A row too large to answer with is passed over, and the note says so.
    let oversize = cut_to_fit && returned == 0;
    let next = match oversize {
        true => (start + 1 < total).then_some(start + 1),
        false => (end < total).then_some(end),
    };
    let note = match (next, filter.is_empty()) {
        _ if oversize => format!(
            "Row {start} alone is larger than the size budget: ask for fewer fields, or read \
             the raw text with fetchToolResult.{}",
            next.map_or(String::new(), |n| format!(
                " The next row is at offset {n}."
            ))
        ),
        (Some(next), _) if cut_to_fit => format!(
            "Cut to {returned} rows ({start}–{}) to fit the size budget; call again with offset \
             {next} for the next ones (or ask for fewer fields).",
            end - 1
        ),
        (Some(next), _) => format!(
            "Items {}–{} of {total} {}; call again with offset {next} for the next ones.",
            offset,
            end.saturating_sub(1),
            if filter.is_empty() {
                "stored"
            } else {
                "matching"
            },
        ),
        (None, true) => format!("All {returned} of {total} stored items from offset {offset}."),
        (None, false) => format!(
            "All {returned} of {total} matching items from offset {offset} (of {} stored).",
            items.len()
        ),
    };
    let tail = json!({
        "offset": offset,
        "returned": returned,
        "total": total,
        "stored": items.len(),
        "nextOffset": next,
        "_note": note,
    });
    out.push_str("],");
    // The tail's fields after `items`, written from its own text.
    let tail = tail.to_string();
    out.push_str(&tail[1..tail.len() - 1]);
    if let Some(u) = unmatched {
        out.push_str(",\"_unmatchedFields\":");
        out.push_str(&json!({"fields": u.fields, "availableKeys": u.available_keys}).to_string());
    }
    out.push('}');
    Ok(out)
}

/// `fetchToolResult`: the answer's JSON text.
pub async fn fetch(
    store: &dyn ResultStore<Payload>,
    scope: &ResultScope,
    args: &Map<String, Value>,
    now: DateTime<Utc>,
) -> Result<String, Error> {
    let id = result_id(args)?;
    let offset = count(args, "offset", 0, None)?;
    let length = count(args, "length", FETCH_LENGTH_DEFAULT, Some(FETCH_LENGTH_MAX))?;
    let stored = find(store, scope, id, now).await?;
    let text = stored.text.as_str();
    let total = text.chars().count();
    let byte_at = |chars: usize| {
        text.char_indices()
            .nth(chars)
            .map_or(text.len(), |(b, _)| b)
    };
    let start = offset.min(total);
    let end = start.saturating_add(length).min(total);
    let slice = &text[byte_at(start)..byte_at(end)];
    let next = (end < total).then_some(end);
    Ok(json!({
        "resultId": id,
        "offset": start,
        "length": end - start,
        "totalLength": total,
        "nextOffset": next,
        "text": slice,
    })
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{payload, Memory};
    use crate::results::{keep, StoredResult};
    use dragnet_core::ResultId;

    fn orders(n: usize) -> StoredResult {
        let items: Vec<String> = (0..n)
            .map(|i| {
                json!({"id": i, "status": if i % 3 == 0 {"open"} else {"paid"}, "total": i * 10})
                    .to_string()
            })
            .collect();
        StoredResult {
            text: format!("{{\"data\":[{}]}}", items.join(",")),
            form: dragnet_core::Form::json(),
            payload: payload(&items, false),
        }
    }

    fn scope(org: &str, thread: &str) -> ResultScope {
        ResultScope {
            org: org.into(),
            thread: thread.into(),
        }
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap()
    }

    #[tokio::test]
    async fn a_query_filters_the_whole_set_then_projects_then_pages() {
        let store = Memory::default();
        let me = scope("acme", "t1");
        let id = keep(&store, &me, &orders(100), now()).await.unwrap();
        let q = args(json!({
            "resultId": id.as_str(),
            "filter": [{"field": "status", "op": "eq", "value": "open"}],
            "fields": ["id"],
            "limit": 10,
            "offset": 30,
        }));
        let answer: Value = serde_json::from_str(
            &query(&store, &me, &q, SizeBudget::default(), now())
                .await
                .unwrap(),
        )
        .unwrap();
        // 34 open orders (ids 0, 3, … 99); the page from 30 holds the last 4.
        assert_eq!(answer["total"], 34);
        assert_eq!(answer["returned"], 4);
        assert_eq!(answer["items"][0], json!({"id": 90}));
        assert!(answer["nextOffset"].is_null());
        let first = args(json!({"resultId": id.as_str(), "limit": 5}));
        let page: Value = serde_json::from_str(
            &query(&store, &me, &first, SizeBudget::default(), now())
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(page["nextOffset"], 5);
        assert_eq!(page["stored"], 100);
        assert!(page["_note"].as_str().unwrap().contains("offset 5"));
        let bad = args(json!({"resultId": id.as_str(), "limit": 0}));
        assert!(matches!(
            query(&store, &me, &bad, SizeBudget::default(), now()).await,
            Err(Error::BadArgument { .. })
        ));
    }

    #[tokio::test]
    async fn a_query_answer_is_held_to_the_size_budget() {
        let store = Memory::default();
        let me = scope("acme", "t1");
        let id = keep(&store, &me, &orders(1000), now()).await.unwrap();
        let budget = SizeBudget { tokens: 400 };
        let q = args(json!({"resultId": id.as_str(), "limit": 500}));
        let text = query(&store, &me, &q, budget, now()).await.unwrap();
        assert!(crate::guard::estimate_tokens(&text) <= budget.tokens);
        let answer: Value = serde_json::from_str(&text).unwrap();
        let n = answer["returned"].as_u64().unwrap();
        assert!(n > 5 && n < 500, "{n}");
        assert_eq!(answer["nextOffset"], n);
        assert!(answer["_note"].as_str().unwrap().contains("size budget"));
    }

    #[tokio::test]
    async fn another_scope_reads_as_unknown_and_only_the_owner_sees_it_expire() {
        let store = Memory::default();
        let me = scope("acme", "t1");
        let id = keep(&store, &me, &orders(3), now()).await.unwrap();
        let q = args(json!({"resultId": id.as_str()}));
        for other in [scope("acme", "t2"), scope("bravo", "t1")] {
            let e = query(&store, &other, &q, SizeBudget::default(), now())
                .await
                .unwrap_err();
            let never = query(
                &store,
                &other,
                &args(json!({"resultId": ResultId::new().as_str()})),
                SizeBudget::default(),
                now(),
            )
            .await
            .unwrap_err();
            assert_eq!(e.kind(), never.kind());
            assert_eq!(e.kind(), "unknown_result");
        }
        let later = now() + chrono::Duration::minutes(16);
        let e = fetch(&store, &me, &q, later).await.unwrap_err();
        assert_eq!(e.kind(), "expired_result");
        assert!(e.to_string().contains("call the tool again"));
        let e = fetch(&store, &scope("bravo", "t1"), &q, later)
            .await
            .unwrap_err();
        assert_eq!(
            e.kind(),
            "unknown_result",
            "another scope never learns it expired"
        );
        let junk = args(json!({"resultId": "../../etc/passwd"}));
        assert_eq!(
            query(&store, &me, &junk, SizeBudget::default(), now())
                .await
                .unwrap_err()
                .kind(),
            "unknown_result"
        );
    }

    #[tokio::test]
    async fn fetch_slices_by_characters_and_says_where_to_go_on() {
        let store = Memory::default();
        let me = scope("acme", "t1");
        let result = StoredResult {
            text: "ab€déf".into(),
            form: dragnet_core::Form::json(),
            payload: payload(&[], true),
        };
        let id = keep(&store, &me, &result, now()).await.unwrap();
        let f = |offset: u64, length: u64| {
            args(json!({"resultId": id.as_str(), "offset": offset, "length": length}))
        };
        let a: Value =
            serde_json::from_str(&fetch(&store, &me, &f(1, 3), now()).await.unwrap()).unwrap();
        assert_eq!(a["text"], "b€d");
        assert_eq!(a["nextOffset"], 4);
        assert_eq!(a["totalLength"], 6);
        let b: Value =
            serde_json::from_str(&fetch(&store, &me, &f(4, 100), now()).await.unwrap()).unwrap();
        assert_eq!(b["text"], "éf");
        assert!(b["nextOffset"].is_null());
        let past: Value =
            serde_json::from_str(&fetch(&store, &me, &f(50, 5), now()).await.unwrap()).unwrap();
        assert_eq!(past["text"], "");
        // A result without items is not queried; it says to fetch.
        let e = query(
            &store,
            &me,
            &args(json!({"resultId": id.as_str()})),
            SizeBudget::default(),
            now(),
        )
        .await
        .unwrap_err();
        assert_eq!(e.kind(), "no_items");
        assert!(e.to_string().contains("fetchToolResult"));
    }
}
