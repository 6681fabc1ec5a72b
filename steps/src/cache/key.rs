//! Cache keys: the tool, its arguments (reserved ones are never in them),
//! the all-pages setting, where the collection is, and the de-duplicated,
//! sorted fan-out values — canonical JSON (keys sorted), hashed with SHA-256.
//! Projection and filter are not in the key: the stored set is unshaped.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The key of a call's walk.
pub fn cache_key(
    tool_id: &str,
    arguments: &Map<String, Value>,
    all_pages: bool,
    items_path: Option<&[String]>,
    for_each: Option<(&str, &[Value])>,
) -> String {
    let material = json!({
        "tool": tool_id,
        "arguments": canonical(&Value::Object(arguments.clone())),
        "all_pages": all_pages,
        "items_path": items_path,
        "for_each": for_each.map(|(key, values)| json!({"key": key, "values": values})),
    });
    let digest = Sha256::digest(material.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The value with every object's keys sorted.
fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn argument_order_does_not_matter_but_values_do() {
        let a = cache_key(
            "t",
            &args(json!({"a":1,"b":{"x":1,"y":2}})),
            true,
            None,
            None,
        );
        let b = cache_key(
            "t",
            &args(json!({"b":{"y":2,"x":1},"a":1})),
            true,
            None,
            None,
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            cache_key(
                "t",
                &args(json!({"a":2,"b":{"x":1,"y":2}})),
                true,
                None,
                None
            )
        );
        assert_ne!(
            a,
            cache_key(
                "t",
                &args(json!({"a":1,"b":{"x":1,"y":2}})),
                false,
                None,
                None
            )
        );
        assert_ne!(
            a,
            cache_key(
                "u",
                &args(json!({"a":1,"b":{"x":1,"y":2}})),
                true,
                None,
                None
            )
        );
        let v = [json!(1), json!(2)];
        let fe = cache_key("t", &Map::new(), true, None, Some(("id", &v)));
        assert_ne!(
            fe,
            cache_key("t", &Map::new(), true, None, Some(("id", &v[..1])))
        );
        assert_eq!(a.len(), 64);
    }
}
