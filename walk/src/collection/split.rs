//! The one-pass split of a page (SPEC §3.2, after page one): along the path
//! page one found, the collection's items are collected as borrowed raw
//! values and the other top-level fields kept raw, in a single read of the
//! text. Nothing else is parsed.

mod threads;

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::collection::{declared_total, next_hint, Page};
use dragnet_core::json::{self, Key, RawObject};

/// Splits page text along `path` in one pass: the collection's items are
/// collected as borrowed raw values and the other top-level fields kept raw
/// (for the total and the next-page hint); nothing else is parsed. `Ok(None)`
/// when the page lacks the collection; `Err` when the text is not JSON.
pub fn split_text<'a>(
    text: &'a str,
    path: &[String],
) -> Result<Option<Page<'a>>, serde_json::Error> {
    Ok(split_keeping_fields(text, path)?.map(|(page, _, _)| page))
}

/// As `split_text`, also returning the other top-level fields and the
/// position of the collection among them (for page one's envelope). A page
/// of a megabyte or more has its items read on several threads
/// (`threads`), with the same result.
pub fn split_keeping_fields<'a>(
    text: &'a str,
    path: &[String],
) -> Result<Option<SplitPage<'a>>, serde_json::Error> {
    split_keeping_fields_on(text, path, dragnet_core::items::threads(), PARALLEL_BYTES)
}

/// Below this many bytes a page is split in one pass on the calling thread.
pub const PARALLEL_BYTES: usize = 1 << 20;

/// A split page: the page, the other top-level fields, and where the
/// collection sat among them.
pub type SplitPage<'a> = (Page<'a>, RawObject<'a>, usize);

/// `split_keeping_fields` with the threads and the size from which they are
/// used given (tests and the fuzzer compare the two ways).
pub fn split_keeping_fields_on<'a>(
    text: &'a str,
    path: &[String],
    threads: usize,
    parallel_from: usize,
) -> Result<Option<SplitPage<'a>>, serde_json::Error> {
    let fast = (threads > 1 && text.len() >= parallel_from)
        .then(|| threads::split_large(text, path, threads))
        .flatten();
    let (items, fields, position) = match fast {
        Some(found) => found,
        None => {
            let mut de = serde_json::Deserializer::from_str(text);
            let found = Along { path }.deserialize(&mut de)?;
            de.end()?;
            found
        }
    };
    let Some(items) = items else {
        return Ok(None);
    };
    let top = RawObject::from_fields(fields);
    let page = Page {
        items,
        total: declared_total(&top),
        next_hint: next_hint(&top),
    };
    Ok(Some((page, top, position)))
}

/// Follows a path through a document in one pass (see `split_text`).
pub(super) struct Along<'p> {
    pub(super) path: &'p [String],
}

/// Items if found, the other fields, and where among them the collection was.
pub(super) type Found<'de> = (
    Option<Vec<&'de RawValue>>,
    Vec<(Key<'de>, &'de RawValue)>,
    usize,
);

impl<'de> DeserializeSeed<'de> for Along<'_> {
    type Value = Found<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Along<'_> {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        if !self.path.is_empty() {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok((None, Vec::new(), 0));
        }
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(64));
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(item);
        }
        Ok((Some(items), Vec::new(), 0))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut items = None;
        let mut fields = Vec::new();
        let mut position = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match self.path.split_first() {
                // A repeated key: the first place, the last value (as
                // `RawObject` reads objects).
                Some((head, rest)) if key.0 == head.as_str() => {
                    position.get_or_insert(fields.len());
                    items = map.next_value_seed(Along { path: rest })?.0;
                }
                _ => fields.push((key, map.next_value::<&'de RawValue>()?)),
            }
        }
        let removed = json::merge_duplicates(&mut fields);
        let position = position.unwrap_or(0);
        let before = removed.iter().take_while(|&&i| i < position).count();
        Ok((items, fields, position - before))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok((None, Vec::new(), 0))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok((None, Vec::new(), 0))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok((None, Vec::new(), 0))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok((None, Vec::new(), 0))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok((None, Vec::new(), 0))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((None, Vec::new(), 0))
    }
}
