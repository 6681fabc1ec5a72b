//! An operation's parameters: the path item's and the operation's lists
//! merged (the operation wins by name and location), `$ref`s followed, and
//! each one sorted into a path/query/header `Param`, the Swagger 2.0 `body`
//! parameter, or a Swagger 2.0 `formData` field. Cookie parameters are
//! dropped: nothing sends cookies.

use serde_json::{json, Map, Value};

use super::doc::{child, index, Doc, Resolved};
use super::schema::expand;
use dragnet_core::error::Error;
use dragnet_core::tool::{Param, ParamLocation};

/// Schema keywords a Swagger 2.0 parameter carries on itself.
const SWAGGER_SCHEMA_KEYS: [&str; 17] = [
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "nullable",
];

/// A path/query/header parameter and its entry in the input schema
/// (its schema plus its description).
pub(crate) struct ParamArgument {
    pub param: Param,
    pub property: Value,
}

/// A Swagger 2.0 `in: body` parameter.
pub(crate) struct BodyParam {
    pub schema: Value,
    pub required: bool,
    pub description: Option<String>,
}

/// A Swagger 2.0 `in: formData` parameter.
pub(crate) struct FormField {
    pub name: String,
    pub property: Value,
    pub required: bool,
}

/// Everything the parameter lists of one operation say.
#[derive(Default)]
pub(crate) struct Parameters {
    pub params: Vec<ParamArgument>,
    pub body: Option<BodyParam>,
    pub form: Vec<FormField>,
}

/// One raw parameter after `$ref`s: its name, location, object and pointer.
struct Raw<'a> {
    name: &'a str,
    location: &'a str,
    object: &'a Map<String, Value>,
    pointer: String,
}

/// Reads the parameter lists of a path item (`item_params`) and of one of
/// its operations (`op_params`), each given with its pointer.
pub(crate) fn collect(
    doc: &Doc<'_>,
    path: &str,
    item_params: Option<(&Value, String)>,
    op_params: Option<(&Value, String)>,
) -> Result<Parameters, Error> {
    let mut raws: Vec<Raw<'_>> = Vec::new();
    for (list, pointer) in [item_params, op_params].into_iter().flatten() {
        let Some(list) = list.as_array() else {
            return Err(doc.invalid(&pointer, "`parameters` must be a list"));
        };
        for (i, entry) in list.iter().enumerate() {
            let Some(raw) = read_raw(doc, entry, &index(&pointer, i))? else {
                continue;
            };
            match raws
                .iter_mut()
                .find(|r| r.name == raw.name && r.location == raw.location)
            {
                Some(slot) => *slot = raw,
                None => raws.push(raw),
            }
        }
    }
    let mut out = Parameters::default();
    for raw in raws {
        add(doc, &mut out, raw)?;
    }
    add_undeclared_path_params(&mut out, path);
    Ok(out)
}

fn read_raw<'a>(doc: &Doc<'a>, entry: &'a Value, pointer: &str) -> Result<Option<Raw<'a>>, Error> {
    let (value, pointer) = match doc.deref(entry, pointer)? {
        Resolved::Found(value, at) => (value, at),
        Resolved::Elsewhere => return Ok(None),
    };
    let Some(object) = value.as_object() else {
        return Err(doc.invalid(&pointer, "a parameter must be an object"));
    };
    let Some(name) = object.get("name").and_then(Value::as_str) else {
        return Err(doc.invalid(&pointer, "a parameter needs a string `name`"));
    };
    let Some(location) = object.get("in").and_then(Value::as_str) else {
        return Err(doc.invalid(&pointer, format!("parameter `{name}` needs a string `in`")));
    };
    Ok(Some(Raw {
        name,
        location,
        object,
        pointer,
    }))
}

