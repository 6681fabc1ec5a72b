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
