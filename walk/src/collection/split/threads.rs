//! The split of a large page on several threads. A page's collection is one
//! array; its items can be checked independently once their boundaries are
//! known, but the boundaries are only known by reading from the start. So
//! each thread after the first starts at a *guessed* boundary — the next
//! place past its share of the bytes where an item begins the way item 0
//! begins (e.g. `,{"id":`) — and every guess is confirmed by the thread
//! before it, which reads item by item up to that place and must land on it
//! exactly. A wrong guess costs only the wasted work: the thread before
//! simply reads on. Every item is parsed by serde_json on its own; the
//! rest of the page (everything but the array's items) is checked as a
//! skeleton with the array emptied. Whenever anything does not hold — not
//! an array of objects, a broken item, a broken envelope — this returns
//! `None` and the caller splits the usual way, which also words the error,
//! so errors are the same as on a small page.

use std::borrow::Cow;

use memchr::memmem;
use serde::de::DeserializeSeed;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Along, Found};
use dragnet_core::items::offset_in;
use dragnet_core::json::Key;
use dragnet_core::json_scan::{self, skip_ws};

/// The items of the array opening at byte `open` of `text` (a `[`), split
/// on up to `threads` threads, and the offset just past its closing `]`.
pub fn split_array(text: &str, open: usize, threads: usize) -> Option<(Vec<&RawValue>, usize)> {
    let b = text.as_bytes();
    if b.get(open) != Some(&b'[') {
        return None;
    }
    let first = skip_ws(b, open + 1);
    if b.get(first) == Some(&b']') {
        return Some((Vec::new(), first + 1));
    }
    let guesses = guesses(text, first, threads);
    let mut chunks: Vec<Option<Chunk>> = if guesses.is_empty() {
        vec![read(text, first, None)]
    } else {
        std::thread::scope(|scope| {
            let starts: Vec<usize> = std::iter::once(first)
                .chain(guesses.iter().copied())
                .collect();
            let handles: Vec<_> = starts
                .iter()
                .enumerate()
                .map(|(k, &start)| {
                    let stop = guesses.get(k).copied();
                    scope.spawn(move || read(text, start, stop))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect()
        })
    };
    // Chain the chunks: each must start where the one before stopped.
    let mut chunks = chunks.drain(..);
    let mut joined = chunks.next()??;
    for (k, chunk) in chunks.enumerate() {
        if joined.ended {
            break;
        }
        match chunk {
            Some(next) if joined.stop == guesses[k] => {
                joined.items.extend(next.items);
                joined.stop = next.stop;
                joined.ended = next.ended;
            }
            // A wrong guess: read on from where the last confirmed chunk stopped.
            _ => {
                let rest = read(text, joined.stop, None)?;
                joined.items.extend(rest.items);
                joined.stop = rest.stop;
                joined.ended = rest.ended;
                break;
            }
        }
    }
    if !joined.ended {
        let rest = read(text, joined.stop, None)?;
        joined.items.extend(rest.items);
        joined.stop = rest.stop;
    }
    Some((joined.items, joined.stop))
}

/// Items read from one start.
struct Chunk<'a> {
    items: Vec<&'a RawValue>,
    /// Where reading stopped: the start of the first item at or past the
    /// stop asked for, or just past the closing `]`.
    stop: usize,
    /// Whether the closing `]` was reached.
    ended: bool,
}

/// Reads items from the item starting at `start` until one starts at or
/// past `stop` (or the array ends). `None` on anything that is not a
/// well-formed item list.
fn read(text: &str, start: usize, stop: Option<usize>) -> Option<Chunk<'_>> {
    let b = text.as_bytes();
    let mut items = Vec::new();
    let mut at = start;
    loop {
        if stop.is_some_and(|s| at >= s) {
            return Some(Chunk {
                items,
                stop: at,
                ended: false,
            });
        }
        let rest = text.get(at..)?;
        let mut de = serde_json::Deserializer::from_str(rest);
        let item = <&RawValue>::deserialize(&mut de).ok()?;
        let end = at + offset_in(rest, item.get())? + item.get().len();
        items.push(item);
        let next = skip_ws(b, end);
        match b.get(next)? {
            b',' => {
                at = skip_ws(b, next + 1);
                // `[1,]` is not JSON.
                if b.get(at) == Some(&b']') {
                    return None;
                }
            }
            b']' => {
                return Some(Chunk {
                    items,
                    stop: next + 1,
                    ended: true,
                })
            }
            _ => return None,
        }
    }
}

