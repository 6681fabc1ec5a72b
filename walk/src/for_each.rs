//! `_for_each` (SPEC §3.6): the key must be a parameter of the tool; values
//! are de-duplicated in first-seen order and coerced to the parameter's
//! declared type; each row is tagged with its value unless the row already
//! has that field.

use serde_json::Value;

use dragnet_core::args::coerce;
use dragnet_core::items::Items;
use dragnet_core::json;
use dragnet_core::json_scan;
use dragnet_core::{Error, Tool};

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
            let coerced = coerce(raw, schema).map_err(|e| (raw.clone(), e.to_string()));
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
