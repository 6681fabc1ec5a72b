//! The items of a collection, held without copying: every page body that
//! contributed items is kept once, whole, and each item is a byte range into
//! one of those bodies. Items this program writes itself (a fan-out's tagged
//! rows, items read back from the cache) go into bodies of their own the
//! same way. So a walk holds the bytes it fetched once, plus 12 bytes per
//! item, and nothing re-validates an item on the way out: every range was
//! cut from text a JSON parser had already accepted.

use std::ops::Range;
use std::sync::OnceLock;

use serde_json::value::RawValue;

/// Where one item lies: which body, and the byte range inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    body: u32,
    start: u32,
    end: u32,
}

/// A list of JSON items as ranges into kept bodies.
#[derive(Debug, Default, Clone)]
pub struct Items {
    bodies: Vec<String>,
    spans: Vec<Span>,
    /// The body that items written here are appended to, when one is open.
    written: Option<u32>,
}

/// A body kept by `Items::keep_body`, to add ranges into.
pub struct KeptBody {
    index: u32,
}

impl Items {
    pub const fn new() -> Items {
        Items {
            bodies: Vec::new(),
            spans: Vec::new(),
            written: None,
        }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Keeps the first `n` items (their bodies stay).
    pub fn truncate(&mut self, n: usize) {
        self.spans.truncate(n);
    }

    /// Item `i` as JSON text.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.spans.get(i).map(|s| self.text(*s))
    }

    fn text(&self, span: Span) -> &str {
        // Spans are only made from char-boundary ranges checked on entry.
        self.bodies[span.body as usize]
            .get(span.start as usize..span.end as usize)
            .unwrap_or("null")
    }

    /// Every item as JSON text, in order.
    pub fn iter(&self) -> Iter<'_> {
        self.range(0..self.len())
    }

    /// The items at positions `range` (clamped to the list).
    pub fn range(&self, range: Range<usize>) -> Iter<'_> {
        let end = range.end.min(self.len());
        let start = range.start.min(end);
        Iter {
            items: self,
            spans: self.spans[start..end].iter(),
        }
    }

    /// The bytes of every item together (not counting the bodies around them).
    pub fn item_bytes(&self) -> usize {
        self.spans.iter().map(|s| (s.end - s.start) as usize).sum()
    }

    /// Keeps `body` (a page the caller split) so that ranges into it can be
    /// added with `push_range`. The body comes back when it is too large
    /// for the compact ranges (over 4 GiB); the caller copies its items.
    pub fn keep_body(&mut self, body: String) -> Result<KeptBody, String> {
        if u32::try_from(body.len()).is_err() {
            return Err(body);
        }
        let Ok(index) = u32::try_from(self.bodies.len()) else {
            return Err(body);
        };
        self.bodies.push(body);
        Ok(KeptBody { index })
    }

    /// Adds the item at `range` of a kept body. A range that is out of
    /// bounds or not on character boundaries is refused (`false`).
    pub fn push_range(&mut self, body: &KeptBody, range: Range<usize>) -> bool {
        let text = &self.bodies[body.index as usize];
        if text.get(range.clone()).is_none() {
            return false;
        }
        // Both ends fit: the body's length was checked in `keep_body`.
        self.spans.push(Span {
            body: body.index,
            start: range.start as u32,
            end: range.end as u32,
        });
        true
    }

    /// Keeps `body` and adds the items at `ranges` of it, in order; in the
    /// rare case of a body past 4 GiB the items are copied instead. Ranges
    /// that do not fit the body are skipped (`ranges_of` makes none).
    pub fn keep_ranges(&mut self, body: String, ranges: &[Range<usize>]) {
        if ranges.is_empty() {
            return;
        }
        match self.keep_body(body) {
            Ok(kept) => {
                for range in ranges {
                    self.push_range(&kept, range.clone());
                }
            }
            Err(body) => {
                for range in ranges {
                    if let Some(text) = body.get(range.clone()) {
                        self.push_text(text);
                    }
                }
            }
        }
    }

    /// Adds one item written by `write`, which must append exactly one JSON
    /// value (text this program built from validated parts).
    pub fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        let index = self.writable();
        let body = &mut self.bodies[index as usize];
        let start = body.len();
        write(body);
        let end = body.len();
        self.spans.push(Span {
            body: index,
            start: start as u32,
            end: end as u32,
        });
    }

    /// Adds one item that is already JSON text (a copy is kept).
    pub fn push_text(&mut self, text: &str) {
        self.push_with(|out| out.push_str(text));
    }

    /// The body written items go to, opening a new one when there is none
    /// or the open one would pass the compact ranges' limit soon.
    fn writable(&mut self) -> u32 {
        const LIMIT: usize = u32::MAX as usize / 2;
        match self.written {
            Some(i) if self.bodies[i as usize].len() < LIMIT => i,
            _ => {
                let i = self.bodies.len() as u32;
                self.bodies.push(String::new());
                self.written = Some(i);
                i
            }
        }
    }

    /// Moves every item of `other` to the end of this list.
    pub fn append(&mut self, other: Items) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() && self.bodies.is_empty() {
            *self = other;
            return;
        }
        let shift = self.bodies.len() as u32;
        self.bodies.extend(other.bodies);
        self.spans.extend(other.spans.into_iter().map(|s| Span {
            body: s.body + shift,
            ..s
        }));
        // Later writes go to a fresh body rather than into one of `other`'s.
        self.written = None;
    }

    /// Builds a list from one body and where each item ends in it, starting
    /// at `start` (how the cache stores a set). `None` when an end goes
    /// backwards, past the body or off a character boundary.
    pub fn from_ends(
        body: String,
        start: usize,
        ends: impl Iterator<Item = usize>,
    ) -> Option<Items> {
        u32::try_from(body.len()).ok()?;
        let mut spans = Vec::with_capacity(ends.size_hint().0);
        let mut from = start;
        for end in ends {
            body.get(from..end)?;
            spans.push(Span {
                body: 0,
                start: from as u32,
                end: end as u32,
            });
            from = end;
        }
        Some(Items {
            bodies: vec![body],
            spans,
            written: None,
        })
    }

    /// Contiguous ranges of item positions, one per thread (`threads`),
    /// when the items hold at least `min_bytes`; else one range (none for
    /// an empty list). Below that size a thread costs more than it saves.
    pub fn chunks(&self, min_bytes: usize) -> Vec<Range<usize>> {
        let n = self.len();
        let threads = threads();
        let size = if threads < 2 || n < 2 * threads || self.item_bytes() < min_bytes {
            n
        } else {
            n.div_ceil(threads)
        };
        (0..n)
            .step_by(size.max(1))
            .map(|s| s..(s + size).min(n))
            .collect()
    }

    /// `work` over each of `chunks(min_bytes)`, each on its own thread
    /// (on the calling thread when there is one), results in order. A
    /// panic in `work` is the caller's, as if it had run there.
    pub fn map_chunks<R: Send>(
        &self,
        min_bytes: usize,
        work: impl Fn(Range<usize>) -> R + Sync,
    ) -> Vec<R> {
        let parts = self.chunks(min_bytes);
        if parts.len() <= 1 {
            return vec![work(0..self.len())];
        }
        let work = &work;
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .into_iter()
                .map(|range| scope.spawn(move || work(range)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    /// The bytes held, bodies and ranges together (for memory reports).
    pub fn held_bytes(&self) -> usize {
        self.bodies.iter().map(String::capacity).sum::<usize>()
            + self.spans.capacity() * std::mem::size_of::<Span>()
    }
}

impl<'a> FromIterator<&'a str> for Items {
    /// Copies JSON texts into a list (tests and small sets).
    fn from_iter<I: IntoIterator<Item = &'a str>>(iter: I) -> Items {
        let mut items = Items::new();
        for text in iter {
            items.push_text(text);
        }
        items
    }
}

/// The items of a list (or part of one) as JSON text.
#[derive(Clone)]
pub struct Iter<'a> {
    items: &'a Items,
    spans: std::slice::Iter<'a, Span>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.spans.next().map(|s| self.items.text(*s))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.spans.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// How many threads a large page or set is worked on with: the cores this
/// process may use, at most 4. Read once: asking costs file reads (cgroup
/// quotas) on Linux, which is too much for every page of a walk.
pub fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4)))
}

