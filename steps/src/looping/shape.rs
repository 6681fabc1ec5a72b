//! Shaping merged rows for the caller: `_filter` first (on the full rows,
//! so a clause may name a field the projection drops), then `_fields`. Each
//! item's top level is parsed once and shared by every clause and the
//! projection; the rows written are never parsed again. A large set is
//! shaped in contiguous chunks on several threads and the chunks' rows are
//! joined in order, so the result is the same row for row.

use std::ops::Range;

use super::fields::{Matched, Projection, UnmatchedFields};
use super::filter::Filter;
use crate::items::Items;
use crate::json;
use crate::json_rows::Rows;

/// Below this many item bytes a set is shaped on the calling thread: a
/// thread costs more than it saves on a small page.
const PARALLEL_BYTES: usize = 512 * 1024;
/// At most this many threads shape one set.
const MAX_THREADS: usize = 4;

/// The rows the caller sees, when a filter or projection was asked for
/// (`None` means "the rows as they are"), and the paths that matched nothing.
pub fn shape(
    items: &Items,
    filter: &Filter,
    fields: Option<&Projection>,
) -> (Option<Rows>, Option<UnmatchedFields>) {
    if filter.is_empty() && fields.is_none() {
        return (None, None);
    }
    let parts = chunks(items);
    let shaped: Vec<(Rows, Option<Matched>)> = if parts.len() <= 1 {
        vec![shape_range(items, 0..items.len(), filter, fields)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .into_iter()
                .map(|range| scope.spawn(move || shape_range(items, range, filter, fields)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    // Shaping does not panic on any input; should it, the
                    // panic belongs to the caller (the step's own guard).
                    h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
                })
                .collect()
        })
    };
    let mut rows = Rows::default();
    let mut matched = fields.map(Projection::matched);
    for (part, part_matched) in shaped {
        rows.append(part);
        if let (Some(m), Some(p)) = (matched.as_mut(), part_matched) {
            m.merge(&p);
        }
    }
    let unmatched = match (fields, &matched) {
        (Some(projection), Some(m)) => projection.unmatched(m, items.iter()),
        _ => None,
    };
    (Some(rows), unmatched)
}

/// Contiguous ranges of item positions, one per thread; a single range when
/// the set is too small to pay for threads.
fn chunks(items: &Items) -> Vec<Range<usize>> {
    let n = items.len();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get().min(MAX_THREADS));
    if threads < 2 || n < 2 * threads || items.item_bytes() < PARALLEL_BYTES {
        return vec![0..n];
    }
    let size = n.div_ceil(threads);
    (0..n).step_by(size).map(|s| s..(s + size).min(n)).collect()
}

fn shape_range(
    items: &Items,
    range: Range<usize>,
    filter: &Filter,
    fields: Option<&Projection>,
) -> (Rows, Option<Matched>) {
    let mut rows = Rows::default();
    let mut matched = fields.map(Projection::matched);
    for item in items.range(range) {
        let obj = json::object(item);
        if !filter.is_empty() && !filter.matches_parsed(item, obj.as_ref()) {
            continue;
        }
        match (fields, matched.as_mut()) {
            (Some(projection), Some(m)) => {
                projection.project_into(item, obj.as_ref(), &mut rows, m)
            }
            _ => rows.push_text(item),
        }
    }
    (rows, matched)
}
