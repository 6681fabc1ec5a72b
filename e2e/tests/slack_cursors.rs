//! Slack's cursor over real HTTP (issue 21): `users.list` declares its
//! `response_metadata` by a `$ref` to a schema listing its alternatives
//! under `items` (a Swagger 2.0 oddity Slack's document uses throughout),
//! and some operations show `next_cursor` only in their response example.
//! Both are read, so the walk follows `response_metadata.next_cursor` to
//! every row; Slack's last page gives `next_cursor: ""`, which ends it,
//! complete.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use axum::extract::Query;
use dragnet_e2e::{items, walk_served};
use serde_json::{json, Value};

/// Members the served workspace has.
const MEMBERS: usize = 23;
/// Rows a page holds when the request names no `limit`.
const DEFAULT_LIMIT: usize = 5;

/// A Slack-style `GET /users.list`: `limit` and an opaque `cursor` in, the
/// members and `response_metadata.next_cursor` out (`""` on the last page).
fn slack(requests: Arc<AtomicU32>) -> axum::Router {
    axum::Router::new().route(
        "/users.list",
        axum::routing::get(move |Query(q): Query<Vec<(String, String)>>| {
            let requests = requests.clone();
            async move {
                requests.fetch_add(1, Ordering::SeqCst);
                let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
                let limit = get("limit")
                    .and_then(|l| l.parse().ok())
                    .unwrap_or(DEFAULT_LIMIT);
                let start = match get("cursor") {
                    None => 0,
                    Some(c) => match c.strip_prefix("dXNlcjpV").and_then(|n| n.parse().ok()) {
                        Some(n) => n,
                        None => return axum::Json(json!({"ok": false, "error": "invalid_cursor"})),
                    },
                };
                let end = (start + limit).min(MEMBERS);
                let members: Vec<Value> = (start..end)
                    .map(|i| json!({"id": format!("W{i:04}"), "name": format!("user{i}")}))
                    .collect();
                let next = match end < MEMBERS {
                    true => format!("dXNlcjpV{end}"),
                    false => String::new(),
                };
                axum::Json(
                    json!({"ok": true, "cache_ts": 1498777272, "members": members,
                    "response_metadata": {"next_cursor": next}}),
                )
            }
        }),
    )
}

/// The Swagger 2.0 document: `users.list` as Slack's document writes it,
/// `response` its 200 response.
fn document(response: Value) -> String {
    json!({"swagger": "2.0", "info": {"title": "Slack Web API", "version": "1.7.0"},
        "paths": {"/users.list": {"get": {"operationId": "users_list",
            "parameters": [
                {"in": "query", "name": "token", "type": "string"},
                {"in": "query", "name": "limit", "type": "integer"},
                {"in": "query", "name": "cursor", "type": "string"},
                {"in": "query", "name": "include_locale", "type": "boolean"}],
            "responses": {"200": response}}}},
        "definitions": {
            "defs_ok_true": {"enum": [true], "title": "default success response", "type": "boolean"},
            "objs_user": {"type": "object", "properties": {"id": {"type": "string"}}},
            "objs_response_metadata": {"items": [
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
                 "title": "deprecation_warning and paging style together", "type": "object"}]}}})
    .to_string()
}

/// Walks `users_list` of `doc` served by the Slack-style router: the
/// member ids, completeness, requests the verdict counts and the server saw.
async fn walk(doc: &str) -> (Vec<String>, bool, u32, u32) {
    let requests = Arc::new(AtomicU32::new(0));
    let (tool, r) = walk_served(slack(requests.clone()), doc, "users_list").await;
    assert!(tool.can_walk(), "users_list walks by its cursor");
    let ids = items(&r)
        .iter()
        .map(|m| m["id"].as_str().unwrap_or_default().to_string())
        .collect();
    (
        ids,
        r.verdict.complete,
        r.verdict.requests,
        requests.load(Ordering::SeqCst),
    )
}

fn every_member() -> Vec<String> {
    (0..MEMBERS).map(|i| format!("W{i:04}")).collect()
}

#[tokio::test]
async fn users_list_is_walked_through_its_items_alternatives() {
    let doc = document(
        json!({"description": "Typical success response", "schema": {
        "additionalProperties": false, "type": "object",
        "required": ["ok", "members", "cache_ts"],
        "properties": {
            "cache_ts": {"type": "integer"},
            "members": {"items": {"$ref": "#/definitions/objs_user"}, "minItems": 1,
                        "type": "array", "uniqueItems": true},
            "ok": {"$ref": "#/definitions/defs_ok_true"},
            "response_metadata": {"$ref": "#/definitions/objs_response_metadata"}}}}),
    );
    let (ids, complete, requests, seen) = walk(&doc).await;
    assert_eq!(ids, every_member());
    assert!(complete, "an empty next_cursor is the end");
    let pages = MEMBERS.div_ceil(DEFAULT_LIMIT) as u32;
    assert_eq!((requests, seen), (pages, pages));
}

#[tokio::test]
async fn a_cursor_shown_only_by_the_example_is_followed() {
    // The metadata is a free-form object; the example shows the cursor.
    let doc = document(json!({"description": "ok",
        "examples": {"application/json": {"ok": true, "members": [{"id": "W012A3CDE"}],
            "response_metadata": {"next_cursor": "dXNlcjpVMEc5V0ZYTlo="}}},
        "schema": {"type": "object", "properties": {
            "members": {"type": "array", "items": {"$ref": "#/definitions/objs_user"}},
            "ok": {"type": "boolean"},
            "response_metadata": {"type": "object"}}}}));
    let (ids, complete, _, seen) = walk(&doc).await;
    assert_eq!(ids, every_member());
    assert!(complete);
    assert_eq!(seen, MEMBERS.div_ceil(DEFAULT_LIMIT) as u32);
}

#[tokio::test]
async fn a_schema_listing_its_shapes_under_items_is_answered_whole() {
    // Slack's `users.identity`: its shapes under `items`, no `type`. Read
    // as a top-level array, page one lacked it (malformed_page).
    let router = axum::Router::new().route(
        "/users.identity",
        axum::routing::get(|| async {
            axum::Json(json!({"ok": true, "team": {"id": "T0G9PQBBK"},
                "user": {"id": "U0G9QF9C6", "name": "Sonny Whether"}}))
        }),
    );
    let doc = json!({"swagger": "2.0", "info": {"title": "Slack Web API", "version": "1.7.0"},
        "paths": {"/users.identity": {"get": {"operationId": "users_identity",
            "responses": {"200": {"description": "ok", "schema": {
                "description": "Schema for successful response from users.identity method",
                "items": [
                    {"type": "object", "properties": {"ok": {"type": "boolean"},
                        "user": {"type": "object", "properties": {"id": {"type": "string"}}}}},
                    {"type": "object", "properties": {"ok": {"type": "boolean"},
                        "user": {"type": "object", "properties": {"email": {"type": "string"}}}}}]}}}}}}});
    let (_, r) = walk_served(router, &doc.to_string(), "users_identity").await;
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let mut text = String::new();
    dragnet_core::payload::write_payload(&mut text, &r.payload);
    let whole: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(whole["user"]["name"], "Sonny Whether", "{text}");
}
