//! An incremental step at run time (`loop.incremental`): the window opens
//! at the stored watermark (or `initial`) less the lag, passed in the
//! step's `param`; after the walk, rows read again at the watermark are
//! dropped (`dedupe_by`) and the largest value of the field among the rows
//! read is the new watermark, moved only when the walk was complete. The
//! move travels with the step's record ([`WatermarkMove`](crate::watermark::WatermarkMove)) and is stored
//! after it.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use dragnet_core::items::Items;
use dragnet_core::Payload;
use dragnet_walk::fields::Projection;
use dragnet_walk::filter::{lookup, Filter};
use dragnet_walk::LoopResult;
use serde_json::{Map, Value};

use super::record::IncrementalReport;
use crate::watermark::{StoredWatermark, Watermark, WatermarkError, WatermarkSource};
use crate::workflow::model::IncrementalSpec;

/// Why an incremental step could not use its watermark.
#[derive(Debug, thiserror::Error)]
pub enum IncrementalError {
    #[error("the step's watermark could not be read: {source}")]
    Read {
        #[source]
        source: dragnet_core::ports::Error,
    },
    #[error("row {row} has no `{field}`, the step's watermark field")]
    Missing { row: usize, field: String },
    #[error("row {row}: {source}")]
    OffScale {
        row: usize,
        #[source]
        source: WatermarkError,
    },
}

/// Where one walk of an incremental step starts.
#[derive(Debug, Clone)]
pub struct Window {
    /// The stored watermark, when there is one on the step's scale.
    stored: Option<StoredWatermark>,
    from: Watermark,
    from_value: Value,
    asked: Value,
}

/// The step's window: from its stored watermark when `source` has one on
/// the step's scale, else from `initial`.
pub async fn open(
    spec: &IncrementalSpec,
    source: Option<&dyn WatermarkSource>,
    workflow: &str,
    step: &str,
) -> Result<Window, IncrementalError> {
    let stored = match source {
        Some(source) => source
            .watermark(workflow, step)
            .await
            .map_err(|source| IncrementalError::Read { source })?,
        None => None,
    };
    let on_scale = stored.filter(|s| s.scale == spec.scale).and_then(|s| {
        let mark = Watermark::read(&s.value, spec.scale).ok()?;
        Some((s, mark))
    });
    let (stored, from, from_value) = match on_scale {
        Some((s, mark)) => {
            let value = s.value.clone();
            (Some(s), mark, value)
        }
        None => {
            // `initial` was checked on its scale when the file compiled.
            let mark = Watermark::read(&spec.initial, spec.scale)
                .map_err(|source| IncrementalError::OffScale { row: 0, source })?;
            (None, mark, spec.initial.clone())
        }
    };
    let asked = match spec.lag {
        Some(lag) => from.less(lag).to_json(),
        None => from_value.clone(),
    };
    Ok(Window {
        stored,
        from,
        from_value,
        asked,
    })
}

impl Window {
    /// Puts the window's start in the call's `param`.
    pub fn pass(&self, spec: &IncrementalSpec, arguments: &mut Map<String, Value>) {
        arguments.insert(spec.param.clone(), self.asked.clone());
    }
}

/// How the rows the caller sees are shaped, to shape them again after
/// `dedupe_by` dropped some.
pub struct Shaping<'a> {
    pub filter: &'a Filter,
    pub fields: Option<&'a Projection>,
}

/// What one walk did with the watermark: its report, and the watermark
/// to store when it moved.
#[derive(Debug)]
pub struct Settled {
    pub report: IncrementalReport,
    pub moved: Option<StoredWatermark>,
}

