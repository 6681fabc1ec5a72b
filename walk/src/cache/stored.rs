//! The stored form of a payload. Since layout 3 it is framed so that a hit
//! needs no JSON split: a magic line, a one-line head
//! `{"kind":…,"path":[…],"items":N,"envelope":L}`, then the envelope's text
//! (L bytes: the response around the collection with the collection left
//! empty, or a single response whole), then N little-endian `u32` offsets
//! (where each item ends), then the items' texts back to back. Reading it
//! back keeps the items' texts as one body with ranges at those offsets
//! (`dragnet_core::items`) and parses only the small envelope, so a hit is shaped
//! like a fresh walk without re-splitting or copying items. The head
//! carries a CRC-32C of the items' texts (`check`): they were checked as
//! JSON when the walk split them, so a matching checksum is what a read
//! needs to trust them again. An entry without one (written before it was
//! added) has each item checked as JSON instead, in parallel chunks.
//!
//! Entries of layout 2 (a head line, then the tool's payload as one JSON
//! text, split again on every read) are still read: `decode` tells the two
//! apart by the magic line. They are written only when a set's items do not
//! fit `u32` offsets (4 GiB), and by tests standing in for old entries.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::collection::{self, ItemsPath};
use dragnet_core::items::Items;
use dragnet_core::json;
use dragnet_core::payload::{write_payload, Payload};
use dragnet_core::payload::{Envelope, EnvelopeField};

/// The first line of a layout-3 payload; a layout-2 payload starts with `{`.
const MAGIC: &[u8] = b"dragnet-cache/3\n";
/// Above this many item bytes, items are checked on several threads.
const PARALLEL_BYTES: usize = 256 * 1024;

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Collection,
    Items,
    Single,
}

/// The head line of a layout-3 payload.
#[derive(Serialize, Deserialize)]
struct Head {
    kind: Kind,
    #[serde(default)]
    path: ItemsPath,
    /// How many items (and offsets) follow the envelope.
    items: usize,
    /// The envelope's length in bytes.
    envelope: usize,
    /// CRC-32C of the items' texts, back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    check: Option<u32>,
}

/// The checksum of the items' texts (CRC-32C, table-driven).
static CHECK: crc::Crc<u32, crc::Table<16>> =
    crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISCSI);