fn add(doc: &Doc<'_>, out: &mut Parameters, raw: Raw<'_>) -> Result<(), Error> {
    let required = raw.object.get("required").and_then(Value::as_bool) == Some(true);
    let description = raw
        .object
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let location = match raw.location {
        "path" => ParamLocation::Path,
        "query" => ParamLocation::Query,
        "header" => ParamLocation::Header,
        "cookie" => return Ok(()),
        "body" => {
            if out.body.is_none() {
                out.body = Some(BodyParam {
                    schema: param_schema(doc, raw.object, &raw.pointer)?,
                    required,
                    description: description.map(str::to_string),
                });
            }
            return Ok(());
        }
        "formData" => {
            let schema = param_schema(doc, raw.object, &raw.pointer)?;
            out.form.push(FormField {
                name: raw.name.to_string(),
                property: with_description(schema, description),
                required,
            });
            return Ok(());
        }
        other => {
            return Err(doc.invalid(
                &child(&raw.pointer, "in"),
                format!("unknown parameter location `{other}`"),
            ))
        }
    };
    // OpenAPI 3 says these three headers are described elsewhere and their
    // parameter definitions are ignored.
    if location == ParamLocation::Header
        && ["accept", "content-type", "authorization"]
            .contains(&raw.name.to_ascii_lowercase().as_str())
    {
        return Ok(());
    }
    let schema = param_schema(doc, raw.object, &raw.pointer)?;
    let argument = ParamArgument {
        property: with_description(schema.clone(), description),
        param: Param {
            name: raw.name.to_string(),
            location,
            // Path parameters are always required, whatever the document says.
            required: required || location == ParamLocation::Path,
            schema,
        },
    };
    // One argument per name: on a clash across locations, path beats query
    // beats header (a path parameter cannot be left out of the URL).
    match out.params.iter_mut().find(|p| p.param.name == raw.name) {
        Some(existing) if rank(location) < rank(existing.param.location) => *existing = argument,
        Some(_) => {}
        None => out.params.push(argument),
    }
    Ok(())
}

fn rank(location: ParamLocation) -> u8 {
    match location {
        ParamLocation::Path => 0,
        ParamLocation::Query => 1,
        ParamLocation::Header => 2,
    }
}

/// The schema of one parameter: OpenAPI 3 `schema` or `content.*.schema`,
/// else the Swagger 2.0 keywords on the parameter itself.
fn param_schema(doc: &Doc<'_>, param: &Map<String, Value>, pointer: &str) -> Result<Value, Error> {
    if let Some(schema) = param.get("schema") {
        return expand(doc, schema, &child(pointer, "schema"));
    }
    if let Some(Value::Object(content)) = param.get("content") {
        let content_at = child(pointer, "content");
        return match content.iter().next() {
            Some((media, m)) => match m.get("schema") {
                Some(schema) => expand(doc, schema, &child(&child(&content_at, media), "schema")),
                None => Ok(json!({})),
            },
            None => Ok(json!({})),
        };
    }
    let mut schema: Map<String, Value> = SWAGGER_SCHEMA_KEYS
        .iter()
        .filter_map(|k| param.get(*k).map(|v| ((*k).to_string(), v.clone())))
        .collect();
    if schema.get("type").and_then(Value::as_str) == Some("file") {
        schema.insert("type".into(), "string".into());
        schema.insert("format".into(), "binary".into());
    }
    expand(doc, &Value::Object(schema), pointer)
}

/// `schema` with `description` set (the parameter's own text wins).
pub(crate) fn with_description(schema: Value, description: Option<&str>) -> Value {
    let Some(description) = description else {
        return schema;
    };
    let mut map = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.insert("description".into(), description.into());
    Value::Object(map)
}

/// A `{name}` in the path template with no parameter declared for it gets
/// a required string path parameter, so the URL can still be built.
fn add_undeclared_path_params(out: &mut Parameters, path: &str) {
    for name in template_names(path) {
        let declared = out
            .params
            .iter()
            .any(|p| p.param.name == name && p.param.location == ParamLocation::Path);
        if declared {
            continue;
        }
        let schema = json!({"type": "string"});
        let argument = ParamArgument {
            property: schema.clone(),
            param: Param {
                name: name.to_string(),
                location: ParamLocation::Path,
                required: true,
                schema,
            },
        };
        match out.params.iter_mut().find(|p| p.param.name == name) {
            Some(existing) => *existing = argument,
            None => out.params.push(argument),
        }
    }
}

/// The `{name}`s of a path template, in order.
fn template_names(path: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let after = rest.get(open + 1..).unwrap_or("");
        let Some(close) = after.find('}') else {
            break;
        };
        let name = after.get(..close).unwrap_or("");
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
        rest = after.get(close + 1..).unwrap_or("");
    }
    names
}

#[cfg(test)]
mod tests {
    use super::template_names;

    #[test]
    fn template_names_in_order() {
        assert_eq!(template_names("/a/{x}/b/{y}.json"), ["x", "y"]);
        assert_eq!(template_names("/a/{x"), Vec::<&str>::new());
        assert_eq!(template_names("/{}/{x}/{x}"), ["x"]);
    }
}
