//! Unit tests of where a cursor-style tool's next cursor or URL is found
//! (issue 21): Slack's `items` list of alternatives, `anyOf` and `oneOf`
//! alternatives, and response examples where the schema says nothing.

use serde_json::{json, Value};

use crate::import_str;
use crate::tests::oas3;
use dragnet_core::Tool;

/// Slack's `objs_response_metadata`, as its Swagger 2.0 document writes it:
/// three alternatives listed under `items`, no `type`.
fn slack_response_metadata() -> Value {
    json!({"items": [
        {"additionalProperties": false, "properties": {"next_cursor": {"type": "string"}},
         "required": ["next_cursor"], "title": "new paging style", "type": "object"},
        {"additionalProperties": false, "properties": {
            "messages": {"items": {"type": "string"}, "type": "array"},
            "warnings": {"items": {"enum": ["method_deprecated"], "type": "string"}, "type": "array"}},
         "required": ["messages", "warnings"], "title": "deprecation_warning", "type": "object"},
        {"additionalProperties": false, "properties": {
            "messages": {"items": {"type": "string"}, "type": "array"},
            "next_cursor": {"type": "string"},
            "warnings": {"items": {"enum": ["method_deprecated"], "type": "string"}, "type": "array"}},
         "required": ["messages", "warnings", "next_cursor"],
         "title": "deprecation_warning and paging style together", "type": "object"}]})
}

/// A Slack-shaped Swagger 2.0 document: `users.list` (its metadata by
/// `$ref` to the `items` list) and `conversations.list` (written plainly).
/// No examples: the schema alone must tell.
pub(crate) fn slack_doc() -> Value {
    let params = json!([
        {"in": "query", "name": "token", "type": "string"},
        {"in": "query", "name": "limit", "type": "integer"},
        {"in": "query", "name": "cursor", "type": "string"}]);
    json!({"swagger": "2.0", "info": {"title": "Slack Web API", "version": "1.7.0"},
        "basePath": "/api",
        "paths": {
            "/users.list": {"get": {"operationId": "users_list", "parameters": params,
                "responses": {"200": {"description": "Typical success response", "schema": {
                    "additionalProperties": false, "type": "object",
                    "required": ["ok", "members", "cache_ts"],
                    "properties": {
                        "cache_ts": {"type": "integer"},
                        "members": {"items": {"$ref": "#/definitions/objs_user"},
                                    "minItems": 1, "type": "array", "uniqueItems": true},
                        "ok": {"$ref": "#/definitions/defs_ok_true"},
                        "response_metadata": {"$ref": "#/definitions/objs_response_metadata"}}}}}}},
            "/conversations.list": {"get": {"operationId": "conversations_list", "parameters": params,
                "responses": {"200": {"description": "ok", "schema": {
                    "type": "object", "required": ["ok", "channels"],
                    "properties": {
                        "channels": {"items": {"type": "object"}, "type": "array"},
                        "ok": {"$ref": "#/definitions/defs_ok_true"},
                        "response_metadata": {"type": "object", "required": ["next_cursor"],
                            "properties": {"next_cursor": {"type": "string"}}}}}}}}}},
        "definitions": {
            "defs_ok_true": {"enum": [true], "title": "default success response", "type": "boolean"},
            "objs_user": {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}},
            "objs_response_metadata": slack_response_metadata()}})
}

fn tool(doc: &Value, name: &str) -> Tool {
    let kit = import_str("doc.json", &doc.to_string()).unwrap();
    kit.tool(name)
        .unwrap_or_else(|| panic!("{name} imported"))
        .clone()
}

/// `(style, next)` of a tool found to page by cursor or next link.
fn next_of(t: &Tool) -> Option<(&'static str, String)> {
    t.cursor.as_ref().map(|c| (c.style, c.next.describe()))
}

fn cursor_at(path: &str) -> Option<(&'static str, String)> {
    Some(("cursor", path.to_string()))
}

#[test]
fn slacks_items_list_is_read_as_alternatives() {
    let doc = slack_doc();
    let users = tool(&doc, "users_list");
    assert_eq!(
        next_of(&users),
        cursor_at("body:response_metadata.next_cursor")
    );
    assert_eq!(
        users
            .cursor
            .as_ref()
            .and_then(|c| c.param.as_ref())
            .map(|p| p.name.as_str()),
        Some("cursor")
    );
    assert_eq!(users.response_items_path, Some(vec!["members".to_string()]));
    let conversations = tool(&doc, "conversations_list");
    assert_eq!(
        next_of(&conversations),
        cursor_at("body:response_metadata.next_cursor")
    );
}

#[test]
fn an_items_list_under_a_schema_typed_array_is_no_alternative() {
    // A tuple (`type: array` with a list of item schemas) declares no fields.
    let mut doc = slack_doc();
    doc["definitions"]["objs_response_metadata"]["type"] = json!("array");
    assert_eq!(next_of(&tool(&doc, "users_list")), None);
}

/// A cursor GET of an OpenAPI 3 document whose 200 JSON media is `media`.
fn cursor_get(media: Value, components: Value) -> Tool {
    let kit = oas3(
        json!({"/things": {"get": {"operationId": "listThings",
            "parameters": [{"name": "cursor", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "ok", "content": {"application/json": media}}}}}}),
        components,
    );
    kit.tools[0].clone()
}

