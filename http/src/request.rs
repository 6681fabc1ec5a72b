//! Building a request from a tool and its arguments: path parameters are
//! substituted (percent-encoded), query and header parameters collected, the
//! body assembled from its arguments. Pure, so it is tested without a server.

use serde_json::{Map, Value};

use dragnet_core::tool::{BodyArguments, BodyEncoding, ParamLocation, Tool};
use dragnet_core::Error;

/// Everything needed to send one request, before credentials.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestParts {
    /// Path with parameters substituted, e.g. `/properties/7/orders`.
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: Option<(BodyEncoding, Value)>,
}

/// Builds the request parts. Arguments that are not parameters or body
/// arguments of the tool are ignored here (validation rejected them before).
pub fn build_parts(tool: &Tool, args: &Map<String, Value>) -> Result<RequestParts, Error> {
    let mut path = tool.path.clone();
    let mut query = Vec::new();
    let mut headers = Vec::new();
    for param in &tool.params {
        let Some(value) = args.get(&param.name).filter(|v| !v.is_null()) else {
            if param.required {
                return Err(Error::InvalidArgument {
                    argument: param.name.clone(),
                    message: format!("required {} parameter is missing", param.location.as_str()),
                });
            }
            continue;
        };
        match param.location {
            ParamLocation::Path => {
                let text = scalar_text(value);
                path = path.replace(&format!("{{{}}}", param.name), &encode_segment(&text));
            }
            ParamLocation::Query => match value {
                Value::Array(list) => {
                    for v in list.iter().filter(|v| !v.is_null()) {
                        query.push((param.name.clone(), scalar_text(v)));
                    }
                }
                other => query.push((param.name.clone(), scalar_text(other))),
            },
            ParamLocation::Header => headers.push((param.name.clone(), scalar_text(value))),
        }
    }
    let body = tool.body.as_ref().and_then(|body| {
        let value = match &body.arguments {
            BodyArguments::Whole => args.get("body").cloned(),
            BodyArguments::Flattened { properties } => {
                let object: Map<String, Value> = properties
                    .iter()
                    .filter_map(|p| args.get(p).map(|v| (p.clone(), v.clone())))
                    .collect();
                (!object.is_empty() || body.required).then_some(Value::Object(object))
            }
        };
        value.map(|v| (body.encoding, v))
    });
    Ok(RequestParts {
        path,
        query,
        headers,
        body,
    })
}

/// A scalar as it goes into a URL or header; objects and arrays as JSON.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// Percent-encodes one path segment (RFC 3986 unreserved kept).
fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dragnet_core::paging::detect::Walkability;
    use dragnet_core::tool::{Body, Method, Param};
    use serde_json::json;

    fn tool(body: Option<Body>) -> Tool {
        Tool {
            name: "t".into(),
            description: String::new(),
            method: Method::Post,
            path: "/props/{id}/orders".into(),
            params: vec![
                Param {
                    name: "id".into(),
                    location: ParamLocation::Path,
                    required: true,
                    schema: json!({"type":"string"}),
                },
                Param {
                    name: "status".into(),
                    location: ParamLocation::Query,
                    required: false,
                    schema: json!({"type":"array"}),
                },
                Param {
                    name: "X-Trace".into(),
                    location: ParamLocation::Header,
                    required: false,
                    schema: json!({"type":"string"}),
                },
            ],
            body,
            input_schema: json!({"type":"object"}),
            response_items_path: None,
            response_is_resource: false,
            cursor: None,
            walkability: Walkability::NoPaging,
        }
    }

    #[test]
    fn parameters_land_where_they_belong() {
        let body = Body {
            encoding: BodyEncoding::Json,
            required: false,
            schema: json!({}),
            arguments: BodyArguments::Flattened {
                properties: vec!["paging".into(), "filter".into()],
            },
        };
        let args = json!({"id":"a b/c","status":["open","paid"],"X-Trace":"1",
                          "paging":{"page":2},"ignored":1});
        let parts = build_parts(&tool(Some(body)), args.as_object().unwrap()).unwrap();
        assert_eq!(parts.path, "/props/a%20b%2Fc/orders");
        assert_eq!(
            parts.query,
            vec![
                ("status".into(), "open".into()),
                ("status".into(), "paid".into())
            ]
        );
        assert_eq!(parts.headers, vec![("X-Trace".into(), "1".into())]);
        assert_eq!(
            parts.body,
            Some((BodyEncoding::Json, json!({"paging":{"page":2}})))
        );
    }

    #[test]
    fn missing_required_path_parameter() {
        let err = build_parts(&tool(None), &Map::new()).unwrap_err();
        assert!(err.to_string().contains("`id`"), "{err}");
    }
}
