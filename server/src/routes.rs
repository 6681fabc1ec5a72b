//! The routes, in one table, and the answers that need no store: health,
//! readiness, the workflow schema, and the JSON 404 and 405.

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::json;

use crate::error::ApiError;
use crate::state::AppState;
use crate::{events, runs, schedules, workflows};

/// The whole API.
pub fn router(state: AppState) -> Router {
    let limit = state.config().body_limit;
    Router::new()
        .route("/healthz", get(health))
        .route("/readyz", get(ready))
        .route("/v1/schemas/workflow.json", get(schema))
        .route("/v1/validate", post(workflows::validate))
        .route("/v1/workflows", get(workflows::list))
        .route(
            "/v1/workflows/{name}",
            put(workflows::put)
                .get(workflows::get)
                .delete(workflows::delete),
        )
        .route("/v1/workflows/{name}/runs", post(runs::create))
        .route("/v1/runs", get(runs::list))
        .route("/v1/runs/{id}", get(runs::get))
        .route("/v1/runs/{id}/cancel", post(runs::cancel))
        .route("/v1/runs/{id}/events", get(events::events))
        .route("/v1/schedules", get(schedules::list))
        .fallback(no_route)
        .method_not_allowed_fallback(not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

/// `GET /healthz`: the process answers.
async fn health() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

/// `GET /readyz`: the store answers and the server takes work.
async fn ready(State(state): State<AppState>) -> Response {
    if state.stopping().is_cancelled() {
        return ApiError::ShuttingDown.into_response();
    }
    match state.db().ping().await {
        Ok(()) => Json(json!({"status": "ready", "store": state.db().backend()})).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "readiness: the store does not answer");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"error": {"kind": "unavailable", "message": "the store does not answer"}})),
            )
                .into_response()
        }
    }
}

/// `GET /v1/schemas/workflow.json`: the workflow file format.
async fn schema() -> Response {
    Json(dragnet_engine::workflow::json_schema()).into_response()
}

async fn no_route(method: Method, uri: Uri) -> Response {
    ApiError::NoRoute {
        method: method.to_string(),
        path: uri.path().to_string(),
    }
    .into_response()
}

async fn not_allowed(method: Method, uri: Uri) -> Response {
    ApiError::MethodNotAllowed {
        method: method.to_string(),
        path: uri.path().to_string(),
    }
    .into_response()
}