#[test]
fn any_of_and_one_of_alternatives_are_read() {
    let one_of = cursor_get(
        json!({"schema": {"type": "object", "properties": {
            "data": {"type": "array", "items": {"type": "object"}},
            "meta": {"oneOf": [
                {"type": "object", "properties": {"warnings": {"type": "array"}}},
                {"type": "object", "properties": {"next_page_token": {"type": "string"}}}]}}}}),
        json!({}),
    );
    assert_eq!(next_of(&one_of), cursor_at("body:meta.next_page_token"));
    // At the top, through a `$ref`: a next URL in one of two shapes.
    let any_of = cursor_get(
        json!({"schema": {"$ref": "#/components/schemas/Answer"}}),
        json!({"schemas": {"Answer": {"anyOf": [
            {"type": "object", "properties": {"error": {"type": "string"}}},
            {"type": "object", "properties": {
                "value": {"type": "array", "items": {"type": "object"}},
                "nextLink": {"type": "string"}}}]}}}),
    );
    assert_eq!(
        next_of(&any_of),
        Some(("next_url", "body:nextLink".to_string()))
    );
}

#[test]
fn an_example_is_evidence_where_the_schema_says_nothing() {
    // A free-form metadata object; the example shows the cursor.
    let by_example = cursor_get(
        json!({"schema": {"type": "object", "properties": {
                "data": {"type": "array", "items": {"type": "object"}},
                "response_metadata": {"type": "object"}}},
               "example": {"data": [{"id": 1}], "response_metadata": {"next_cursor": "dXNlcjo="}}}),
        json!({}),
    );
    assert_eq!(
        next_of(&by_example),
        cursor_at("body:response_metadata.next_cursor")
    );
    // Named examples, one by `$ref`.
    let named = cursor_get(
        json!({"schema": {"type": "object"},
               "examples": {"first": {"$ref": "#/components/examples/Page"}}}),
        json!({"examples": {"Page": {"value": {"items": [], "nextCursor": "abc"}}}}),
    );
    assert_eq!(next_of(&named), cursor_at("body:nextCursor"));
    // Swagger 2.0: `examples` by media type, no schema at all.
    let mut doc = slack_doc();
    let users = &mut doc["paths"]["/users.list"]["get"]["responses"]["200"];
    users["schema"] = Value::Null;
    if let Some(o) = users.as_object_mut() {
        o.remove("schema");
    }
    users["examples"] = json!({"application/json": {"ok": true, "members": [{"id": "W1"}],
        "response_metadata": {"next_cursor": "dXNlcjpVMEc5V0ZYTlo="}}});
    assert_eq!(
        next_of(&tool(&doc, "users_list")),
        cursor_at("body:response_metadata.next_cursor")
    );
}

#[test]
fn the_schema_wins_over_an_example_and_nothing_shown_is_nothing_found() {
    let both = cursor_get(
        json!({"schema": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object"}},
                "next_page_token": {"type": "string"}}},
               "example": {"items": [], "next_cursor": "x"}}),
        json!({}),
    );
    assert_eq!(next_of(&both), cursor_at("body:next_page_token"));
    let silent = cursor_get(
        json!({"schema": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object"}}}},
               "example": {"items": [{"id": 1}]}}),
        json!({}),
    );
    assert_eq!(next_of(&silent), None);
    // An example that is no object, or JSON text that is no JSON, shows nothing.
    let odd = cursor_get(
        json!({"schema": {"type": "object"}, "example": "{not json"}),
        json!({}),
    );
    assert_eq!(next_of(&odd), None);
    let quoted = cursor_get(
        json!({"schema": {"type": "object"}, "example": "{\"next_cursor\": \"a\"}"}),
        json!({}),
    );
    assert_eq!(next_of(&quoted), cursor_at("body:next_cursor"));
}

#[test]
fn alternatives_of_alternatives_are_read_within_an_allowance() {
    // Eight levels of twelve alternatives each would be 12^8 schemas read
    // one by one (the import would not end); the allowance stops the search
    // once the first path down has shown the cursor.
    let mut schemas = serde_json::Map::new();
    for level in 0..8 {
        let members: Vec<Value> = (0..12)
            .map(|_| json!({"$ref": format!("#/components/schemas/L{}", level + 1)}))
            .collect();
        schemas.insert(format!("L{level}"), json!({"anyOf": members}));
    }
    schemas.insert(
        "L8".into(),
        json!({"type": "object", "properties": {"next_cursor": {"type": "string"}}}),
    );
    let deep = cursor_get(
        json!({"schema": {"$ref": "#/components/schemas/L0"}}),
        json!({"schemas": schemas}),
    );
    assert_eq!(next_of(&deep), cursor_at("body:next_cursor"));
}

#[test]
fn a_top_level_items_list_is_no_array() {
    // Slack's `users.identity` lists its answer's shapes under `items` with
    // no `type`: an object either way, never a top-level array (which page
    // one would then lack: a malformed page).
    let mut doc = slack_doc();
    doc["paths"]["/users.list"]["get"]["responses"]["200"]["schema"] = json!({
        "description": "Schema for successful response from users.identity method",
        "items": [
            {"type": "object", "properties": {"ok": {"type": "boolean"},
                "user": {"type": "object", "properties": {"id": {"type": "string"}}}}},
            {"type": "object", "properties": {"ok": {"type": "boolean"},
                "user": {"type": "object", "properties": {"email": {"type": "string"}}}}}]});
    assert_eq!(tool(&doc, "users_list").response_items_path, None);
}
