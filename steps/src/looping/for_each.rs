//! `_for_each` (SPEC §3.6): the key must be a parameter of the tool; values
//! are de-duplicated in first-seen order and coerced to the parameter's
//! declared type; each row is tagged with its value unless the row already
//! has that field.

use serde_json::Value;

use crate::items::Items;
use crate::json;
use crate::json_scan;
use crate::{Error, Tool};

/// A validated fan-out: the key and its unique values, coerced where they
/// could be; a value that could not be coerced carries its error.
#[derive(Debug, Clone, PartialEq)]
pub struct ForEach {
    pub key: String,
    pub values: Vec<Result<Value, (Value, String)>>,
}

impl ForEach {
    /// Checks the key against the tool and prepares the values.
    pub fn new(tool: &Tool, key: &str, values_in: &[Value]) -> Result<ForEach, Error> {
        let Some(schema) = tool.argument_schema(key) else {
            return Err(Error::InvalidForEachKey {
                key: key.to_string(),
                tool: tool.name.clone(),
                parameters: tool.argument_names(),
            });
        };
        // De-duplicate after coercion, so `"5"` and `5` are one value.
        let mut values: Vec<Result<Value, (Value, String)>> = Vec::new();
        for raw in values_in {
            let coerced = coerce(raw, schema).map_err(|e| (raw.clone(), e));
            if !values.contains(&coerced) {
                values.push(coerced);
            }
        }
        Ok(ForEach {
            key: key.to_string(),
            values,
        })
    }

    /// The coerced values, sorted; what a cache key is made of.
    pub fn sorted_values(&self) -> Vec<Value> {
        let mut out: Vec<Value> = self.values.iter().filter_map(|v| v.clone().ok()).collect();
        out.sort_by_key(|v| v.to_string());
        out
    }
}

/// Coerces a value to the type its schema declares.
pub fn coerce(value: &Value, schema: &Value) -> Result<Value, String> {
    let declared = schema.get("type").and_then(|t| match t {
        Value::String(s) => Some(s.as_str()),
        Value::Array(list) => list.iter().filter_map(Value::as_str).find(|s| *s != "null"),
        _ => None,
    });
    let fail = |ty: &str| Err(format!("`{value}` is not a valid {ty}"));
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
                .ok_or_else(|| format!("`{value}` is not a valid number")),
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

/// Appends `item` to `items` with `key: value` added, unless the item is
/// not an object or already has `key` (then it is appended as it is).
pub fn tag_into(items: &mut Items, item: &str, key: &str, value: &Value) {
    // The item is valid JSON (split from a checked page): no second check.
    let Some(obj) = json_scan::object(item) else {
        return items.push_text(item);
    };
    if obj.contains_key(key) {
        return items.push_text(item);
    }
    let text = item.trim();
    let rest = text[1..].trim_start();
    items.push_with(|out| {
        out.reserve(text.len() + key.len() + 16);
        out.push('{');
        json::write_str(out, key);
        out.push(':');
        out.push_str(&value.to_string());
        if !rest.starts_with('}') {
            out.push(',');
        }
        out.push_str(rest);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tag(item: &str, key: &str, value: &Value) -> String {
        let mut items = Items::new();
        items.push_text("0");
        tag_into(&mut items, item, key, value);
        items.get(1).unwrap().to_string()
    }

    #[test]
    fn coercion() {
        let int = json!({"type":"integer"});
        assert_eq!(coerce(&json!("5"), &int), Ok(json!(5)));
        assert_eq!(coerce(&json!(5.0), &int), Ok(json!(5)));
        assert!(coerce(&json!("five"), &int)
            .unwrap_err()
            .contains("integer"));
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

    #[test]
    fn tagging_never_overwrites() {
        assert_eq!(
            tag(r#"{"id":1}"#, "property_id", &json!(7)),
            r#"{"property_id":7,"id":1}"#
        );
        assert_eq!(
            tag(r#"{"property_id":9}"#, "property_id", &json!(7)),
            r#"{"property_id":9}"#
        );
        assert_eq!(tag(r#"{ }"#, "k", &json!("v")), r#"{"k":"v"}"#);
        assert_eq!(tag("3", "k", &json!("v")), "3");
    }
}
