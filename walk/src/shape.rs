//! Shaping merged rows for the caller: `_filter` first (on the full rows,
//! so a clause may name a field the projection drops), then `_fields`. Each
//! item's top level is parsed once and shared by every clause and the
//! projection; the rows written are never parsed again. A large set is
//! shaped in contiguous chunks on several threads and the chunks' rows are
//! joined in order, so the result is the same row for row.

use std::ops::Range;

use crate::fields::{Matched, Projection, UnmatchedFields};
use crate::filter::Filter;
use dragnet_core::items::Items;
use dragnet_core::json_rows::Rows;
use dragnet_core::json_scan;

/// Below this many item bytes a set is shaped on the calling thread: a
/// thread costs more than it saves on a small page.
const PARALLEL_BYTES: usize = 512 * 1024;

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
    let shaped = items.map_chunks(PARALLEL_BYTES, |range| {
        shape_range(items, range, filter, fields)
    });
    let mut rows = Rows::default();
    let mut matched = fields.map(Projection::matched);
    // The first part is kept and grown once to hold the others, so the
    // joined rows are not copied more than once.
    let rest = shaped.iter().skip(1);
    let (more_rows, more_bytes) =
        rest.fold((0, 0), |(n, b), (r, _)| (n + r.len(), b + r.text_len()));
    for (i, (part, part_matched)) in shaped.into_iter().enumerate() {
        if i == 1 {
            rows.reserve(more_rows, more_bytes);
        }
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

fn shape_range(
    items: &Items,
    range: Range<usize>,
    filter: &Filter,
    fields: Option<&Projection>,
) -> (Rows, Option<Matched>) {
    let mut shaper = Shaper::new(filter, fields);
    for item in items.range(range) {
        shaper.item(item);
    }
    (shaper.rows, shaper.matched)
}

/// Shapes items one at a time: a range of a set's, or a page's while it
/// streams in (`crate::walk`'s streamed page).
#[derive(Debug)]
pub struct Shaper<'s> {
    filter: &'s Filter,
    fields: Option<&'s Projection>,
    /// The rows written so far.
    pub rows: Rows,
    /// Which projected paths matched an item so far.
    pub matched: Option<Matched>,
}

impl<'s> Shaper<'s> {
    pub fn new(filter: &'s Filter, fields: Option<&'s Projection>) -> Self {
        Shaper {
            filter,
            fields,
            rows: Rows::default(),
            matched: fields.map(Projection::matched),
        }
    }

    /// Shapes one item (JSON known valid): a row when it passes the filter.
    pub fn item(&mut self, item: &str) {
        let obj = json_scan::object(item);
        if !self.filter.is_empty() && !self.filter.matches_parsed(item, obj.as_ref()) {
            return;
        }
        match (self.fields, self.matched.as_mut()) {
            (Some(projection), Some(m)) => {
                projection.project_into(item, obj.as_ref(), &mut self.rows, m)
            }
            _ => self.rows.push_text(item),
        }
    }

    /// Starts again with no rows and nothing matched.
    pub fn clear(&mut self) {
        *self = Shaper::new(self.filter, self.fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A set large enough to be shaped on several threads, where only the
    /// very last item has `rare`.
    fn large_set() -> Items {
        let n = 20_000;
        let mut items = Items::new();
        for i in 0..n {
            let rare = if i == n - 1 { r#","rare":1"# } else { "" };
            items.push_text(&format!(
                r#"{{"id":{i},"total":{},"customer":{{"name":"c{i}"}}{rare}}}"#,
                i % 300
            ));
        }
        assert!(items.item_bytes() >= PARALLEL_BYTES);
        items
    }

    #[test]
    fn parallel_chunks_give_the_rows_of_one_pass_in_order() {
        let items = large_set();
        if dragnet_core::items::threads() > 1 {
            assert!(
                items.chunks(PARALLEL_BYTES).len() > 1,
                "the set is shaped in chunks"
            );
        }
        let filter = Filter::from_json(&json!([{"field":"total","op":"gt","value":100}])).unwrap();
        let paths = [
            "id".to_string(),
            "customer.name".to_string(),
            "rare".to_string(),
        ];
        let projection = Projection::new(&paths).unwrap();
        let (rows, unmatched) = shape(&items, &filter, Some(&projection));
        let (one_pass, _) = shape_range(&items, 0..items.len(), &filter, Some(&projection));
        let rows = rows.unwrap();
        assert_eq!(rows, one_pass);
        assert_eq!(rows.len(), (0..20_000).filter(|i| i % 300 > 100).count());
        assert_eq!(
            rows.get(0),
            Some(r#"{"id":101,"customer":{"name":"c101"},"rare":null}"#)
        );
        // `rare` matched only in the last chunk: it is still matched.
        assert!(unmatched.is_none(), "{unmatched:?}");
    }

    #[test]
    fn small_sets_stay_on_the_calling_thread() {
        let items: Items = [r#"{"id":1}"#, r#"{"id":2}"#].into_iter().collect();
        assert_eq!(items.chunks(PARALLEL_BYTES), vec![0..2]);
        assert!(Items::new().chunks(PARALLEL_BYTES).is_empty());
        let filter = Filter::from_json(&json!([{"field":"id","op":"eq","value":2}])).unwrap();
        let (rows, _) = shape(&items, &filter, None);
        assert_eq!(
            rows.unwrap().iter().collect::<Vec<_>>(),
            vec![r#"{"id":2}"#]
        );
        let (rows, _) = shape(&Items::new(), &filter, None);
        assert!(rows.unwrap().is_empty());
    }
}
