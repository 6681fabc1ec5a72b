//! The stored form of a payload: `{"v":1,"kind":…,"path":[…],"body":<raw>}`
//! where `body` is the tool's own payload with every item, unprojected and
//! unfiltered. Reading it back splits the body along the stored path the
//! way page one of a walk is split, so a hit is shaped like a fresh walk.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::looping::collection::{self, Envelope, ItemsPath};
use crate::result::{write_payload, Payload};

#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    v: u32,
    kind: Kind,
    #[serde(default)]
    path: ItemsPath,
    #[serde(borrow)]
    body: &'a RawValue,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Collection,
    Items,
    Single,
}

/// Encodes a payload for the cache.
pub fn encode(payload: &Payload) -> Vec<u8> {
    let (kind, path) = match payload {
        Payload::Collection { envelope, .. } => (Kind::Collection, envelope_path(envelope)),
        Payload::Items(_) => (Kind::Items, Vec::new()),
        Payload::Single(_) => (Kind::Single, Vec::new()),
    };
    let mut body = String::new();
    write_payload(&mut body, payload);
    let head = serde_json::json!({"v": 1, "kind": kind, "path": path}).to_string();
    // `{"v":1,…}` + `,"body":<raw>}`: the body is written once, raw.
    let mut out = String::with_capacity(head.len() + body.len() + 10);
    out.push_str(&head[..head.len() - 1]);
    out.push_str(",\"body\":");
    out.push_str(&body);
    out.push('}');
    out.into_bytes()
}

/// Decodes what `encode` wrote; `None` if it is not that.
pub fn decode(bytes: &[u8]) -> Option<Payload> {
    let text = std::str::from_utf8(bytes).ok()?;
    let stored: Stored = serde_json::from_str(text).ok()?;
    match stored.kind {
        Kind::Single => Some(Payload::Single(stored.body.to_owned())),
        Kind::Items => {
            let items = crate::json::array(stored.body)?;
            Some(Payload::Items(
                items.into_iter().map(RawValue::to_owned).collect(),
            ))
        }
        Kind::Collection => {
            let page = collection::split(stored.body, &stored.path)?;
            Some(Payload::Collection {
                envelope: collection::envelope(stored.body, &stored.path),
                items: page.items.into_iter().map(RawValue::to_owned).collect(),
            })
        }
    }
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

    #[test]
    fn round_trips_every_kind() {
        let body = raw(r#"{"meta":{"total":2},"wrap":{"rows":[{"a":1},{"a":2}],"n":1}}"#);
        let path = vec!["wrap".to_string(), "rows".to_string()];
        let payload = Payload::Collection {
            envelope: collection::envelope(&body, &path),
            items: collection::split(&body, &path)
                .unwrap()
                .items
                .into_iter()
                .map(RawValue::to_owned)
                .collect(),
        };
        let mut before = String::new();
        write_payload(&mut before, &payload);
        let back = decode(&encode(&payload)).unwrap();
        let mut after = String::new();
        write_payload(&mut after, &back);
        assert_eq!(before, after);
        assert_eq!(back.items().len(), 2);

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
