//! Arguments: checked against the tool's input schema before any request
//! (SPEC §2), and parsed from the CLI's `name=value` form with the schema's
//! types. Errors name the argument.

use serde_json::{Map, Value};

use crate::looping::for_each::coerce;
use crate::looping::page_plan::set_path;
use crate::{Error, Tool};

/// Validates arguments: no unknown names, required ones present (except
/// those in `supplied`, which the loop layer fills), types and enums right.
pub fn validate(tool: &Tool, args: &Map<String, Value>, supplied: &[&str]) -> Result<(), Error> {
    let names = tool.argument_names();
    for (name, value) in args {
        let Some(schema) = tool.argument_schema(name) else {
            return Err(Error::InvalidArgument {
                argument: name.clone(),
                message: format!(
                    "not a parameter of `{}`; its parameters are: {}",
                    tool.name,
                    list(&names)
                ),
            });
        };
        check(name, value, schema)?;
    }
    let required = tool.required_arguments();
    if let Some(missing) = required
        .iter()
        .find(|r| !args.contains_key(**r) && !supplied.contains(r))
    {
        return Err(Error::InvalidArgument {
            argument: (*missing).to_string(),
            message: format!("required by `{}` but missing", tool.name),
        });
    }
    Ok(())
}

/// Checks one value against its schema: type and enum, and one level into
/// objects.
fn check(name: &str, value: &Value, schema: &Value) -> Result<(), Error> {
    if value.is_null() {
        return Ok(());
    }
    let bad = |message: String| Error::InvalidArgument {
        argument: name.to_string(),
        message,
    };
    if let Some(ty) = declared_type(schema) {
        let ok = match ty {
            "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
            "number" => value.is_number(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        if !ok {
            return Err(bad(format!("expected {ty}, got {}", short(value))));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.is_empty() && !options.contains(value) {
            return Err(bad(format!(
                "{} is not one of {}",
                short(value),
                list(&options.iter().map(short).collect::<Vec<_>>())
            )));
        }
    }
    if let (Value::Object(inner), Some(props)) =
        (value, schema.get("properties").and_then(Value::as_object))
    {
        for (key, v) in inner {
            if let Some(s) = props.get(key) {
                check(&format!("{name}.{key}"), v, s)?;
            }
        }
    }
    Ok(())
}

fn declared_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(s) => Some(s.as_str()),
        Value::Array(list) => {
            let real: Vec<&str> = list
                .iter()
                .filter_map(Value::as_str)
                .filter(|s| *s != "null")
                .collect();
            (real.len() == 1).then(|| real[0])
        }
        _ => None,
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

/// Parses CLI arguments `name=value` (dotted names set nested body fields,
/// e.g. `paging.pageSize=50`) into an argument object, typed by the schema.
pub fn parse_pairs(tool: &Tool, pairs: &[String]) -> Result<Map<String, Value>, Error> {
    let mut args = Map::new();
    for pair in pairs {
        let Some((name, text)) = pair.split_once('=') else {
            return Err(Error::InvalidArgument {
                argument: pair.clone(),
                message: "expected name=value".into(),
            });
        };
        let path: Vec<String> = name.split('.').map(str::to_string).collect();
        if path.iter().any(String::is_empty) {
            return Err(Error::InvalidArgument {
                argument: name.to_string(),
                message: "an argument name cannot be empty".into(),
            });
        }
        let schema = schema_at(tool, &path);
        let value = parse_value(name, text, schema)?;
        set_path(&mut args, &path, value);
    }
    Ok(args)
}

fn schema_at<'t>(tool: &'t Tool, path: &[String]) -> Option<&'t Value> {
    let (first, rest) = path.split_first()?;
    let mut schema = tool.argument_schema(first)?;
    for key in rest {
        schema = schema.get("properties")?.get(key)?;
    }
    Some(schema)
}

/// Types one CLI value by its schema; arrays take JSON or commas.
pub fn parse_value(name: &str, text: &str, schema: Option<&Value>) -> Result<Value, Error> {
    let bad = |message: String| Error::InvalidArgument {
        argument: name.to_string(),
        message,
    };
    let Some(schema) = schema else {
        return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into())));
    };
    match declared_type(schema) {
        Some("array") => {
            if text.trim_start().starts_with('[') {
                return serde_json::from_str(text)
                    .map_err(|e| bad(format!("not a JSON array: {e}")));
            }
            let items = schema.get("items").cloned().unwrap_or(Value::Null);
            text.split(',')
                .map(|part| coerce(&Value::String(part.trim().into()), &items).map_err(&bad))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Some("object") => {
            serde_json::from_str(text).map_err(|e| bad(format!("not a JSON object: {e}")))
        }
        Some(_) => coerce(&Value::String(text.into()), schema).map_err(bad),
        None => Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()))),
    }
}
