//! Unit tests of schema inlining: `$ref`s in every nesting keyword, `allOf`
//! merging, recursion and size bounds, dropped annotations.

use serde_json::{json, Value};

use super::{expand, MAX_DEPTH};
use crate::doc::{Doc, Version};
use dragnet_core::error::Error;

fn run(root: &Value, schema: &Value) -> Result<Value, Error> {
    let doc = Doc {
        source: "s.yaml",
        root,
        version: Version::OpenApi3,
    };
    expand(&doc, schema, "/start")
}

fn depth_of(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(depth_of).max().unwrap_or(0),
        Value::Array(a) => 1 + a.iter().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn refs_inside_every_keyword_are_inlined() {
    let root = json!({"components":{"schemas":{
        "Id":{"type":"string","format":"uuid"},
        "Tag":{"type":"object","properties":{"id":{"$ref":"#/components/schemas/Id"}}}}}});
    let schema = json!({"type":"object","properties":{
        "id":{"$ref":"#/components/schemas/Id"},
        "tags":{"type":"array","items":{"$ref":"#/components/schemas/Tag"}},
        "extra":{"type":"object","additionalProperties":{"$ref":"#/components/schemas/Id"}},
        "either":{"oneOf":[{"$ref":"#/components/schemas/Id"},{"type":"integer"}]},
        "any":{"anyOf":[{"$ref":"#/components/schemas/Tag"}, {"type":"null"}]}}});
    let out = run(&root, &schema).unwrap();
    assert_eq!(
        out["properties"]["id"],
        json!({"type":"string","format":"uuid"})
    );
    assert_eq!(
        out["properties"]["tags"]["items"]["properties"]["id"]["format"],
        "uuid"
    );
    assert_eq!(
        out["properties"]["extra"]["additionalProperties"]["type"],
        "string"
    );
    assert_eq!(out["properties"]["either"]["oneOf"][0]["type"], "string");
    assert_eq!(out["properties"]["any"]["anyOf"][0]["type"], "object");
    assert!(!out.to_string().contains("$ref"));
}

#[test]
fn all_of_objects_merge_properties_and_required() {
    let root = json!({"components":{"schemas":{
        "Base":{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}},
        "Named":{"allOf":[{"$ref":"#/components/schemas/Base"},
            {"type":"object","required":["name","id"],"description":"named",
             "properties":{"name":{"type":"string"}}}]}}}});
    let out = run(&root, &json!({"$ref":"#/components/schemas/Named"})).unwrap();
    assert!(out.get("allOf").is_none(), "{out}");
    assert_eq!(out["type"], "object");
    assert_eq!(out["required"], json!(["id", "name"]));
    let keys: Vec<&String> = out["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["id", "name"]);
    assert_eq!(out["description"], "named");
}

#[test]
fn lone_all_of_member_and_ref_siblings_merge() {
    let root = json!({"components":{"schemas":{"Status":{"type":"string","enum":["a","b"]}}}});
    let out = run(
        &root,
        &json!({"description":"The status","allOf":[{"$ref":"#/components/schemas/Status"}]}),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"description":"The status","type":"string","enum":["a","b"]})
    );
    let out = run(
        &root,
        &json!({"$ref":"#/components/schemas/Status","description":"Overrides"}),
    )
    .unwrap();
    assert_eq!(out["description"], "Overrides");
    assert_eq!(out["type"], "string");
    let root = json!({"components":{"schemas":{"Base":{"type":"object","required":["a"],
        "properties":{"a":{"type":"string"}}}}}});
    let out = run(
        &root,
        &json!({"$ref":"#/components/schemas/Base","required":["b"],"properties":{"b":{}}}),
    )
    .unwrap();
    assert_eq!(out["required"], json!(["a", "b"]));
    assert_eq!(out["properties"], json!({"a":{"type":"string"},"b":{}}));
}

