//! Arguments: checked against the tool's input schema before any request
//! (SPEC §2), and parsed from the CLI's `name=value` form with the schema's
//! types. Errors name the argument. Also the coercion of a value to its
//! schema's type and the paths into nested arguments the walks set.

use serde_json::{Map, Value};

use crate::error::Error;
use crate::tool::Tool;

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
                .map(|part| {
                    coerce(&Value::String(part.trim().into()), &items)
                        .map_err(|e| bad(e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Some("object") => {
            serde_json::from_str(text).map_err(|e| bad(format!("not a JSON object: {e}")))
        }
        Some(_) => coerce(&Value::String(text.into()), schema).map_err(|e| bad(e.to_string())),
        None => Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()))),
    }
}

/// A value that is not of the type its schema declares.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a valid {expected}")]
pub struct NotOfType {
    pub value: Value,
    /// `integer`, `number` or `boolean`.
    pub expected: &'static str,
}

/// Coerces a value to the type its schema declares.
pub fn coerce(value: &Value, schema: &Value) -> Result<Value, NotOfType> {
    let declared = schema.get("type").and_then(|t| match t {
        Value::String(s) => Some(s.as_str()),
        Value::Array(list) => list.iter().filter_map(Value::as_str).find(|s| *s != "null"),
        _ => None,
    });
    let fail = |expected: &'static str| {
        Err(NotOfType {
            value: value.clone(),
            expected,
        })
    };
    match (declared, value) {
        (Some("integer"), Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(value.clone()),
        (Some("integer"), Value::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Value::from(f as i64)),
            _ => fail("integer"),
        },
        (Some("integer"), Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| fail("integer")),
        (Some("integer"), _) => fail("integer"),
        (Some("number"), Value::Number(_)) => Ok(value.clone()),
        (Some("number"), Value::String(s)) => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => serde_json::Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| NotOfType {
                    value: value.clone(),
                    expected: "number",
                }),
            _ => fail("number"),
        },
        (Some("number"), _) => fail("number"),
        (Some("boolean"), Value::Bool(_)) => Ok(value.clone()),
        (Some("boolean"), Value::String(s)) => match s.trim() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => fail("boolean"),
        },
        (Some("boolean"), _) => fail("boolean"),
        (Some("string"), Value::String(_)) => Ok(value.clone()),
        (Some("string"), Value::Number(n)) => Ok(Value::String(n.to_string())),
        (Some("string"), Value::Bool(b)) => Ok(Value::String(b.to_string())),
        (Some("string"), _) => fail("string"),
        _ => Ok(value.clone()),
    }
}

/// The value at a path of object keys.
pub fn get_path<'v>(args: &'v Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (last, parents) = path.split_last()?;
    let mut map = args;
    for key in parents {
        map = map.get(key)?.as_object()?;
    }
    map.get(last)
}

/// Sets the value at a path, creating (or replacing non-object) parents.
pub fn set_path(args: &mut Map<String, Value>, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut map = args;
    for key in parents {
        let slot = map
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(inner) = slot else { return };
        map = inner;
    }
    map.insert(last.clone(), value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coercion() {
        let int = json!({"type":"integer"});
        assert_eq!(coerce(&json!("5"), &int), Ok(json!(5)));
        assert_eq!(coerce(&json!(5.0), &int), Ok(json!(5)));
        assert_eq!(
            coerce(&json!("five"), &int).unwrap_err().to_string(),
            "`\"five\"` is not a valid integer"
        );
        assert_eq!(coerce(&json!(7), &json!({"type":"string"})), Ok(json!("7")));
        assert_eq!(
            coerce(&json!("true"), &json!({"type":"boolean"})),
            Ok(json!(true))
        );
        assert_eq!(
            coerce(&json!("2.5"), &json!({"type":["number","null"]})),
            Ok(json!(2.5))
        );
        assert_eq!(coerce(&json!({"a":1}), &json!({})), Ok(json!({"a":1})));
    }
}
