//! Shaping merged rows for the caller: `_filter` first (on the full rows,
//! so a clause may name a field the projection drops), then `_fields`.

use serde_json::value::RawValue;

use super::fields::{Projection, UnmatchedFields};
use super::filter::Filter;
use crate::json::RawItem;

/// The rows the caller sees, when a filter or projection was asked for
/// (`None` means "the rows as they are"), and the paths that matched nothing.
pub fn shape(
    items: &[RawItem],
    filter: &Filter,
    fields: Option<&Projection>,
) -> (Option<Vec<RawItem>>, Option<UnmatchedFields>) {
    let kept = items.iter().map(|i| i.as_ref());
    if filter.is_empty() {
        return match fields {
            Some(projection) => {
                let (out, unmatched) = projection.apply(kept);
                (Some(out), unmatched)
            }
            None => (None, None),
        };
    }
    let matching = kept.filter(|i| filter.matches(i));
    match fields {
        Some(projection) => {
            let (out, unmatched) = projection.apply(matching);
            (Some(out), unmatched)
        }
        None => (Some(matching.map(RawValue::to_owned).collect()), None),
    }
}
