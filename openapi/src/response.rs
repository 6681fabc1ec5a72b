//! Where a success response keeps its collection (`response_items_path`),
//! read from the response schema without inlining it: `$ref`s are followed
//! and `allOf` members looked through lazily, so a huge recursive response
//! schema costs only the few levels this rule inspects.

use std::cell::Cell;

use serde_json::Value;

use super::body::json_media;
use super::doc::{child, Doc, Resolved, Version};
use super::examples::example_fields;
use dragnet_core::error::Error;
use dragnet_core::paging::keys::{COLLECTION_KEYS, METADATA_KEYS};

/// `allOf`/`anyOf` nesting looked through before giving up.
const MAX_VIEW_DEPTH: usize = 8;

/// What the first success response with a schema declares about its
/// collection.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Declared {
    /// The dot-path of the collection: `Some(vec![])` for a top-level array.
    pub path: Option<Vec<String>>,
    /// The response's field paths, top level and one level down (where a
    /// next cursor or next link is looked for).
    pub fields: Vec<Vec<String>>,
    /// The field paths its examples show (top level and one level down):
    /// evidence of a next cursor or URL where the schema says nothing.
    pub example_fields: Vec<Vec<String>>,
    /// The response declares a `Link` header.
    pub link_header: bool,
    /// The path was found only by the "single array of objects" rule, which
    /// on a single resource (an order with its `lines`) would be wrong.
    pub by_single_array: bool,
    /// The schema declares an object with properties.
    pub object: bool,
}

/// The declared collection of the first success response with a schema.
pub(crate) fn declared(
    doc: &Doc<'_>,
    operation: &Value,
    op_pointer: &str,
) -> Result<Declared, Error> {
    let Some(responses) = operation.get("responses").and_then(Value::as_object) else {
        return Ok(Declared::default());
    };
    let responses_at = child(op_pointer, "responses");
    let mut codes: Vec<&String> = Vec::new();
    for wanted in ["200", "201", "2XX", "2xx"] {
        codes.extend(responses.keys().filter(|k| k.as_str() == wanted));
    }
    let other_2xx: Vec<&String> = responses
        .keys()
        .filter(|k| {
            k.len() == 3
                && k.starts_with('2')
                && k.chars().all(|c| c.is_ascii_digit())
                && !codes.contains(k)
        })
        .collect();
    codes.extend(other_2xx);
    for code in codes {
        let Some(response) = responses.get(code) else {
            continue;
        };
        let Resolved::Found(response, at) = doc.deref(response, &child(&responses_at, code))?
        else {
            continue;
        };
        let schema = match doc.version {
            Version::Swagger2 => response.get("schema").map(|s| (s, child(&at, "schema"))),
            Version::OpenApi3 => response
                .get("content")
                .and_then(Value::as_object)
                .and_then(json_media)
                .and_then(|(media, m)| {
                    let media_at = child(&child(&at, "content"), media);
                    m.get("schema").map(|s| (s, child(&media_at, "schema")))
                }),
        };
        let link_header = response
            .get("headers")
            .and_then(Value::as_object)
            .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("link")));
        let example_fields = example_fields(doc, response, &at);
        if let Some((schema, schema_at)) = schema {
            let mut declared = path_in(doc, schema, &schema_at)?;
            declared.fields = fields_in(doc, schema, &schema_at)?;
            declared.example_fields = example_fields;
            declared.link_header = link_header;
            return Ok(declared);
        }
        if link_header || !example_fields.is_empty() {
            return Ok(Declared {
                link_header,
                example_fields,
                ..Declared::default()
            });
        }
    }
    Ok(Declared::default())
}

/// A schema seen through its `$ref`s and `allOf`s: its kind and properties.
#[derive(Default)]
struct View<'a> {
    array: bool,
    object: bool,
    /// Items schema of an array, with its pointer.
    items: Option<(&'a Value, String)>,
    properties: Vec<(&'a str, &'a Value, String)>,
}

fn view<'a>(
    doc: &Doc<'a>,
    schema: &'a Value,
    pointer: &str,
    depth: usize,
) -> Result<View<'a>, Error> {
    view_as(doc, schema, pointer, depth, Reading::Collection)
}

/// What a view is for: the collection rule looks through `anyOf`/`oneOf`
/// only where one real member stands with `null`; the search for a next
/// cursor or URL reads every alternative, as many as its allowance holds
/// (alternatives of alternatives could otherwise multiply without end).
#[derive(Clone, Copy)]
enum Reading<'b> {
    Collection,
    Alternatives(&'b Cell<usize>),
}

/// Alternative schemas read for one response's fields.
const MAX_ALTERNATIVES: usize = 256;