/// Up to `threads - 1` increasing places where later threads start: past
/// each thread's share of the bytes, the next `,` followed by the bytes item
/// 0 begins with (up to its first key's colon) and an object with the same
/// first keys as item 0 (so a nested object that starts alike is passed
/// over). None unless item 0 is an object whose first key has no escapes.
fn guesses(text: &str, first: usize, threads: usize) -> Vec<usize> {
    let Some(prefix) = item_prefix(text, first) else {
        return Vec::new();
    };
    let leading_keys = |at: usize| -> Option<Vec<String>> {
        // Only a heuristic: on text that is not JSON it is merely wrong.
        let fields = json_scan::object(text.get(at..)?)?;
        Some(fields.keys().take(3).map(str::to_string).collect())
    };
    let Some(keys0) = leading_keys(first) else {
        return Vec::new();
    };
    let finder = memmem::Finder::new(prefix.as_bytes());
    let b = text.as_bytes();
    let span = text.len() - first;
    let mut out: Vec<usize> = Vec::new();
    for k in 1..threads {
        let from = first + span / threads * k;
        let mut search = from;
        let found = loop {
            let Some(hit) = b.get(search..).and_then(|rest| finder.find(rest)) else {
                break None;
            };
            let at = search + hit;
            // The byte before it (past whitespace) must be a comma.
            let mut before = at;
            while before > 0 && matches!(b[before - 1], b' ' | b'\n' | b'\r' | b'\t') {
                before -= 1;
            }
            if before > 0 && b[before - 1] == b',' && leading_keys(at).as_ref() == Some(&keys0) {
                break Some(at);
            }
            search = at + 1;
        };
        match found {
            Some(at) if out.last().is_none_or(|&last| at > last) => out.push(at),
            _ => {}
        }
    }
    out
}

/// The bytes item 0 starts with, from its `{` to its first key's colon.
fn item_prefix(text: &str, first: usize) -> Option<&str> {
    let b = text.as_bytes();
    if b.get(first) != Some(&b'{') {
        return None;
    }
    let key = skip_ws(b, first + 1);
    if b.get(key) != Some(&b'"') {
        return None;
    }
    let (close, escaped) = json_scan::string_end(b, key)?;
    if escaped {
        return None;
    }
    let colon = skip_ws(b, close + 1);
    if b.get(colon) != Some(&b':') || colon - first > 128 {
        return None;
    }
    text.get(first..=colon)
}