#[test]
fn all_of_with_conflicting_types_is_kept() {
    let out = run(
        &json!({}),
        &json!({"allOf":[{"type":"string"},{"type":"integer"}]}),
    )
    .unwrap();
    assert_eq!(out["allOf"].as_array().map(Vec::len), Some(2));
}

#[test]
fn recursive_schema_is_bounded() {
    let root = json!({"components":{"schemas":{"Node":{"type":"object","properties":{
        "name":{"type":"string"},
        "children":{"type":"array","items":{"$ref":"#/components/schemas/Node"}},
        "parent":{"$ref":"#/components/schemas/Node"}}}}}});
    let out = run(&root, &json!({"$ref":"#/components/schemas/Node"})).unwrap();
    // Each schema level is at most two JSON levels (properties/x, items).
    assert!(depth_of(&out) <= 2 * (MAX_DEPTH + 2), "{}", depth_of(&out));
    let mut node = &out;
    for _ in 0..MAX_DEPTH / 2 {
        node = &node["properties"]["children"]["items"];
        assert_eq!(node["properties"]["name"]["type"], "string");
    }
    assert!(out.to_string().contains(r#"{"type":"object"}"#));
    assert!(!out.to_string().contains("$ref"));
}

#[test]
fn recursion_through_ref_siblings_is_bounded() {
    // 3.1 style: `$ref` to a leaf, with sibling properties that recurse.
    let root = json!({"components":{"schemas":{
        "Leaf":{"type":"object"},
        "A":{"$ref":"#/components/schemas/Leaf",
             "properties":{"x":{"$ref":"#/components/schemas/A"}}}}}});
    let out = run(&root, &json!({"$ref":"#/components/schemas/A"})).unwrap();
    assert!(depth_of(&out) <= 2 * (MAX_DEPTH + 2), "{}", depth_of(&out));
}

#[test]
fn ref_to_ref_cycle_without_nesting_is_an_error() {
    let root = json!({"components":{"schemas":{
        "A":{"$ref":"#/components/schemas/B"},"B":{"$ref":"#/components/schemas/A"}}}});
    assert!(run(&root, &json!({"$ref":"#/components/schemas/A"})).is_err());
}

#[test]
fn wide_fan_out_stays_small() {
    // Ten properties, each the same ten-property object, nested: 10^7 nodes
    // if inlined naively.
    let mut props = serde_json::Map::new();
    for i in 0..10 {
        props.insert(format!("p{i}"), json!({"$ref":"#/components/schemas/W"}));
    }
    let root = json!({"components":{"schemas":{"W":{"type":"object","properties":props}}}});
    let out = run(&root, &json!({"$ref":"#/components/schemas/W"})).unwrap();
    assert!(out.to_string().len() < 200_000, "{}", out.to_string().len());
}

#[test]
fn dangling_ref_names_where_it_sits() {
    let root = json!({"components":{"schemas":{"A":{"type":"object","properties":{
        "b":{"$ref":"#/components/schemas/Missing"}}}}}});
    match run(&root, &json!({"$ref":"#/components/schemas/A"})) {
        Err(Error::InvalidDocument {
            file,
            pointer,
            message,
        }) => {
            assert_eq!(file, "s.yaml");
            assert_eq!(pointer, "/components/schemas/A/properties/b/$ref");
            assert!(
                message.contains("#/components/schemas/Missing"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn remote_refs_become_empty_schemas() {
    let out = run(
        &json!({}),
        &json!({"type":"object","properties":{"a":{"$ref":"common.yaml#/A"}}}),
    )
    .unwrap();
    assert_eq!(out["properties"]["a"], json!({}));
}

#[test]
fn annotations_are_dropped_but_values_kept() {
    let out = run(
        &json!({}),
        &json!({"type":"object","example":{"$ref":"#/nowhere"},"x-internal":true,
            "discriminator":{"propertyName":"kind"},
            "properties":{"example":{"type":"string","default":"x"}}}),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"type":"object","properties":{"example":{"type":"string","default":"x"}}})
    );
}
