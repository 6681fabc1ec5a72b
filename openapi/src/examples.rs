//! A success response's examples as evidence of its fields (issue 21):
//! where the schema says nothing of a next cursor or URL, an example that
//! shows one is read. Swagger 2.0's `examples` by media type, OpenAPI 3's
//! `example` and `examples` (each `value`, `$ref`s followed) of the JSON
//! media type, and the schema's own `example`. An example is evidence
//! only: one that cannot be read is passed over, never an import error.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::body::json_media;
use super::doc::{child, Doc, Resolved, Version};

/// The field paths the examples of `response` (at pointer `at`) show: top
/// level and one level down, each once, in the order first seen.
pub(crate) fn example_fields<'a>(doc: &Doc<'a>, response: &'a Value, at: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for example in examples(doc, response, at) {
        fields_of(example, &mut out, &mut seen);
    }
    out
}

fn examples<'a>(doc: &Doc<'a>, response: &'a Value, at: &str) -> Vec<&'a Value> {
    let mut out = Vec::new();
    let schema = match doc.version {
        Version::Swagger2 => {
            if let Some((_, example)) = response
                .get("examples")
                .and_then(Value::as_object)
                .and_then(json_media)
            {
                out.push(example);
            }
            response.get("schema").map(|s| (s, child(at, "schema")))
        }
        Version::OpenApi3 => {
            let media = response
                .get("content")
                .and_then(Value::as_object)
                .and_then(json_media);
            let Some((name, media)) = media else {
                return out;
            };
            let media_at = child(&child(at, "content"), name);
            out.extend(media.get("example"));
            let named = media.get("examples").and_then(Value::as_object);
            let examples_at = child(&media_at, "examples");
            for (key, example) in named.into_iter().flat_map(Map::iter) {
                if let Ok(Resolved::Found(example, _)) =
                    doc.deref(example, &child(&examples_at, key))
                {
                    out.extend(example.get("value"));
                }
            }
            media.get("schema").map(|s| (s, child(&media_at, "schema")))
        }
    };
    if let Some((schema, schema_at)) = schema {
        if let Ok(Resolved::Found(schema, _)) = doc.deref(schema, &schema_at) {
            out.extend(schema.get("example"));
        }
    }
    out
}

/// Adds the paths `example` shows to `out`. An example written as JSON text
/// (some documents quote theirs) is read as the JSON it holds.
fn fields_of(example: &Value, out: &mut Vec<Vec<String>>, seen: &mut HashSet<Vec<String>>) {
    let parsed;
    let example = match example {
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                parsed = value;
                &parsed
            }
            Err(_) => return,
        },
        other => other,
    };
    let Some(top) = example.as_object() else {
        return;
    };
    let mut add = |path: Vec<String>| {
        if seen.insert(path.clone()) {
            out.push(path);
        }
    };
    for (name, value) in top {
        add(vec![name.clone()]);
        for inner in value.as_object().into_iter().flat_map(Map::keys) {
            add(vec![name.clone(), inner.clone()]);
        }
    }
}
