//! Shaping merged rows for the caller: `_filter` first (on the full rows,
//! so a clause may name a field the projection drops), then `_fields`. Each
//! item's top level is parsed once and shared by every clause and the
//! projection; the rows written are never parsed again.

use super::fields::{Projection, UnmatchedFields};
use super::filter::Filter;
use crate::json::{self, RawItem};
use crate::json_rows::Rows;

/// The rows the caller sees, when a filter or projection was asked for
/// (`None` means "the rows as they are"), and the paths that matched nothing.
pub fn shape(
    items: &[RawItem],
    filter: &Filter,
    fields: Option<&Projection>,
) -> (Option<Rows>, Option<UnmatchedFields>) {
    if filter.is_empty() && fields.is_none() {
        return (None, None);
    }
    let mut rows = Rows::default();
    let mut matched = fields.map(Projection::matched);
    for item in items {
        let obj = json::object(item);
        if !filter.is_empty() && !filter.matches_parsed(item, obj.as_ref()) {
            continue;
        }
        match (fields, matched.as_mut()) {
            (Some(projection), Some(m)) => {
                projection.project_into(item, obj.as_ref(), &mut rows, m)
            }
            _ => rows.push_text(item.get()),
        }
    }
    let unmatched = match (fields, &matched) {
        (Some(projection), Some(m)) => projection.unmatched(m, items.iter().map(|i| i.as_ref())),
        _ => None,
    };
    (Some(rows), unmatched)
}
