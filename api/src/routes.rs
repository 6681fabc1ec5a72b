//! The routes, in one table that also builds the API's OpenAPI 3.1
//! document (utoipa: each handler carries its `#[utoipa::path]`, so a route
//! cannot exist undocumented), and the answers that need no store: health,
//! readiness, the workflow schema, the document itself, and the JSON 404
//! and 405.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::bodies::{ErrorBody, Health, Ready};
use crate::error::ApiError;
use crate::state::AppState;
use crate::{backfills, events, runs, schedules, secrets, watermarks, workflows};

/// The routes and the document describing them.
fn table() -> (Router<AppState>, OpenApi) {
    let (router, mut doc) = OpenApiRouter::<AppState>::new()
        .routes(routes!(health))
        .routes(routes!(ready))
        .routes(routes!(schema))
        .routes(routes!(openapi_json))
        .routes(routes!(workflows::validate))
        .routes(routes!(workflows::list))
        .routes(routes!(workflows::put, workflows::get, workflows::delete))
        .routes(routes!(runs::create))
        .routes(routes!(runs::list))
        .routes(routes!(runs::get))
        .routes(routes!(runs::cancel))
        .routes(routes!(runs::rerun))
        .routes(routes!(events::events))
        .routes(routes!(schedules::list))
        .routes(routes!(schedules::pause))
        .routes(routes!(schedules::resume))
        .routes(routes!(backfills::create))
        .routes(routes!(backfills::list))
        .routes(routes!(backfills::get))
        .routes(routes!(backfills::cancel))
        .routes(routes!(watermarks::list))
        .routes(routes!(watermarks::get, watermarks::reset))
        .routes(routes!(secrets::list))
        .routes(routes!(secrets::put, secrets::delete))
        .split_for_parts();
    doc.info.title = "dragnet".into();
    doc.info.description = Some(
        "Teams submit workflow files, start runs and follow them; every /v1 request \
         carries `Authorization: Bearer <token>`."
            .into(),
    );
    doc.info.version = env!("CARGO_PKG_VERSION").into();
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
    );
    (router, doc)
}

/// The API's OpenAPI document.
pub fn openapi() -> OpenApi {
    table().1
}

/// The whole API.
pub fn router(state: AppState) -> Router {
    let limit = state.config().body_limit;
    let (router, doc) = table();
    router
        .layer(axum::Extension(Arc::new(doc)))
        .route("/metrics", axum::routing::get(crate::metrics::metrics))
        .merge(crate::ui::routes())
        .fallback(no_route)
        .method_not_allowed_fallback(not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn(trace_request))
        .with_state(state)
}

/// One span per request: its method, path (never the query or a header)
/// and status.
async fn trace_request(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use tracing::Instrument as _;
    let span = tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        status = tracing::field::Empty,
    );
    let response = next.run(request).instrument(span.clone()).await;
    span.record("status", response.status().as_u16());
    response
}

/// `GET /healthz`: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, body = Health)))]
async fn health() -> Response {
    Json(Health {
        status: "ok".into(),
    })
    .into_response()
}

/// `GET /readyz`: the store answers and the server takes work.
#[utoipa::path(get, path = "/readyz", tag = "health", responses(
    (status = 200, body = Ready),
    (status = 503, description = "Shutting down, or the store does not answer.", body = ErrorBody),
))]
async fn ready(State(state): State<AppState>) -> Response {
    if state.stopping().is_cancelled() {
        return ApiError::ShuttingDown.into_response();
    }
    match state.db().ping().await {
        Ok(()) => Json(Ready {
            status: "ready".into(),
            store: state.db().backend().into(),
        })
        .into_response(),
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
#[utoipa::path(get, path = "/v1/schemas/workflow.json", tag = "workflows", responses(
    (status = 200, description = "The workflow file format (JSON Schema draft-07).", body = Object),
))]
async fn schema() -> Response {
    Json(dragnet_engine::workflow::json_schema()).into_response()
}

/// `GET /v1/openapi.json`: this document.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "health", responses(
    (status = 200, description = "The API's OpenAPI 3.1 document.", body = Object),
))]
async fn openapi_json(axum::Extension(doc): axum::Extension<Arc<OpenApi>>) -> Response {
    Json(doc.as_ref().clone()).into_response()
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