/// Encodes a payload for the cache (layout 3).
pub fn encode(payload: &Payload) -> Vec<u8> {
    let items = payload.items();
    let body_len: usize = items.item_bytes();
    if u32::try_from(body_len).is_err() {
        return encode_layout2(payload);
    }
    let (kind, path, envelope) = match payload {
        Payload::Collection { envelope, .. } => {
            let mut text = String::new();
            if let Envelope::Object(fields) = envelope {
                write_skeleton(&mut text, fields);
            }
            (Kind::Collection, envelope_path(envelope), text)
        }
        Payload::Items(_) => (Kind::Items, Vec::new(), String::new()),
        Payload::Single(raw) => (Kind::Single, Vec::new(), raw.get().to_string()),
    };
    let mut digest = CHECK.digest();
    for item in items.iter() {
        digest.update(item.as_bytes());
    }
    let head = Head {
        kind,
        path,
        items: items.len(),
        envelope: envelope.len(),
        check: Some(digest.finalize()),
    };
    let head = serde_json::to_string(&head).unwrap_or_default();
    let mut out = Vec::with_capacity(
        MAGIC.len() + head.len() + 1 + envelope.len() + 4 * items.len() + body_len,
    );
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(head.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(envelope.as_bytes());
    let mut end = 0usize;
    for item in items.iter() {
        end += item.len();
        // Fits: the sum of all lengths was checked above.
        out.extend_from_slice(&(end as u32).to_le_bytes());
    }
    for item in items.iter() {
        out.extend_from_slice(item.as_bytes());
    }
    out
}

/// The envelope's object with the collection's place left an empty array.
fn write_skeleton(out: &mut String, fields: &[(String, EnvelopeField)]) {
    out.push('{');
    for (i, (key, field)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::write_str(out, key);
        out.push(':');
        match field {
            EnvelopeField::Raw(raw) => out.push_str(raw.get()),
            EnvelopeField::Nested(inner) => write_skeleton(out, inner),
            EnvelopeField::Collection => out.push_str("[]"),
        }
    }
    out.push('}');
}

/// Decodes what `encode` (or a layout-2 writer) wrote; `None` if it is
/// neither, or damaged.
pub fn decode(bytes: Vec<u8>) -> Option<Payload> {
    match bytes.strip_prefix(MAGIC) {
        Some(_) => decode_layout3(bytes),
        None => decode_layout2(&bytes),
    }
}

fn decode_layout3(mut bytes: Vec<u8>) -> Option<Payload> {
    let rest = bytes.get(MAGIC.len()..)?;
    let newline = rest.iter().position(|&b| b == b'\n')?;
    let head: Head = serde_json::from_slice(&rest[..newline]).ok()?;
    let rest = &rest[newline + 1..];
    let (envelope, rest) = rest.split_at_checked(head.envelope)?;
    let (table, body) = rest.split_at_checked(head.items.checked_mul(4)?)?;
    let envelope = std::str::from_utf8(envelope).ok()?.to_string();
    let ends: Vec<usize> = table
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    if ends.last().copied().unwrap_or(0) != body.len() {
        return None;
    }
    let trusted = match head.check {
        Some(check) if CHECK.checksum(body) == check => true,
        Some(_) => return None,
        None => false,
    };
    // The items' texts become the one body the ranges point into: the
    // bytes before them are dropped in place, without a second buffer.
    let body_start = bytes.len() - body.len();
    bytes.drain(..body_start);
    let body = String::from_utf8(bytes).ok()?;
    let items = Items::from_ends(body, 0, ends.into_iter())?;
    if !trusted && !all_json(&items) {
        return None;
    }
    match head.kind {
        Kind::Single => serde_json::from_str::<Box<RawValue>>(&envelope)
            .ok()
            .map(Payload::Single),
        Kind::Items => Some(Payload::Items(items)),
        Kind::Collection => {
            let envelope = match head.path.is_empty() {
                true => Envelope::Bare,
                false => {
                    let root: &RawValue = serde_json::from_str(&envelope).ok()?;
                    collection::envelope(root, &head.path)
                }
            };
            Some(Payload::Collection { envelope, items })
        }
    }
}

/// Whether every item is one JSON value: checked without building it, in
/// parallel chunks on a large set.
fn all_json(items: &Items) -> bool {
    items
        .map_chunks(PARALLEL_BYTES, |range| json_range(items, range))
        .into_iter()
        .all(|ok| ok)
}

fn json_range(items: &Items, range: std::ops::Range<usize>) -> bool {
    items
        .range(range)
        .all(|text| serde_json::from_str::<IgnoredAny>(text).is_ok())
}

/// The head line of a layout-2 payload.
#[derive(Serialize, Deserialize)]
struct Head2 {
    v: u32,
    kind: Kind,
    #[serde(default)]
    path: ItemsPath,
}

const LAYOUT2: u32 = 2;

/// Encodes a payload in layout 2 (the whole payload as one JSON text after
/// the head line): for sets past `u32` offsets, and for tests of old entries.
pub fn encode_layout2(payload: &Payload) -> Vec<u8> {
    let (kind, path) = match payload {
        Payload::Collection { envelope, .. } => (Kind::Collection, envelope_path(envelope)),
        Payload::Items(_) => (Kind::Items, Vec::new()),
        Payload::Single(_) => (Kind::Single, Vec::new()),
    };
    let head = serde_json::json!({"v": LAYOUT2, "kind": kind, "path": path}).to_string();
    let mut out = String::with_capacity(head.len() + 1 + payload_len(payload));
    out.push_str(&head);
    out.push('\n');
    write_payload(&mut out, payload);
    out.into_bytes()
}

fn payload_len(payload: &Payload) -> usize {
    match payload {
        Payload::Single(raw) => raw.get().len(),
        other => other.items().item_bytes() + other.items().len() + 256,
    }
}

/// Decodes layout 2, splitting the body along the stored path.
fn decode_layout2(bytes: &[u8]) -> Option<Payload> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (head, body) = text.split_once('\n')?;
    let head: Head2 = serde_json::from_str(head).ok()?;
    if head.v != LAYOUT2 {
        return None;
    }
    match head.kind {
        Kind::Single => serde_json::from_str::<Box<RawValue>>(body)
            .ok()
            .map(Payload::Single),
        Kind::Items => {
            let page = collection::split_text(body, &[]).ok()??;
            Some(Payload::Items(owned(page.items)))
        }
        Kind::Collection => match head.path.as_slice() {
            [] => {
                let page = collection::split_text(body, &[]).ok()??;
                Some(Payload::Collection {
                    envelope: Envelope::Bare,
                    items: owned(page.items),
                })
            }
            [key] => {
                let (page, top, position) =
                    collection::split_keeping_fields(body, &head.path).ok()??;
                Some(Payload::Collection {
                    envelope: collection::envelope_around(&top, key, position),
                    items: owned(page.items),
                })
            }
            _ => {
                let root: &RawValue = serde_json::from_str(body).ok()?;
                let page = collection::split(root, &head.path)?;
                Some(Payload::Collection {
                    envelope: collection::envelope(root, &head.path),
                    items: owned(page.items),
                })
            }
        },
    }
}

