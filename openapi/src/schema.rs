//! Inlining a schema: every local `$ref` replaced by what it names, `allOf`
//! of compatible schemas merged into one, annotations that only bloat an
//! input schema dropped. Recursive and very wide schemas are bounded: past
//! `MAX_DEPTH` nested schema levels a schema with children is replaced by a
//! stub that keeps only its `type` (`{"type":"object"}`, or `{}`). When that
//! still emits more than `NODE_BUDGET` schemas, the expansion starts over
//! one level shallower (down to one level), so a wide schema is cut evenly
//! rather than first-come, and huge documents such as Stripe's still give
//! small input schemas.

use serde_json::{Map, Value};

use super::doc::{child, index, Doc, Resolved};
use dragnet_core::error::Error;

/// Nested schema levels inlined below the root schema.
pub(crate) const MAX_DEPTH: usize = 6;
/// Schemas one expansion may emit before it is redone shallower.
pub(crate) const NODE_BUDGET: usize = 500;

/// Keywords whose value is a map of name → schema.
const SCHEMA_MAPS: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];
/// Keywords whose value is one schema (or a boolean).
const SCHEMA_ONE: [&str; 11] = [
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Annotations dropped from inlined schemas: documentation for people or
/// OpenAPI-only hints, of no use to validating or describing arguments, and
/// often large (`example`s) or full of references (`discriminator`).
const DROPPED: [&str; 12] = [
    "example",
    "examples",
    "xml",
    "externalDocs",
    "discriminator",
    "$defs",
    "definitions",
    "$id",
    "$schema",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
];

/// Inlines `schema`, found at `pointer`, into a self-contained schema.
pub(crate) fn expand(doc: &Doc<'_>, schema: &Value, pointer: &str) -> Result<Value, Error> {
    let mut max_depth = MAX_DEPTH;
    loop {
        let mut expander = Expander {
            doc,
            max_depth,
            nodes_left: NODE_BUDGET,
            exhausted: false,
        };
        let out = expander.schema(schema, pointer, 0)?;
        if !expander.exhausted || max_depth <= 1 {
            return Ok(out);
        }
        max_depth -= 1;
    }
}

struct Expander<'d, 'a> {
    doc: &'d Doc<'a>,
    /// Schemas nested deeper than this become stubs.
    max_depth: usize,
    /// Schemas left to emit; past zero the rest become stubs.
    nodes_left: usize,
    /// Whether the budget ran out (the result is then redone shallower).
    exhausted: bool,
}

impl Expander<'_, '_> {
    fn schema(&mut self, node: &Value, pointer: &str, depth: usize) -> Result<Value, Error> {
        let Some(obj) = node.as_object() else {
            // `true`/`false` schemas, or garbage kept as is.
            return Ok(node.clone());
        };
        let target = match self.doc.deref(node, pointer)? {
            Resolved::Found(target, at) => (target, at),
            Resolved::Elsewhere => return Ok(Value::Object(Map::new())),
        };
        let (resolved, at) = target;
        let Some(resolved_obj) = resolved.as_object() else {
            return Ok(resolved.clone());
        };
        // Every schema emitted, stubs included, counts against the budget.
        if self.nodes_left == 0 {
            self.exhausted = true;
        }
        self.nodes_left = self.nodes_left.saturating_sub(1);
        // The `$ref` siblings nest too (and could lead back here).
        let nests = has_children(resolved_obj) || has_children(obj);
        if (depth > self.max_depth || self.exhausted) && nests {
            return Ok(stub(resolved_obj));
        }
        let mut out = self.keywords(resolved_obj, &at, depth)?;
        // OpenAPI 3.1 lets `$ref` have siblings (`description`…): they apply
        // on top of what the reference names (`keywords` skips `$ref`).
        if obj.contains_key("$ref") && obj.len() > 1 {
            let siblings = self.keywords(obj, pointer, depth)?;
            overlay(&mut out, siblings);
        }
        Ok(Value::Object(merge_all_of(out)))
    }

    /// Expands the keywords of one (already dereferenced) schema object.
    fn keywords(
        &mut self,
        obj: &Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) -> Result<Map<String, Value>, Error> {
        let mut out = Map::with_capacity(obj.len());
        for (key, value) in obj {
            let key_str = key.as_str();
            if key_str == "$ref" || key_str.starts_with("x-") || DROPPED.contains(&key_str) {
                continue;
            }
            let at = child(pointer, key);
            let expanded = if SCHEMA_MAPS.contains(&key_str) {
                match value.as_object() {
                    Some(map) => {
                        let mut props = Map::with_capacity(map.len());
                        for (name, sub) in map {
                            let sub = self.schema(sub, &child(&at, name), depth + 1)?;
                            props.insert(name.clone(), sub);
                        }
                        Value::Object(props)
                    }
                    None => value.clone(),
                }
            } else if SCHEMA_LISTS.contains(&key_str) || (key_str == "items" && value.is_array()) {
                match value.as_array() {
                    Some(list) => Value::Array(
                        list.iter()
                            .enumerate()
                            .map(|(i, sub)| self.schema(sub, &index(&at, i), depth + 1))
                            .collect::<Result<Vec<_>, _>>()?,
                    ),
                    None => value.clone(),
                }
            } else if SCHEMA_ONE.contains(&key_str) {
                self.schema(value, &at, depth + 1)?
            } else {
                value.clone()
            };
            out.insert(key.clone(), expanded);
        }
        Ok(out)
    }
}

/// Whether a schema nests other schemas (a `$ref` alone does not count:
/// the caller looks at what it names).
fn has_children(obj: &Map<String, Value>) -> bool {
    obj.keys().any(|k| {
        let k = k.as_str();
        SCHEMA_MAPS.contains(&k) || SCHEMA_ONE.contains(&k) || SCHEMA_LISTS.contains(&k)
    })
}

/// What stands in for a schema past the depth or size bound: its type only.
fn stub(obj: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    match obj.get("type") {
        Some(t @ (Value::String(_) | Value::Array(_))) => {
            out.insert("type".into(), t.clone());
        }
        _ if obj.contains_key("properties") || obj.contains_key("additionalProperties") => {
            out.insert("type".into(), "object".into());
        }
        _ if obj.contains_key("items") => {
            out.insert("type".into(), "array".into());
        }
        _ => {}
    }
    Value::Object(out)
}

/// Puts `$ref` siblings over the referenced schema: `properties` are
/// united and `required` lists joined; any other sibling replaces.
fn overlay(out: &mut Map<String, Value>, siblings: Map<String, Value>) {
    for (key, value) in siblings {
        match (key.as_str(), out.get_mut(&key), value) {
            ("properties", Some(Value::Object(have)), Value::Object(more)) => have.extend(more),
            ("required", Some(Value::Array(have)), Value::Array(more)) => {
                for name in more {
                    if !have.contains(&name) {
                        have.push(name);
                    }
                }
            }
            (_, _, value) => {
                out.insert(key, value);
            }
        }
    }
}

/// Merges `allOf` members into the schema holding them when every member
/// is an object schema and their `type`s agree: `properties` are united
/// (a later member wins a clash), `required` lists joined, and any other
/// keyword kept from the first place it appears (the holder first). A lone
/// member is always merged that way. Otherwise `allOf` stays as it is.
fn merge_all_of(mut obj: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::Array(members)) = obj.get("allOf") else {
        return obj;
    };
    let mergeable = members.len() == 1 || {
        let mut common_type: Option<&Value> = obj.get("type");
        members.iter().all(|m| match m.as_object() {
            None => false,
            Some(m) => match (m.get("type"), common_type) {
                (None, _) => true,
                (Some(t), None) => {
                    common_type = Some(t);
                    true
                }
                (Some(t), Some(c)) => t == c,
            },
        })
    };
    if !mergeable || !members.iter().all(Value::is_object) {
        return obj;
    }
    let Some(Value::Array(members)) = obj.remove("allOf") else {
        return obj;
    };
    let mut properties = match obj.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let mut required: Vec<Value> = match obj.remove("required") {
        Some(Value::Array(r)) => r,
        _ => Vec::new(),
    };
    for member in members {
        let Value::Object(member) = member else {
            continue;
        };
        for (key, value) in member {
            match (key.as_str(), value) {
                ("properties", Value::Object(p)) => properties.extend(p),
                ("required", Value::Array(r)) => {
                    for name in r {
                        if !required.contains(&name) {
                            required.push(name);
                        }
                    }
                }
                (_, value) => {
                    obj.entry(key).or_insert(value);
                }
            }
        }
    }
    if !properties.is_empty() {
        obj.insert("properties".into(), Value::Object(properties));
        obj.entry("type").or_insert_with(|| "object".into());
    }
    if !required.is_empty() {
        obj.insert("required".into(), Value::Array(required));
    }
    obj
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