fn view_as<'a>(
    doc: &Doc<'a>,
    schema: &'a Value,
    pointer: &str,
    depth: usize,
    reading: Reading<'_>,
) -> Result<View<'a>, Error> {
    let mut out = View::default();
    if depth > MAX_VIEW_DEPTH {
        return Ok(out);
    }
    let Resolved::Found(schema, at) = doc.deref(schema, pointer)? else {
        return Ok(out);
    };
    let Some(obj) = schema.as_object() else {
        return Ok(out);
    };
    let has_type = |name: &str| match obj.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
        _ => false,
    };
    let untyped = obj.get("type").is_none();
    // A list under `items` of a schema not typed `array` is no array: Slack's
    // document lists a schema's alternatives there (`response_metadata`).
    let items_alternatives = match obj.get("items") {
        Some(Value::Array(list)) if !has_type("array") => Some(list),
        _ => None,
    };
    out.array =
        has_type("array") || (untyped && obj.contains_key("items") && items_alternatives.is_none());
    out.object = has_type("object") || (untyped && obj.contains_key("properties"));
    if let (Some(items), None) = (obj.get("items"), items_alternatives) {
        out.items = Some((items, child(&at, "items")));
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        let props_at = child(&at, "properties");
        for (k, v) in props {
            out.properties.push((k.as_str(), v, child(&props_at, k)));
        }
    }
    if let Some(members) = obj.get("allOf").and_then(Value::as_array) {
        let all_at = child(&at, "allOf");
        for (i, member) in members.iter().enumerate() {
            let inner = view_as(doc, member, &format!("{all_at}/{i}"), depth + 1, reading)?;
            absorb(inner, &mut out);
        }
    }
    // `anyOf`/`oneOf` of one real schema and `null` (how 3.1 and some 3.0
    // documents say "nullable"): look through to that one schema. Read for
    // alternatives, every member counts, and so does Slack's `items` list.
    let mut alternatives: Vec<(&Value, String)> = Vec::new();
    for key in ["anyOf", "oneOf"] {
        let Some(members) = obj.get(key).and_then(Value::as_array) else {
            continue;
        };
        let real: Vec<(usize, &Value)> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if matches!(reading, Reading::Alternatives(_)) || real.len() == 1 {
            let key_at = child(&at, key);
            alternatives.extend(real.iter().map(|(i, m)| (*m, format!("{key_at}/{i}"))));
        }
    }
    if let (Reading::Alternatives(_), Some(list)) = (reading, items_alternatives) {
        let items_at = child(&at, "items");
        alternatives.extend(
            list.iter()
                .enumerate()
                .map(|(i, m)| (m, format!("{items_at}/{i}"))),
        );
    }
    for (member, member_at) in alternatives {
        if let Reading::Alternatives(left) = reading {
            match left.get() {
                0 => break,
                n => left.set(n - 1),
            }
        }
        let inner = view_as(doc, member, &member_at, depth + 1, reading)?;
        absorb(inner, &mut out);
    }
    Ok(out)
}

/// Adds what an `allOf` (or nullable `anyOf`) member shows to `out`; the
/// first declaration of a property wins.
fn absorb<'a>(inner: View<'a>, out: &mut View<'a>) {
    out.array |= inner.array;
    out.object |= inner.object;
    if out.items.is_none() {
        out.items = inner.items;
    }
    for p in inner.properties {
        if !out.properties.iter().any(|q| q.0 == p.0) {
            out.properties.push(p);
        }
    }
}

/// The collection rule of SPEC §3.2 applied to a declared schema.
/// The field paths of an object response: its properties, and the
/// properties of its object properties.
/// Alternatives (`anyOf`, `oneOf`, an `items` list) are all read: a field
/// any of them declares may hold the next cursor.
fn fields_in(doc: &Doc<'_>, schema: &Value, pointer: &str) -> Result<Vec<Vec<String>>, Error> {
    let allowance = Cell::new(MAX_ALTERNATIVES);
    let reading = Reading::Alternatives(&allowance);
    let top = view_as(doc, schema, pointer, 0, reading)?;
    let mut out = Vec::new();
    for (name, prop, at) in &top.properties {
        out.push(vec![name.to_string()]);
        let inner = view_as(doc, prop, at, 1, reading)?;
        for (inner_name, _, _) in &inner.properties {
            out.push(vec![name.to_string(), inner_name.to_string()]);
        }
    }
    Ok(out)
}

fn path_in(doc: &Doc<'_>, schema: &Value, pointer: &str) -> Result<Declared, Error> {
    let top = view(doc, schema, pointer, 0)?;
    let found = |path: Vec<String>| Declared {
        path: Some(path),
        by_single_array: false,
        object: top.object,
        ..Declared::default()
    };
    if top.array {
        return Ok(found(Vec::new()));
    }
    if !top.object {
        return Ok(Declared::default());
    }
    if let Some(key) = collection_key(doc, &top)? {
        return Ok(found(vec![key]));
    }
    for (key, sub, at) in &top.properties {
        if METADATA_KEYS.contains(key) {
            continue;
        }
        let inner = view(doc, sub, at, 1)?;
        if inner.object {
            if let Some(inner_key) = collection_key(doc, &inner)? {
                return Ok(found(vec![(*key).to_string(), inner_key]));
            }
        }
    }
    let mut arrays_of_objects = Vec::new();
    for (key, sub, at) in &top.properties {
        if METADATA_KEYS.contains(key) {
            continue;
        }
        let inner = view(doc, sub, at, 1)?;
        if let (true, Some((items, items_at))) = (inner.array, &inner.items) {
            if view(doc, items, items_at, 2)?.object {
                arrays_of_objects.push(*key);
            }
        }
    }
    Ok(Declared {
        path: match arrays_of_objects.as_slice() {
            [only] => Some(vec![(*only).to_string()]),
            _ => None,
        },
        by_single_array: arrays_of_objects.len() == 1,
        // A free-form object (no properties) says nothing either way.
        object: !top.properties.is_empty(),
        ..Declared::default()
    })
}

/// The first property (in document order) named like a collection, not
/// like metadata, whose schema is an array.
fn collection_key(doc: &Doc<'_>, object: &View<'_>) -> Result<Option<String>, Error> {
    for (key, sub, at) in &object.properties {
        if COLLECTION_KEYS.contains(key)
            && !METADATA_KEYS.contains(key)
            && view(doc, sub, at, 1)?.array
        {
            return Ok(Some((*key).to_string()));
        }
    }
    Ok(None)
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "next_field_tests.rs"]
mod next_field_tests;
