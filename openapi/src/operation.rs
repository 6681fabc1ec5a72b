//! One operation (path × method) → one `Tool` (without its final name):
//! parameters, body, the input schema built from both, paging detection and
//! the declared collection of the success response.

use serde_json::{Map, Value};

use super::body;
use super::doc::{child, Doc};
use super::naming;
use super::params::{self, with_description};
use super::response;
use dragnet_core::error::Error;
use dragnet_core::paging::cursor;
use dragnet_core::paging::detect::{self, PagingParam, Walkability};
use dragnet_core::tool::{Body, BodyArguments, Method, Tool};

/// A tool as built from its operation, before the toolkit names it.
pub(crate) struct Built {
    /// The `operationId` as written (trimmed), when there is one.
    pub operation_id: Option<String>,
    /// The operation's key under `paths` (fragment kept), for naming.
    pub path_key: String,
    pub tool: Tool,
}

/// Where an operation sits in the document.
pub(crate) struct Site<'a> {
    pub path: &'a str,
    pub method: Method,
    pub operation: &'a Value,
    pub pointer: String,
    /// The path item's own `parameters`, with their pointer.
    pub item_params: Option<(&'a Value, String)>,
}

/// Builds the tool for one operation.
pub(crate) fn build<'a>(doc: &Doc<'a>, site: Site<'a>) -> Result<Built, Error> {
    let Some(op) = site.operation.as_object() else {
        return Err(doc.invalid(&site.pointer, "an operation must be an object"));
    };
    let op_params = op
        .get("parameters")
        .map(|p| (p, child(&site.pointer, "parameters")));
    let mut parameters = params::collect(doc, site.path, site.item_params, op_params)?;
    let body = match op.get("requestBody") {
        Some(request_body) => {
            body::from_request_body(doc, request_body, &child(&site.pointer, "requestBody"))?
        }
        None => body::from_swagger_params(&mut parameters),
    }
    .filter(|(b, _)| b.required || !body::admits_only_empty_object(&b.schema));

    let names: Vec<&str> = parameters
        .params
        .iter()
        .map(|p| p.param.name.as_str())
        .collect();
    let body = body.map(|(mut b, description)| {
        b.arguments = body::arguments(&b.schema, &names);
        (b, description)
    });
    if let Some((
        Body {
            arguments: BodyArguments::Whole,
            ..
        },
        _,
    )) = &body
    {
        // One argument per name: a parameter literally named `body` gives
        // way to the body (no document in the corpus has one).
        parameters.params.retain(|p| p.param.name != "body");
    }

    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for p in &parameters.params {
        properties.insert(p.param.name.clone(), p.property.clone());
        if p.param.required {
            required.push(Value::String(p.param.name.clone()));
        }
    }
    if let Some((b, description)) = &body {
        match &b.arguments {
            BodyArguments::Flattened { properties: keys } => {
                let body_required = b.schema.get("required").and_then(Value::as_array);
                for key in keys {
                    if let Some(schema) = b.schema.get("properties").and_then(|p| p.get(key)) {
                        properties.insert(key.clone(), schema.clone());
                    }
                    let needed = body_required.is_some_and(|r| r.iter().any(|n| n == key.as_str()));
                    // Required inside the body only binds when the body does.
                    if b.required && needed {
                        required.push(Value::String(key.clone()));
                    }
                }
            }
            BodyArguments::Whole => {
                properties.insert(
                    "body".into(),
                    with_description(b.schema.clone(), description.as_deref()),
                );
                if b.required {
                    required.push(Value::String("body".into()));
                }
            }
        }
    }
    let body = body.map(|(b, _)| b);
    let mut input_schema = Map::new();
    input_schema.insert("type".into(), "object".into());
    input_schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        input_schema.insert("required".into(), Value::Array(required));
    }
    let input_schema = Value::Object(input_schema);

    let param_list: Vec<_> = parameters.params.into_iter().map(|p| p.param).collect();
    let whole_body = matches!(
        body.as_ref().map(|b| &b.arguments),
        Some(BodyArguments::Whole)
    );
    let location = |name: &str| -> Option<&'static str> {
        param_list
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.location.as_str())
    };
    let walkability = detect::detect(&input_schema, &location, whole_body);
    let declared = response::declared(doc, site.operation, &site.pointer)?;
    // A lone nested array of objects is the collection of a list operation
    // (one with paging parameters), not of a single resource like an order
    // and its lines: without paging, such a response is returned whole.
    let cursor = match walkability.is_walkable() {
        true => None,
        false => {
            let param = cursor::CURSOR_PARAMS.iter().find_map(|name| {
                let schema = input_schema["properties"].get(*name)?;
                Some(PagingParam {
                    name: (*name).to_string(),
                    arg_path: vec![(*name).to_string()],
                    location: location(name).unwrap_or("body").to_string(),
                    minimum: None,
                    maximum: None,
                    default: schema.get("default").and_then(Value::as_i64),
                })
            });
            let size = input_schema["properties"]
                .as_object()
                .and_then(|props| props.iter().find(|(name, _)| cursor::is_size_param(name)))
                .map(|(name, schema)| PagingParam {
                    name: name.clone(),
                    arg_path: vec![name.clone()],
                    location: location(name).unwrap_or("body").to_string(),
                    minimum: schema.get("minimum").and_then(Value::as_i64),
                    maximum: schema.get("maximum").and_then(Value::as_i64),
                    default: schema.get("default").and_then(Value::as_i64),
                });
            // What the schema declares first; where it says nothing of a
            // next cursor or URL, what the response's examples show.
            cursor::detect(param.clone(), &declared.fields, declared.link_header)
                .or_else(|| cursor::detect(param, &declared.example_fields, false))
                .map(|paging| cursor::CursorPaging { size, ..paging })
        }
    };
    let list_like = walkability != Walkability::NoPaging || cursor.is_some();
    let (response_items_path, response_is_resource) = match declared.path {
        Some(_) if declared.by_single_array && !list_like => (None, true),
        Some(path) => (Some(path), false),
        None => (None, declared.object),
    };

    let text = |key: &str| op.get(key).and_then(Value::as_str);
    let operation_id = text("operationId")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Ok(Built {
        operation_id,
        path_key: site.path.to_string(),
        tool: Tool {
            name: String::new(),
            description: naming::description(text("summary"), text("description")),
            method: site.method,
            path: url_path(site.path).to_string(),
            params: param_list,
            body,
            input_schema,
            response_items_path,
            response_is_resource,
            walkability,
            cursor,
        },
    })
}

/// The path to request for a `paths` key. Some documents tell variants of
/// one path apart with a fragment (`/v1/conversations#stream`); a fragment is
/// never sent, so it is cut here (the tool name keeps the variant apart).
fn url_path(key: &str) -> &str {
    key.split('#').next().unwrap_or(key)
}
