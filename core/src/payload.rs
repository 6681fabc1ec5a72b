//! What the upstream answered, as it is kept: the collection's envelope
//! around raw items, a fan-out's items, or a single response, and how a
//! payload is written back as JSON text without building a tree. The
//! cache, the result store and every rendering of a result share it.

use std::fmt::{self, Write};

use crate::items::Items;
use crate::json::{self, RawItem};
use crate::json_rows::Rows;

/// The parts of a response around its collection, kept raw.
#[derive(Debug)]
pub enum Envelope {
    /// The response is the collection itself.
    Bare,
    /// An object; the field on the path holds the collection.
    Object(Vec<(String, EnvelopeField)>),
}

#[derive(Debug)]
pub enum EnvelopeField {
    Raw(RawItem),
    /// The object on the way to the collection.
    Nested(Vec<(String, EnvelopeField)>),
    /// The collection's place.
    Collection,
}

/// What the upstream answered, merged over every page and value.
#[derive(Debug)]
pub enum Payload {
    /// A collection: page one's envelope around all the items.
    Collection { envelope: Envelope, items: Items },
    /// A fan-out over a tool that returns single objects: one per value.
    Items(Items),
    /// A response without a collection, kept whole.
    Single(RawItem),
}

/// The items of a payload without a collection.
static NO_ITEMS: Items = Items::new();

impl Payload {
    pub fn items(&self) -> &Items {
        match self {
            Payload::Collection { items, .. } | Payload::Items(items) => items,
            Payload::Single(_) => &NO_ITEMS,
        }
    }
}

/// The rows a caller sees: the fetched items, or rows shaped from them.
#[derive(Debug, Clone, Copy)]
pub enum Visible<'a> {
    Items(&'a Items),
    Rows(&'a Rows),
}

impl<'a> Visible<'a> {
    pub fn len(&self) -> usize {
        match self {
            Visible::Items(items) => items.len(),
            Visible::Rows(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each row as JSON text.
    pub fn iter(&self) -> Box<dyn Iterator<Item = &'a str> + 'a> {
        match *self {
            Visible::Items(items) => Box::new(items.iter()),
            Visible::Rows(rows) => Box::new(rows.iter()),
        }
    }
}

/// Writes the payload as the upstream shaped it, with every item and no
/// verdict: a bare collection stays an array. What the cache stores.
pub fn write_payload(out: &mut String, payload: &Payload) {
    // Writing to a String cannot fail.
    let _ = write_payload_to(out, payload);
}

fn write_payload_to<W: Write>(out: &mut W, payload: &Payload) -> fmt::Result {
    match payload {
        Payload::Collection {
            envelope: Envelope::Object(fields),
            items,
        } => {
            out.write_char('{')?;
            let mut first = true;
            write_fields(out, fields, Visible::Items(items), usize::MAX, &mut first)?;
            out.write_char('}')
        }
        Payload::Collection {
            envelope: Envelope::Bare,
            items,
        }
        | Payload::Items(items) => write_items(out, items.iter()),
        Payload::Single(raw) => out.write_str(raw.get()),
    }
}

pub fn write_key<W: Write>(out: &mut W, key: &str, first: &mut bool) -> fmt::Result {
    if !*first {
        out.write_char(',')?;
    }
    *first = false;
    let mut quoted = String::with_capacity(key.len() + 2);
    json::write_str(&mut quoted, key);
    out.write_str(&quoted)?;
    out.write_char(':')
}

pub fn write_items<'a, W: Write>(out: &mut W, items: impl Iterator<Item = &'a str>) -> fmt::Result {
    out.write_char('[')?;
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        out.write_str(item)?;
    }
    out.write_char(']')
}

pub fn write_fields<W: Write>(
    out: &mut W,
    fields: &[(String, EnvelopeField)],
    items: Visible<'_>,
    limit: usize,
    first: &mut bool,
) -> fmt::Result {
    for (key, field) in fields {
        write_key(out, key, first)?;
        match field {
            EnvelopeField::Raw(raw) => out.write_str(raw.get())?,
            EnvelopeField::Collection => write_items(out, items.iter().take(limit))?,
            EnvelopeField::Nested(inner) => {
                out.write_char('{')?;
                let mut inner_first = true;
                write_fields(out, inner, items, limit, &mut inner_first)?;
                out.write_char('}')?;
            }
        }
    }
    Ok(())
}