/// Settles a walk of the step: drops rows read again (`dedupe_by`), finds
/// the largest value read and moves the watermark to it when `complete`.
pub fn settle(
    spec: &IncrementalSpec,
    window: &Window,
    result: &mut LoopResult,
    shaping: Shaping<'_>,
    complete: bool,
    (run_id, now): (&str, DateTime<Utc>),
) -> Result<Settled, IncrementalError> {
    let deduped = match (&spec.dedupe_by, &window.stored) {
        (Some(key), Some(stored)) if !stored.row_keys.is_empty() => {
            Some(drop_seen(spec, key, window, stored, result, shaping)?)
        }
        (Some(_), _) => Some(0),
        _ => None,
    };
    let field = spec.field.join(".");
    let mut highest: Option<(Watermark, Value)> = None;
    let mut at_highest: Vec<usize> = Vec::new();
    for (row, item) in result.payload.items().iter().enumerate() {
        let seen = mark_of(spec, item, row, &field)?;
        match highest.as_ref().map(|(h, _)| seen.0.mark.compare(&h.mark)) {
            Some(Ordering::Less) => {}
            Some(Ordering::Equal) => at_highest.push(row),
            _ => {
                highest = Some(seen);
                at_highest = vec![row];
            }
        }
    }
    let order = highest
        .as_ref()
        .map(|(h, _)| h.mark.compare(&window.from.mark));
    let advanced = complete && order == Some(Ordering::Greater);
    let moved = match highest {
        Some((_, value)) if complete && order != Some(Ordering::Less) => {
            let row_keys = keys_of(spec, result.payload.items(), &at_highest);
            let known = window
                .stored
                .as_ref()
                .map_or(&[][..], |s| s.row_keys.as_slice());
            let new_keys = row_keys.iter().any(|k| !known.contains(k));
            (advanced || new_keys).then(|| StoredWatermark {
                value,
                scale: spec.scale,
                row_keys,
                run_id: run_id.to_string(),
                updated_at: now,
            })
        }
        _ => None,
    };
    let to = match (&moved, advanced) {
        (Some(m), true) => m.value.clone(),
        _ => window.from_value.clone(),
    };
    Ok(Settled {
        report: IncrementalReport {
            from: window.from_value.clone(),
            asked: window.asked.clone(),
            to,
            advanced,
            deduped,
        },
        moved,
    })
}

/// Row `row`'s field on the step's scale, with the value as written.
fn mark_of(
    spec: &IncrementalSpec,
    item: &str,
    row: usize,
    field: &str,
) -> Result<(Watermark, Value), IncrementalError> {
    let value = lookup(item, &spec.field)
        .filter(|v| !v.is_null())
        .ok_or_else(|| IncrementalError::Missing {
            row,
            field: field.to_string(),
        })?;
    let mark = Watermark::read(&value, spec.scale)
        .map_err(|source| IncrementalError::OffScale { row, source })?;
    Ok((mark, value))
}