/// Splits `text` along a path of at most one key with the array's items
/// read on threads, checking the rest of the page as a skeleton. `None`
/// when the fast way does not apply or anything fails (see the module).
pub fn split_large<'a>(text: &'a str, path: &[String], threads: usize) -> Option<Found<'a>> {
    let open = match path {
        [] => {
            let at = skip_ws(text.as_bytes(), 0);
            (text.as_bytes().get(at) == Some(&b'[')).then_some(at)?
        }
        [key] => crate::top_scan::array_value_at(text, key)?,
        _ => return None,
    };
    let (items, close_end) = split_array(text, open, threads)?;
    // The page with the array emptied: checked, and read for its fields.
    let mut skeleton = String::with_capacity(text.len() - (close_end - open) + 2);
    skeleton.push_str(text.get(..open)?);
    skeleton.push_str("[]");
    skeleton.push_str(text.get(close_end..)?);
    let mut de = serde_json::Deserializer::from_str(&skeleton);
    let (found, fields, position) = Along { path }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    // A repeated key takes its last value: the array read here must be the
    // only one under its key.
    if let [key] = path {
        let kinds = crate::top_scan::top_level_kinds(&skeleton)?;
        if kinds.iter().filter(|(k, _)| k == key).count() != 1 {
            return None;
        }
    }
    // The skeleton's collection must be the emptied array itself.
    if found.is_none_or(|f| !f.is_empty()) {
        return None;
    }
    let shift = |offset: usize| {
        if offset < open {
            offset
        } else {
            offset - open - 2 + close_end
        }
    };
    let mut mapped = Vec::with_capacity(fields.len());
    for (key, value) in fields {
        let at = shift(offset_in(&skeleton, value.get())?);
        let slice = text.get(at..at + value.get().len())?;
        let raw: &'a RawValue = serde_json::from_str(slice).ok()?;
        mapped.push((Key(Cow::Owned(key.0.into_owned())), raw));
    }
    Some((Some(items), mapped, position))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collection::split_keeping_fields_on;

    fn page(n: usize, pretty: bool) -> String {
        let items: Vec<String> = (0..n)
            .map(|i| {
                // Nested objects that start with the same key, and strings
                // holding the pattern, to mislead the guesses.
                let tricky = if i % 7 == 0 { r#",{\"id\":"# } else { "x" };
                let item = format!(
                    r#"{{"id":{i},"customer":{{"id":{i},"name":"c{i}"}},"lines":[{{"id":1}},{{"id":2}}],"note":"{tricky}"}}"#
                );
                if pretty {
                    let v: serde_json::Value = serde_json::from_str(&item).unwrap();
                    serde_json::to_string_pretty(&v).unwrap()
                } else {
                    item
                }
            })
            .collect();
        let sep = if pretty { ",\n" } else { "," };
        format!(
            r#"{{"meta":{{"total":{n}}},"data":[{}],"links":{{"next":null}}}}"#,
            items.join(sep)
        )
    }

    fn both(text: &str, path: &[String]) {
        let one = split_keeping_fields_on(text, path, 1, usize::MAX).unwrap();
        for threads in [2, 3, 4] {
            let many = split_keeping_fields_on(text, path, threads, 0).unwrap();
            match (&one, &many) {
                (None, None) => {}
                (Some((p1, top1, pos1)), Some((p2, top2, pos2))) => {
                    let texts = |p: &crate::collection::Page| -> Vec<String> {
                        p.items.iter().map(|i| i.get().to_string()).collect()
                    };
                    assert_eq!(texts(p1), texts(p2));
                    assert_eq!((p1.total, p1.next_hint), (p2.total, p2.next_hint));
                    assert_eq!(pos1, pos2);
                    let fields = |t: &dragnet_core::json::RawObject| -> Vec<(String, String)> {
                        t.fields
                            .iter()
                            .map(|(k, v)| (k.0.to_string(), v.get().to_string()))
                            .collect()
                    };
                    assert_eq!(fields(top1), fields(top2));
                }
                _ => panic!("one way found the collection, the other did not"),
            }
        }
    }

    #[test]
    fn threads_give_the_same_page_as_one_pass() {
        let data = vec!["data".to_string()];
        for n in [0, 1, 2, 3, 10, 500] {
            for pretty in [false, true] {
                both(&page(n, pretty), &data);
            }
        }
        let bare = format!(
            "[{}]",
            (0..300)
                .map(|i| format!(r#"{{"k":{i}}}"#))
                .collect::<Vec<_>>()
                .join(", ")
        );
        both(&bare, &[]);
        both("[1, 2, 3]", &[]);
        both(r#"{"data": 5, "data": [{"a":1},{"a":2}]}"#, &data);
        both(
            r#"{"data": [{"a":1},{"a":2}], "data": [], "n": 1, "n": 2}"#,
            &data,
        );
        both(r#"{"data": [{"a":1},{"a":2}], "data": 5}"#, &data);
        both(r#"{"d\u0061ta": [{"a":1},{"a":2}]}"#, &data);
        // The large pages above took the threaded way, not the fallback.
        for pretty in [false, true] {
            let text = page(500, pretty);
            let found = split_large(&text, &data, 2).expect("split on threads");
            assert_eq!(found.0.map(|i| i.len()), Some(500));
        }
        assert!(split_large(&bare, &[], 3).is_some());
    }

    #[test]
    fn guesses_land_on_item_starts_and_are_confirmed() {
        let text = page(500, false);
        let open = text.find('[').unwrap();
        let first = open + 1;
        let places = guesses(&text, first, 4);
        assert_eq!(places.len(), 3);
        for &g in &places {
            assert!(text[g..].starts_with(r#"{"id":"#));
            assert_eq!(&text[g - 1..g], ",");
            // Reading from the start stops exactly there.
            let chunk = read(&text, first, Some(g)).unwrap();
            assert_eq!(chunk.stop, g);
            assert!(!chunk.ended);
        }
        // No guess without an object item whose first key has no escape.
        assert!(guesses("[1,2,3]", 1, 2).is_empty());
        assert!(guesses(r#"[{"a\"":1},{"a\"":2}]"#, 1, 2).is_empty());
    }

    #[test]
    fn wrong_guesses_are_read_past() {
        // Every item's first key also starts nested objects after a comma,
        // so most guesses land inside an item.
        let items: Vec<String> = (0..400)
            .map(|i| format!(r#"{{"a":{i},"x":[1,{{"a":2,"x":0}},{{"a":3,"x":0}}]}}"#))
            .collect();
        let text = format!("[{}]", items.join(","));
        let wrong = guesses(&text, 1, 4)
            .into_iter()
            .filter(|&g| read(&text, 1, Some(g)).unwrap().stop != g)
            .count();
        assert!(wrong > 0, "the fixture misleads some guess");
        let (got, end) = split_array(&text, 0, 4).unwrap();
        assert_eq!(end, text.len());
        assert_eq!(got.len(), 400);
        assert!(got.iter().zip(&items).all(|(g, w)| g.get() == w));
    }

    #[test]
    fn deep_items_are_read_alike_both_ways() {
        // A raw item is skipped, not built: serde_json puts no nesting limit
        // on that, on either way.
        let deep = format!("{}1{}", "[".repeat(2000), "]".repeat(2000));
        let text = format!(r#"{{"data":[{{"a":1}},{{"a":{deep}}}]}}"#);
        let data = vec!["data".to_string()];
        both(&text, &data);
        let many = split_keeping_fields_on(&text, &data, 2, 0)
            .unwrap()
            .unwrap();
        assert_eq!(many.0.items.len(), 2);
    }

    #[test]
    fn broken_pages_fall_back_to_the_usual_error() {
        let data = vec!["data".to_string()];
        let good = page(50, false);
        for broken in [
            good.replacen(r#""id":3,"#, r#""id":3,,"#, 1),
            good.replacen("]", "", 1),
            format!("{good} x"),
            good.replacen(r#""links""#, r#"links"#, 1),
            good.replace(r#"}],"links""#, r#"},],"links""#),
        ] {
            let one = split_keeping_fields_on(&broken, &data, 1, usize::MAX);
            let many = split_keeping_fields_on(&broken, &data, 2, 0);
            match (one, many) {
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (Ok(_), Ok(_)) => {}
                (a, b) => panic!("{} vs {}", a.is_ok(), b.is_ok()),
            }
        }
    }
}
