//! The stored form of a payload: a one-line head `{"v":2,"kind":…,"path":[…]}`,
//! a newline, then the body: the tool's own payload with every item,
//! unprojected and unfiltered. Reading it back splits the body along the
//! stored path in one pass, the way a later page of a walk is split, so a hit
//! is shaped like a fresh walk and costs one read of the payload.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::looping::collection::{self, Envelope, ItemsPath};
use crate::result::{write_payload, Payload};

/// The head line of a stored payload.
#[derive(Serialize, Deserialize)]
struct Head {
    v: u32,
    kind: Kind,
    #[serde(default)]
    path: ItemsPath,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Collection,
    Items,
    Single,
}

const VERSION: u32 = 2;

/// Encodes a payload for the cache.
pub fn encode(payload: &Payload) -> Vec<u8> {
    let (kind, path) = match payload {
        Payload::Collection { envelope, .. } => (Kind::Collection, envelope_path(envelope)),
        Payload::Items(_) => (Kind::Items, Vec::new()),
        Payload::Single(_) => (Kind::Single, Vec::new()),
    };
    let head = serde_json::json!({"v": VERSION, "kind": kind, "path": path}).to_string();
    let mut out = String::with_capacity(head.len() + 1 + payload_len(payload));
    out.push_str(&head);
    out.push('\n');
    write_payload(&mut out, payload);
    out.into_bytes()
}

fn payload_len(payload: &Payload) -> usize {
    match payload {
        Payload::Single(raw) => raw.get().len(),
        other => {
            other
                .items()
                .iter()
                .map(|i| i.get().len() + 1)
                .sum::<usize>()
                + 256
        }
    }
}

/// Decodes what `encode` wrote; `None` if it is not that.
pub fn decode(bytes: &[u8]) -> Option<Payload> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (head, body) = text.split_once('\n')?;
    let head: Head = serde_json::from_str(head).ok()?;
    if head.v != VERSION {
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

fn owned(items: Vec<&RawValue>) -> Vec<crate::json::RawItem> {
    items.into_iter().map(RawValue::to_owned).collect()
}

/// The path to the collection inside an envelope.
fn envelope_path(envelope: &Envelope) -> ItemsPath {
    fn find(fields: &[(String, collection::EnvelopeField)], path: &mut Vec<String>) -> bool {
        for (key, field) in fields {
            match field {
                collection::EnvelopeField::Collection => {
                    path.push(key.clone());
                    return true;
                }
                collection::EnvelopeField::Nested(inner) => {
                    path.push(key.clone());
                    if find(inner, path) {
                        return true;
                    }
                    path.pop();
                }
                collection::EnvelopeField::Raw(_) => {}
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
                .map(RawValue::to_owned)
                .collect(),
        }
    }

    /// The payload as written before and after a round trip.
    fn round_trip(payload: &Payload) -> (String, String, Payload) {
        let mut before = String::new();
        write_payload(&mut before, payload);
        let back = decode(&encode(payload)).unwrap();
        let mut after = String::new();
        write_payload(&mut after, &back);
        (before, after, back)
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
            items: vec![raw("1"), raw("2")],
        };
        let back = decode(&encode(&bare)).unwrap();
        assert!(matches!(
            back,
            Payload::Collection {
                envelope: Envelope::Bare,
                ..
            }
        ));
        let single = Payload::Single(raw(r#"{"id":7}"#));
        assert!(matches!(decode(&encode(&single)), Some(Payload::Single(_))));
        let items = Payload::Items(vec![raw(r#"{"id":7}"#)]);
        assert_eq!(decode(&encode(&items)).unwrap().items().len(), 1);
        assert!(decode(b"not json").is_none());
    }
}