/// The keys (`dedupe_by`) of rows `rows`, sorted; none without `dedupe_by`.
fn keys_of(spec: &IncrementalSpec, items: &Items, rows: &[usize]) -> Vec<String> {
    let Some(key) = &spec.dedupe_by else {
        return Vec::new();
    };
    let mut keys: Vec<String> = rows
        .iter()
        .filter_map(|&i| items.get(i))
        .filter_map(|item| lookup(item, key))
        .map(key_text)
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

fn key_text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// Drops the rows at the stored watermark's own value whose key the walk
/// that stored it read there; the caller's rows are shaped again. How
/// many were dropped.
fn drop_seen(
    spec: &IncrementalSpec,
    key: &[String],
    window: &Window,
    stored: &StoredWatermark,
    result: &mut LoopResult,
    shaping: Shaping<'_>,
) -> Result<usize, IncrementalError> {
    let field = spec.field.join(".");
    let mut kept = Items::new();
    let mut dropped = 0;
    for (row, item) in result.payload.items().iter().enumerate() {
        let (mark, _) = mark_of(spec, item, row, &field)?;
        let seen = mark.mark.compare(&window.from.mark) == Ordering::Equal
            && lookup(item, key)
                .map(key_text)
                .is_some_and(|k| stored.row_keys.binary_search(&k).is_ok());
        match seen {
            true => dropped += 1,
            false => kept.push_text(item),
        }
    }
    if dropped == 0 {
        return Ok(0);
    }
    let payload = std::mem::replace(&mut result.payload, Payload::Items(Items::new()));
    result.payload = match payload {
        Payload::Collection { envelope, .. } => Payload::Collection {
            envelope,
            items: kept,
        },
        Payload::Items(_) => Payload::Items(kept),
        single @ Payload::Single(_) => single,
    };
    if result.shaped.is_some() {
        let (shaped, unmatched) =
            dragnet_walk::shape::shape(result.payload.items(), shaping.filter, shaping.fields);
        result.shaped = shaped;
        result.unmatched_fields = unmatched;
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use dragnet_core::budget::CallStats;
    use dragnet_core::verdict::Verdict;
    use serde_json::json;

    use super::*;
    use crate::watermark::{Lag, Scale};

    fn spec(scale: Scale, initial: Value, lag: Option<Lag>) -> IncrementalSpec {
        IncrementalSpec {
            field: vec!["seq".into()],
            param: "after".into(),
            scale,
            initial,
            lag,
            dedupe_by: Some(vec!["id".into()]),
        }
    }

    fn result(rows: &[Value]) -> LoopResult {
        let mut items = Items::new();
        for row in rows {
            items.push_text(&row.to_string());
        }
        LoopResult {
            payload: Payload::Items(items),
            shaped: None,
            verdict: Verdict {
                complete: true,
                likely_more_rows: false,
                requests: 1,
                item_count: rows.len(),
                stopped_by: None,
                note: String::new(),
            },
            unmatched_fields: None,
            for_each_errors: Vec::new(),
            cache: None,
            stats: CallStats::default(),
        }
    }

    fn stored(value: Value, keys: &[&str]) -> StoredWatermark {
        StoredWatermark {
            value,
            scale: Scale::Number,
            row_keys: keys.iter().map(|k| k.to_string()).collect(),
            run_id: "run_1".into(),
            updated_at: DateTime::UNIX_EPOCH,
        }
    }

    struct Fixed(Option<StoredWatermark>);

    impl WatermarkSource for Fixed {
        fn watermark<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
        ) -> dragnet_core::ports::BoxFuture<
            'a,
            Result<Option<StoredWatermark>, dragnet_core::ports::Error>,
        > {
            let stored = self.0.clone();
            Box::pin(async move { Ok(stored) })
        }
    }

    fn no_shaping() -> Shaping<'static> {
        static NONE: std::sync::OnceLock<Filter> = std::sync::OnceLock::new();
        Shaping {
            filter: NONE.get_or_init(Filter::default),
            fields: None,
        }
    }

    #[tokio::test]
    async fn a_numeric_watermark_asks_less_its_lag_drops_what_it_read_and_moves_on_proof() {
        let spec = spec(Scale::Number, json!(0), Some(Lag::Number(2.0)));
        let source = Fixed(Some(stored(json!(10), &["a"])));
        let window = open(&spec, Some(&source), "wf", "step").await.unwrap();
        let mut arguments = Map::new();
        window.pass(&spec, &mut arguments);
        assert_eq!(arguments["after"], json!(8));
        // Row `a` at 10 was read there: dropped; `b` at 10 is new; 12 moves it.
        let rows = [
            json!({"id": "a", "seq": 10}),
            json!({"id": "b", "seq": 10}),
            json!({"id": "c", "seq": 12}),
            json!({"id": "d", "seq": 9}),
        ];
        let mut walked = result(&rows);
        let now = ("run_2", DateTime::UNIX_EPOCH);
        let settled = settle(&spec, &window, &mut walked, no_shaping(), true, now).unwrap();
        assert_eq!(walked.payload.items().len(), 3);
        assert_eq!(settled.report.deduped, Some(1));
        assert_eq!(settled.report.to, json!(12));
        assert!(settled.report.advanced);
        let moved = settled.moved.unwrap();
        assert_eq!(
            (moved.value, moved.row_keys),
            (json!(12), vec!["c".to_string()])
        );
        // The same walk cut short moves nothing.
        let mut cut = result(&rows);
        let settled = settle(&spec, &window, &mut cut, no_shaping(), false, now).unwrap();
        assert!(!settled.report.advanced && settled.moved.is_none());
        assert_eq!(settled.report.to, json!(10));
        // A row without the field, or off the scale, fails naming it.
        let mut bad = result(&[json!({"id": "e"}), json!({"id": "f", "seq": "x"})]);
        let e = settle(&spec, &window, &mut bad, no_shaping(), true, now).unwrap_err();
        assert_eq!(
            e.to_string(),
            "row 0 has no `seq`, the step's watermark field"
        );
        let mut bad = result(&[json!({"id": "f", "seq": "x"})]);
        let e = settle(&spec, &window, &mut bad, no_shaping(), true, now).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("row 0: the watermark field holds \"x\""),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_new_key_at_the_same_value_is_kept_and_joined_without_advancing() {
        let spec = spec(Scale::Number, json!(0), None);
        let source = Fixed(Some(stored(json!(10), &["a"])));
        let window = open(&spec, Some(&source), "wf", "step").await.unwrap();
        let mut walked = result(&[json!({"id": "a", "seq": 10}), json!({"id": "b", "seq": 10})]);
        let now = ("run_2", DateTime::UNIX_EPOCH);
        let settled = settle(&spec, &window, &mut walked, no_shaping(), true, now).unwrap();
        assert!(!settled.report.advanced);
        assert_eq!(settled.moved.unwrap().row_keys, vec!["b".to_string()]);
        // A stored watermark on another scale is not read: `initial` is.
        let time = spec.clone();
        let source = Fixed(Some(StoredWatermark {
            scale: Scale::Time,
            ..stored(json!("2026-01-01"), &[])
        }));
        let window = open(&time, Some(&source), "wf", "step").await.unwrap();
        let mut arguments = Map::new();
        window.pass(&time, &mut arguments);
        assert_eq!(arguments["after"], json!(0));
    }
}
