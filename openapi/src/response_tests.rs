//! Unit tests of `response_items_path`: where the declared success response
//! keeps its collection.

use serde_json::{json, Value};

use crate::import_str;
use crate::tests::oas3;

/// The items path of a GET whose `responses` are `responses`.
fn path_of(responses: Value, schemas: Value) -> Option<Vec<String>> {
    let kit = oas3(
        json!({"/x": {"get": {"responses": responses}}}),
        json!({"schemas": schemas}),
    );
    kit.tools[0].response_items_path.clone()
}

/// The items path of a 200 JSON response with `schema`.
fn of(schema: Value) -> Option<Vec<String>> {
    path_of(
        json!({"200":{"description":"ok","content":{"application/json":{"schema":schema}}}}),
        json!({"Item":{"type":"object","properties":{"id":{"type":"string"}}},
               "Items":{"type":"array","items":{"$ref":"#/components/schemas/Item"}}}),
    )
}

fn p(keys: &[&str]) -> Option<Vec<String>> {
    Some(keys.iter().map(|k| (*k).to_string()).collect())
}

#[test]
fn top_level_array() {
    assert_eq!(of(json!({"type":"array","items":{}})), p(&[]));
    assert_eq!(of(json!({"items":{"type":"string"}})), p(&[]));
    assert_eq!(of(json!({"$ref":"#/components/schemas/Items"})), p(&[]));
}

#[test]
fn collection_key_at_top_never_metadata() {
    let schema = json!({"type":"object","properties":{
        "meta":{"type":"object","properties":{"items":{"type":"array"}}},
        "links":{"type":"array"},
        "count":{"type":"integer"},
        "data":{"$ref":"#/components/schemas/Items"}}});
    assert_eq!(of(schema), p(&["data"]));
    // A collection key whose schema is not an array does not count.
    assert_eq!(
        of(json!({"properties":{"data":{"type":"object"},"value":{"type":"array"}}})),
        p(&["value"])
    );
}

#[test]
fn one_level_down_through_non_metadata_object() {
    let schema = json!({"type":"object","properties":{
        "pagination":{"type":"object","properties":{"values":{"type":"array"}}},
        "result":{"type":"object","properties":{"total":{"type":"integer"},
            "records":{"type":"array","items":{}}}}}});
    assert_eq!(of(schema), p(&["result", "records"]));
}

/// The tool of a paged GET (limit + offset) whose 200 response is `schema`.
fn listing(schema: Value) -> dragnet_core::Tool {
    let kit = oas3(
        json!({"/x": {"get": {
            "parameters": [
                {"name":"limit","in":"query","schema":{"type":"integer"}},
                {"name":"offset","in":"query","schema":{"type":"integer"}}],
            "responses": {"200":{"description":"ok","content":{"application/json":{"schema":schema}}}}}}}),
        json!({"schemas": {"Item":{"type":"object","properties":{"id":{"type":"string"}}}}}),
    );
    kit.tools[0].clone()
}

#[test]
fn single_array_of_objects_only_for_list_operations() {
    let page = json!({"properties":{"users":{"type":"array","items":{"$ref":"#/components/schemas/Item"}},
        "errors":{"type":"array","items":{"type":"object"}},
        "names":{"type":"array","items":{"type":"string"}}}});
    let tool = listing(page.clone());
    assert_eq!(tool.response_items_path, p(&["users"]));
    assert!(!tool.response_is_resource);
    // without paging parameters it is a single resource with a nested list
    let kit = oas3(
        json!({"/x": {"get": {"responses": {"200":{"description":"ok",
            "content":{"application/json":{"schema":page}}}}}}}),
        json!({"schemas": {"Item":{"type":"object","properties":{"id":{"type":"string"}}}}}),
    );
    assert_eq!(kit.tools[0].response_items_path, None);
    assert!(kit.tools[0].response_is_resource);
}

#[test]
fn single_array_of_objects_else_none() {
    assert_eq!(
        of(
            json!({"properties":{"users":{"$ref":"#/components/schemas/Items"},
            "groups":{"$ref":"#/components/schemas/Items"}}})
        ),
        None
    );
    assert_eq!(of(json!({"$ref":"#/components/schemas/Item"})), None);
    assert_eq!(of(json!({"type":"string"})), None);
}

#[test]
fn all_of_and_nullable_any_of_are_looked_through() {
    let schema = json!({"allOf":[
        {"type":"object","properties":{"has_more":{"type":"boolean"}}},
        {"properties":{"items":{"anyOf":[{"$ref":"#/components/schemas/Items"},{"type":"null"}]}}}]});
    assert_eq!(of(schema), p(&["items"]));
}

#[test]
fn first_success_response_with_a_json_schema() {
    let array = json!({"type":"array","items":{}});
    // 200 wins over 201 and other 2xx.
    assert_eq!(
        path_of(
            json!({"206":{"content":{"application/json":{"schema":{"properties":{"data":array}}}}},
                   "201":{"content":{"application/json":{"schema":{"properties":{"rows":array}}}}},
                   "200":{"content":{"application/json":{"schema":{"properties":{"hits":array}}}}}}),
            json!({})
        ),
        p(&["hits"])
    );
    // 2XX before other 2xx; a response without JSON is passed over.
    assert_eq!(
        path_of(
            json!({"202":{"content":{"application/json":{"schema":{"properties":{"rows":array}}}}},
                   "2XX":{"content":{"text/csv":{"schema":array}}},
                   "default":{"content":{"application/json":{"schema":array}}}}),
            json!({})
        ),
        p(&["rows"])
    );
    assert_eq!(
        path_of(json!({"204":{"description":"none"}}), json!({})),
        None
    );
    assert_eq!(
        path_of(
            json!({"400":{"content":{"application/json":{"schema":array}}}}),
            json!({})
        ),
        None
    );
}

#[test]
fn response_refs_and_swagger_schemas() {
    let kit = oas3(
        json!({"/x":{"get":{"responses":{"200":{"$ref":"#/components/responses/List"}}}}}),
        json!({"responses":{"List":{"content":{"application/json":{"schema":{
            "properties":{"entries":{"type":"array"}}}}}}}}),
    );
    assert_eq!(kit.tools[0].response_items_path, p(&["entries"]));
    let doc = json!({"swagger":"2.0","paths":{"/x":{"get":{"responses":{"200":{"schema":{
        "$ref":"#/definitions/Page"}}}}}},
        "definitions":{"Page":{"type":"object","properties":{"value":{"type":"array","items":{}}}}}});
    let kit = import_str("s.json", &doc.to_string()).unwrap();
    assert_eq!(kit.tools[0].response_items_path, p(&["value"]));
}

#[test]
fn dangling_ref_in_a_response_is_an_error() {
    let doc = json!({"openapi":"3.0.0","paths":{"/x":{"get":{"responses":{"200":{
        "$ref":"#/components/responses/Nope"}}}}}});
    assert!(import_str("r.json", &doc.to_string()).is_err());
}