fn owned(items: Vec<&RawValue>) -> Items {
    items.into_iter().map(RawValue::get).collect()
}

/// The path to the collection inside an envelope.
fn envelope_path(envelope: &Envelope) -> ItemsPath {
    fn find(fields: &[(String, EnvelopeField)], path: &mut Vec<String>) -> bool {
        for (key, field) in fields {
            match field {
                EnvelopeField::Collection => {
                    path.push(key.clone());
                    return true;
                }
                EnvelopeField::Nested(inner) => {
                    path.push(key.clone());
                    if find(inner, path) {
                        return true;
                    }
                    path.pop();
                }
                EnvelopeField::Raw(_) => {}
            }
        }
        false
    }
    let mut path = Vec::new();
    if let Envelope::Object(fields) = envelope {
        find(fields, &mut path);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        serde_json::from_str(text).unwrap()
    }

    /// A collection payload split from `body` along `path`.
    fn collection_of(body: &RawValue, path: &[&str]) -> Payload {
        let path: Vec<String> = path.iter().map(|k| k.to_string()).collect();
        Payload::Collection {
            envelope: collection::envelope(body, &path),
            items: collection::split(body, &path)
                .unwrap()
                .items
                .into_iter()
                .map(RawValue::get)
                .collect(),
        }
    }

    /// The payload as written before and after a round trip.
    fn round_trip(payload: &Payload) -> (String, String, Payload) {
        let mut before = String::new();
        write_payload(&mut before, payload);
        let back = decode(encode(payload)).unwrap();
        let mut after = String::new();
        write_payload(&mut after, &back);
        // The layout-2 path still reads what an older build stored.
        let old = decode(encode_layout2(payload)).unwrap();
        let mut after_old = String::new();
        write_payload(&mut after_old, &old);
        assert_eq!(after_old, after, "both layouts read back alike");
        (before, after, back)
    }

    fn texts(payload: &Payload) -> Vec<String> {
        payload.items().iter().map(str::to_string).collect()
    }

    #[test]
    fn layout3_keeps_items_apart_from_the_envelope() {
        let flat = raw(r#"{"meta":{"total":2},"data":[{"a":1},{"a":[2,"x,]"]}],"links":{}}"#);
        let payload = collection_of(&flat, &["data"]);
        let bytes = encode(&payload);
        assert!(bytes.starts_with(MAGIC));
        let text = String::from_utf8_lossy(&bytes).to_string();
        assert!(
            text.contains(r#"{"meta":{"total":2},"data":[],"links":{}}"#),
            "the envelope is stored with the collection left empty: {text}"
        );
        assert!(text.ends_with(r#"{"a":1}{"a":[2,"x,]"]}"#), "{text}");
        let back = decode(bytes.clone()).unwrap();
        assert_eq!(texts(&back), texts(&payload));
    }

    #[test]
    fn large_sets_are_rebuilt_in_parallel_chunks_in_order() {
        let texts_in: Vec<String> = (0..20_000)
            .map(|i| format!(r#"{{"id":{i},"name":"row {i}","tags":["a","b"]}}"#))
            .collect();
        let items: Items = texts_in.iter().map(String::as_str).collect();
        let payload = Payload::Items(items);
        let bytes = encode(&payload);
        assert!(bytes.len() > PARALLEL_BYTES);
        let back = decode(bytes.clone()).unwrap();
        assert!(matches!(back, Payload::Items(_)));
        assert_eq!(texts(&back), texts(&payload));
    }

    /// `bytes` as a layout-3 entry written before the checksum existed.
    fn without_check(bytes: &[u8]) -> Vec<u8> {
        let rest = &bytes[MAGIC.len()..];
        let newline = rest.iter().position(|&b| b == b'\n').unwrap();
        let mut head: serde_json::Value = serde_json::from_slice(&rest[..newline]).unwrap();
        assert!(head.as_object_mut().unwrap().remove("check").is_some());
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(head.to_string().as_bytes());
        out.extend_from_slice(&rest[newline..]);
        out
    }

    #[test]
    fn the_checksum_catches_a_change_that_is_still_json() {
        let flat = raw(r#"{"data":[{"a":1},{"a":2}]}"#);
        let bytes = encode(&collection_of(&flat, &["data"]));
        let at = bytes.len() - 2; // the `2` of the last item
        let mut changed = bytes.clone();
        changed[at] = b'7';
        assert!(
            decode(changed.clone()).is_none(),
            "a damaged entry is a miss"
        );
        // Without a checksum only broken JSON can be told apart.
        let old = without_check(&changed);
        assert_eq!(
            texts(&decode(old).unwrap()),
            vec![r#"{"a":1}"#, r#"{"a":7}"#]
        );
        let mut broken = without_check(&bytes);
        let end = broken.len() - 1;
        broken[end] = b',';
        assert!(decode(broken).is_none());
    }

    #[test]
    fn entries_without_a_checksum_are_checked_item_by_item() {
        let texts_in: Vec<String> = (0..20_000)
            .map(|i| format!(r#"{{"id":{i},"name":"row {i}"}}"#))
            .collect();
        let payload = Payload::Items(texts_in.iter().map(String::as_str).collect());
        let old = without_check(&encode(&payload));
        assert!(
            old.len() > PARALLEL_BYTES,
            "large enough to be checked on threads"
        );
        assert_eq!(texts(&decode(old.clone()).unwrap()), texts(&payload));
        let mut broken = old;
        let at = broken.len() - 5_000;
        broken[at] = 0x01; // a control byte is JSON nowhere
        assert!(decode(broken).is_none());
    }

    #[test]
    fn damaged_layout3_entries_are_none_not_panics() {
        let flat = raw(r#"{"data":[{"a":1},{"b":"é"}],"n":2}"#);
        let bytes = encode(&collection_of(&flat, &["data"]));
        // Every truncation, and every single-byte change, is handled.
        for cut in 0..bytes.len() {
            assert!(decode(bytes[..cut].to_vec()).is_none(), "cut at {cut}");
        }
        for at in MAGIC.len()..bytes.len() {
            let mut changed = bytes.clone();
            changed[at] ^= 0x5a;
            let _ = decode(changed);
        }
        // An offset past a character boundary or the body is a miss.
        let mut moved = bytes.clone();
        let table = bytes.len() - r#"{"a":1}{"b":"é"}"#.len() - 8;
        moved[table] = 14; // inside the two bytes of `é`
        assert!(decode(moved.clone()).is_none());
        moved[table] = 200;
        assert!(decode(moved.clone()).is_none());
    }

    #[test]
    fn round_trips_every_kind() {
        let nested = raw(r#"{"meta":{"total":2},"wrap":{"rows":[{"a":1},{"a":2}],"n":1}}"#);
        let (before, after, back) = round_trip(&collection_of(&nested, &["wrap", "rows"]));
        assert_eq!(before, after);
        assert_eq!(back.items().len(), 2);

        let flat = raw(r#"{"meta":{"total":2},"data":[{"a":1},{"a":2}],"links":{}}"#);
        let (before, after, _) = round_trip(&collection_of(&flat, &["data"]));
        assert_eq!(
            before, after,
            "field order and the collection's place are kept"
        );

        let bare = Payload::Collection {
            envelope: Envelope::Bare,
            items: ["1", "2"].into_iter().collect(),
        };
        let back = decode(encode(&bare)).unwrap();
        assert!(matches!(
            back,
            Payload::Collection {
                envelope: Envelope::Bare,
                ..
            }
        ));
        let single = Payload::Single(raw(r#"{"id":7}"#));
        assert!(matches!(decode(encode(&single)), Some(Payload::Single(_))));
        let items = Payload::Items([r#"{"id":7}"#].into_iter().collect());
        assert_eq!(decode(encode(&items)).unwrap().items().len(), 1);
        assert!(decode(b"not json".to_vec()).is_none());
    }
}