/// Where each of `items` (values split from `text`) lies in `text`.
pub fn ranges_of(text: &str, items: &[&RawValue]) -> Vec<Range<usize>> {
    items
        .iter()
        .filter_map(|item| {
            let start = offset_in(text, item.get())?;
            Some(start..start + item.get().len())
        })
        .collect()
}

/// Where `part` starts inside `whole`, when it is a slice of it.
pub fn offset_in(whole: &str, part: &str) -> Option<usize> {
    let base = whole.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    let offset = at.checked_sub(base)?;
    (offset + part.len() <= whole.len()).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_into_kept_bodies_and_written_items_mix_in_order() {
        let page = r#"{"data":[{"id":1}, {"id":2}]}"#.to_string();
        let first = page.find("{\"id\":1}").unwrap();
        let second = page.find("{\"id\":2}").unwrap();
        let mut items = Items::new();
        let kept = items.keep_body(page).unwrap();
        assert!(items.push_range(&kept, first..first + 8));
        items.push_text(r#"{"id":3}"#);
        assert!(items.push_range(&kept, second..second + 8));
        assert_eq!(
            items.iter().collect::<Vec<_>>(),
            vec![r#"{"id":1}"#, r#"{"id":3}"#, r#"{"id":2}"#]
        );
        assert_eq!(items.get(1), Some(r#"{"id":3}"#));
        assert_eq!(items.get(3), None);
        assert_eq!(items.item_bytes(), 24);
        assert_eq!(items.range(1..9).count(), 2);
    }

    #[test]
    fn bad_ranges_are_refused() {
        let mut items = Items::new();
        let kept = items.keep_body("[\"é\"]".to_string()).unwrap();
        assert!(!items.push_range(&kept, 0..99));
        // Inside the two bytes of `é`.
        assert!(!items.push_range(&kept, 1..3));
        assert!(items.is_empty());
        assert!(Items::from_ends("ab".into(), 0, [1, 0].into_iter()).is_none());
        assert!(Items::from_ends("ab".into(), 0, [3].into_iter()).is_none());
        let ok = Items::from_ends("xx1,2".into(), 2, [3, 5].into_iter()).unwrap();
        assert_eq!(ok.iter().collect::<Vec<_>>(), vec!["1", ",2"]);
    }

    #[test]
    fn append_shifts_the_other_list() {
        let mut a: Items = ["1", "2"].into_iter().collect();
        let b: Items = ["3"].into_iter().collect();
        a.append(b);
        a.push_text("4");
        assert_eq!(a.iter().collect::<Vec<_>>(), vec!["1", "2", "3", "4"]);
        let mut empty = Items::new();
        empty.append(a.clone());
        assert_eq!(empty.len(), 4);
    }

    #[test]
    fn offsets_of_slices() {
        let whole = "abcdef";
        assert_eq!(offset_in(whole, &whole[2..4]), Some(2));
        assert_eq!(offset_in(whole, "zz"), None);
    }
}
