//! The endpoints that are not paginated: single orders, properties, reports, alerts, admin.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::data::{dataset, now_iso8601};
use crate::error::ShopError;
use crate::params::{json_object, parse_int, string_field};
use crate::state::{lock, Shared};

const SEVERITIES: [&str; 3] = ["info", "warning", "critical"];

/// `GET /orders/{order_id}`.
pub(crate) async fn get_order(
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ShopError> {
    let Path(raw) = path.map_err(|e| ShopError::bad(format!("bad path: {e}")))?;
    let id = parse_int("order_id", &raw)?;
    let order = u64::try_from(id)
        .ok()
        .and_then(|id| dataset().order(id))
        .ok_or_else(|| ShopError::NotFound(format!("no order with id {id}")))?;
    Ok(Json(json!(order)))
}

/// `GET /properties`: all of them, no paging.
pub(crate) async fn list_properties() -> Json<Value> {
    Json(json!({ "data": dataset().properties() }))
}

/// `POST /reports`: `{title, summary?, rows?}` → 201 `{id, title, received_at, row_count}`.
pub(crate) async fn create_report(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> Result<Response, ShopError> {
    let body = json_object(&body)?
        .ok_or_else(|| ShopError::bad("the request body must be a JSON object with `title`"))?;
    let title = string_field(&body, "title", true)?.unwrap_or_default();
    let summary = match body.get("summary") {
        None | Some(Value::Null) => Value::Null,
        Some(summary @ Value::Object(_)) => summary.clone(),
        Some(_) => return Err(ShopError::bad("`summary` must be an object")),
    };
    let rows = match body.get("rows") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(rows)) => rows.clone(),
        Some(_) => return Err(ShopError::bad("`rows` must be an array")),
    };
    let received_at = now_iso8601();
    let mut reports = lock(&shared.reports);
    let id = format!("rep_{}", reports.len() + 1);
    let created = json!({
        "id": id,
        "title": title,
        "received_at": received_at,
        "row_count": rows.len(),
    });
    reports.push(json!({
        "id": id,
        "title": title,
        "summary": summary,
        "rows": rows,
        "received_at": received_at,
        "row_count": rows.len(),
    }));
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// `GET /reports`: every report received, in order.
pub(crate) async fn list_reports(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({ "data": *lock(&shared.reports) }))
}

/// `POST /alerts`: `{message, severity?}` → 201 `{id, message, severity, received_at}`.
pub(crate) async fn create_alert(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> Result<Response, ShopError> {
    let body = json_object(&body)?
        .ok_or_else(|| ShopError::bad("the request body must be a JSON object with `message`"))?;
    let message = string_field(&body, "message", true)?.unwrap_or_default();
    let severity = string_field(&body, "severity", false)?.unwrap_or_else(|| "info".into());
    if !SEVERITIES.contains(&severity.as_str()) {
        return Err(ShopError::bad(format!(
            "`severity` must be one of info, warning, critical; got `{severity}`"
        )));
    }
    let mut alerts = lock(&shared.alerts);
    let alert = json!({
        "id": format!("alert_{}", alerts.len() + 1),
        "message": message,
        "severity": severity,
        "received_at": now_iso8601(),
    });
    alerts.push(alert.clone());
    Ok((StatusCode::CREATED, Json(alert)).into_response())
}

/// `GET /alerts`: every alert received, in order.
pub(crate) async fn list_alerts(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({ "data": *lock(&shared.alerts) }))
}

/// `GET /_admin/requests`: the request log.
pub(crate) async fn admin_requests(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!(shared.log.snapshot()))
}

/// `DELETE /_admin/requests`: clears the request log.
pub(crate) async fn admin_clear(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({ "cleared": shared.log.clear() }))
}

/// Anything else: a JSON 404.
pub(crate) async fn not_found(uri: Uri) -> ShopError {
    ShopError::NotFound(format!("no route for {}", uri.path()))
}
