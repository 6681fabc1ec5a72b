//! The request body of an operation: which media type is used, how it is
//! encoded, and whether its properties become top-level arguments
//! (`Flattened`) or the body is one argument named `body` (`Whole`).

use serde_json::{json, Map, Value};

use super::doc::{child, Doc, Resolved};
use super::params::{FormField, Parameters};
use super::schema::expand;
use dragnet_core::error::Error;
use dragnet_core::tool::{Body, BodyArguments, BodyEncoding};

/// What a media-type key says about the encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MediaKind {
    Json,
    Form,
    Other,
}

/// Classifies a media-type key (`application/json; charset=utf-8`,
/// `application/vnd.api+json`, `application/x-www-form-urlencoded`…).
pub(crate) fn media_kind(media: &str) -> MediaKind {
    let essence = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence.contains("json") {
        MediaKind::Json
    } else if essence == "application/x-www-form-urlencoded" {
        MediaKind::Form
    } else {
        MediaKind::Other
    }
}

/// The JSON media type of a `content` map: `application/json` exactly,
/// else the first whose type mentions `json` (`+json`, `json-patch`…).
pub(crate) fn json_media(content: &Map<String, Value>) -> Option<(&String, &Value)> {
    content
        .iter()
        .find(|(k, _)| {
            k.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        })
        .or_else(|| {
            content
                .iter()
                .find(|(k, _)| media_kind(k) == MediaKind::Json)
        })
}

/// The body of an OpenAPI 3 operation from its `requestBody`, if any.
pub(crate) fn from_request_body(
    doc: &Doc<'_>,
    request_body: &Value,
    pointer: &str,
) -> Result<Option<(Body, Option<String>)>, Error> {
    let (value, at) = match doc.deref(request_body, pointer)? {
        Resolved::Found(value, at) => (value, at),
        Resolved::Elsewhere => return Ok(None),
    };
    let Some(object) = value.as_object() else {
        return Err(doc.invalid(&at, "`requestBody` must be an object"));
    };
    let Some(content) = object.get("content").and_then(Value::as_object) else {
        return Ok(None);
    };
    // JSON first; then a urlencoded form; otherwise (multipart, octet-stream,
    // text…) the first media type's schema, sent as JSON: dragnet calls JSON
    // APIs, and an argument schema is still better than dropping the body.
    let chosen = json_media(content)
        .map(|(k, v)| (k, v, BodyEncoding::Json))
        .or_else(|| {
            content
                .iter()
                .find(|(k, _)| media_kind(k) == MediaKind::Form)
                .map(|(k, v)| (k, v, BodyEncoding::Form))
        })
        .or_else(|| {
            content
                .iter()
                .next()
                .map(|(k, v)| (k, v, BodyEncoding::Json))
        });
    let Some((media, media_object, encoding)) = chosen else {
        return Ok(None);
    };
    let schema = match media_object.get("schema") {
        Some(schema) => expand(
            doc,
            schema,
            &child(&child(&child(&at, "content"), media), "schema"),
        )?,
        None => json!({}),
    };
    let description = object
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    let body = Body {
        encoding,
        required: object.get("required").and_then(Value::as_bool) == Some(true),
        schema,
        arguments: BodyArguments::Whole,
    };
    Ok(Some((body, description)))
}

/// The body of a Swagger 2.0 operation: its `in: body` parameter (JSON), else
/// its `formData` parameters (a urlencoded form).
pub(crate) fn from_swagger_params(params: &mut Parameters) -> Option<(Body, Option<String>)> {
    if let Some(body) = params.body.take() {
        return Some((
            Body {
                encoding: BodyEncoding::Json,
                required: body.required,
                schema: body.schema,
                arguments: BodyArguments::Whole,
            },
            body.description,
        ));
    }
    if params.form.is_empty() {
        return None;
    }
    let fields: Vec<FormField> = std::mem::take(&mut params.form);
    let required: Vec<Value> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| Value::String(f.name.clone()))
        .collect();
    let any_required = !required.is_empty();
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert(
        "properties".into(),
        Value::Object(fields.into_iter().map(|f| (f.name, f.property)).collect()),
    );
    if any_required {
        schema.insert("required".into(), Value::Array(required));
    }
    Some((
        Body {
            encoding: BodyEncoding::Form,
            required: any_required,
            schema: Value::Object(schema),
            arguments: BodyArguments::Whole,
        },
        None,
    ))
}

/// Whether a body schema admits nothing but `{}` (an object with no
/// properties and `additionalProperties: false`). Stripe declares such a
/// body on every GET; as an optional argument it is only noise.
pub(crate) fn admits_only_empty_object(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    let no_properties = object
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    let closed = object.get("additionalProperties") == Some(&Value::Bool(false));
    let open_keys = ["patternProperties", "allOf", "anyOf", "oneOf"];
    no_properties && closed && !open_keys.iter().any(|k| object.contains_key(*k))
}

/// `Flattened` when the body schema is a plain object with properties, none
/// named like a parameter; `Whole` otherwise (not an object, no properties,
/// a `oneOf`/`anyOf` whose alternatives flattening would lose, or a clash).
pub(crate) fn arguments(schema: &Value, param_names: &[&str]) -> BodyArguments {
    let Some(object) = schema.as_object() else {
        return BodyArguments::Whole;
    };
    let is_object = match object.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
    };
    let Some(properties) = object.get("properties").and_then(Value::as_object) else {
        return BodyArguments::Whole;
    };
    let plain = is_object && !object.contains_key("oneOf") && !object.contains_key("anyOf");
    let clash = properties.keys().any(|k| param_names.contains(&k.as_str()));
    if !plain || properties.is_empty() || clash {
        return BodyArguments::Whole;
    }
    BodyArguments::Flattened {
        properties: properties.keys().cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_kinds() {
        assert_eq!(
            media_kind("application/json; charset=utf-8"),
            MediaKind::Json
        );
        assert_eq!(media_kind("application/vnd.api+json"), MediaKind::Json);
        assert_eq!(
            media_kind("application/x-www-form-urlencoded"),
            MediaKind::Form
        );
        assert_eq!(media_kind("multipart/form-data"), MediaKind::Other);
    }

    #[test]
    fn exact_json_beats_earlier_json_variant() {
        let content =
            json!({"application/merge-patch+json": {"n": 1}, "application/json": {"n": 2}});
        let (key, _) = json_media(content.as_object().unwrap()).unwrap();
        assert_eq!(key, "application/json");
    }

    #[test]
    fn empty_object_bodies() {
        assert!(admits_only_empty_object(
            &json!({"type":"object","properties":{},"additionalProperties":false})
        ));
        assert!(!admits_only_empty_object(&json!({"type":"object"})));
        assert!(!admits_only_empty_object(
            &json!({"properties":{"a":{}},"additionalProperties":false})
        ));
    }

    #[test]
    fn flattened_or_whole() {
        let obj = json!({"type":"object","properties":{"a":{},"b":{}}});
        assert_eq!(
            arguments(&obj, &["id"]),
            BodyArguments::Flattened {
                properties: vec!["a".into(), "b".into()]
            }
        );
        assert_eq!(arguments(&obj, &["b"]), BodyArguments::Whole);
        assert_eq!(
            arguments(&json!({"type":"array"}), &[]),
            BodyArguments::Whole
        );
        assert_eq!(
            arguments(&json!({"type":"object","properties":{}}), &[]),
            BodyArguments::Whole
        );
        let one_of = json!({"properties":{"a":{}},"oneOf":[{"required":["a"]}]});
        assert_eq!(arguments(&one_of, &[]), BodyArguments::Whole);
    }
}
