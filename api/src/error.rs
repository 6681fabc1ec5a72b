//! The API's one error type and the one place errors become HTTP answers:
//! a status code and the body `{"error": {"kind", "message",
//! "diagnostics"?}}`. A store failure is logged in full and answered with
//! a plain message, so nothing of the database reaches a client.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use dragnet_engine::workflow::Diagnostics;

use crate::bodies::DiagnosticBody;
use serde_json::{json, Value};

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("no bearer token: send `Authorization: Bearer <token>`")]
    MissingToken,

    #[error("the bearer token is unknown or revoked")]
    BadToken,

    /// Also the answer for another team's resource, so nobody learns it
    /// exists.
    #[error("no {what} `{name}`")]
    NotFound { what: &'static str, name: String },

    #[error("no route {method} {path}")]
    NoRoute { method: String, path: String },

    #[error("{method} is not allowed on {path}")]
    MethodNotAllowed { method: String, path: String },

    #[error("the workflow file has {} problem(s)", .0.len())]
    InvalidWorkflow(Diagnostics),

    #[error("input `{name}`: {message}")]
    InvalidInput { name: String, message: String },

    /// The request itself is malformed (its JSON, a query parameter…).
    #[error("{what}: {message}")]
    BadRequest { what: &'static str, message: String },

    #[error("{message}")]
    Conflict { kind: &'static str, message: String },

    /// Well-formed but refused (a file whose `name` is not the URL's).
    #[error("{message}")]
    Rejected { kind: &'static str, message: String },

    #[error("the request body is larger than this server accepts ({limit} bytes)")]
    TooLarge { limit: usize },

    #[error("the server is shutting down")]
    ShuttingDown,

    #[error("the store failed")]
    Store(#[from] dragnet_store::Error),

    #[error("the run could not start: {0}")]
    Engine(#[from] dragnet_engine::Error),
}

impl From<dragnet_runner::Error> for ApiError {
    fn from(e: dragnet_runner::Error) -> Self {
        use dragnet_runner::Error as R;
        match e {
            R::NotFound { what, name } => ApiError::NotFound { what, name },
            R::InvalidWorkflow(d) => ApiError::InvalidWorkflow(d),
            R::InvalidInput { name, message } => ApiError::InvalidInput { name, message },
            R::UnknownStep { .. } => ApiError::Rejected {
                kind: "unknown_step",
                message: e.to_string(),
            },
            R::KeyReused => ApiError::Conflict {
                kind: "idempotency_key_reused",
                message: e.to_string(),
            },
            R::CompileAborted => ApiError::Conflict {
                kind: "compile_failed",
                message: e.to_string(),
            },
            R::BadSchedule { .. } => ApiError::Conflict {
                kind: "bad_schedule",
                message: e.to_string(),
            },
            R::BadBackfill { message } => ApiError::Rejected {
                kind: "invalid_backfill",
                message,
            },
            R::ShuttingDown => ApiError::ShuttingDown,
            R::Store(e) => ApiError::Store(e),
            R::Engine(e) => ApiError::Engine(e),
        }
    }
}

impl ApiError {
    /// The stable snake_case name clients match on.
    pub fn kind(&self) -> &'static str {
        match self {
            ApiError::MissingToken | ApiError::BadToken => "unauthorized",
            ApiError::NotFound { .. } | ApiError::NoRoute { .. } => "not_found",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::InvalidWorkflow(_) => "invalid_workflow",
            ApiError::InvalidInput { .. } => "invalid_input",
            ApiError::BadRequest { .. } => "bad_request",
            ApiError::Conflict { kind, .. } | ApiError::Rejected { kind, .. } => kind,
            ApiError::TooLarge { .. } => "too_large",
            ApiError::ShuttingDown => "unavailable",
            ApiError::Store(_) => "store_error",
            ApiError::Engine(_) => "run_error",
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::MissingToken | ApiError::BadToken => StatusCode::UNAUTHORIZED,
            ApiError::NotFound { .. } | ApiError::NoRoute { .. } => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::InvalidWorkflow(_)
            | ApiError::InvalidInput { .. }
            | ApiError::Rejected { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Store(_) | ApiError::Engine(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn not_found(what: &'static str, name: impl Into<String>) -> ApiError {
        ApiError::NotFound {
            what,
            name: name.into(),
        }
    }

    pub fn bad_request(what: &'static str, message: impl ToString) -> ApiError {
        ApiError::BadRequest {
            what,
            message: message.to_string(),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let mut error = json!({"kind": self.kind(), "message": self.to_string()});
        if let (ApiError::InvalidWorkflow(d), Some(obj)) = (self, error.as_object_mut()) {
            obj.insert(
                "diagnostics".into(),
                serde_json::to_value(diagnostic_bodies(d)).unwrap_or(Value::Null),
            );
        }
        json!({ "error": error })
    }
}

/// Located diagnostics: file, line, column, YAML path, message.
pub fn diagnostic_bodies(d: &Diagnostics) -> Vec<DiagnosticBody> {
    d.iter()
        .map(|d| DiagnosticBody {
            file: d.file.display().to_string(),
            line: d.line,
            column: d.column,
            path: d.path.clone(),
            message: d.message.clone(),
        })
        .collect()
}

/// A name or id from a path: one the store could hold, else `what` is
/// not found (a NUL byte or a control character names nothing, and
/// PostgreSQL refuses NUL in text).
pub fn storable_name(name: String, what: &'static str) -> ApiResult<String> {
    match storable(&name) {
        true => Ok(name),
        false => Err(ApiError::NotFound {
            what,
            name: name.escape_default().to_string(),
        }),
    }
}

/// Text the store can hold and logs can show: no control characters, at
/// most 1,000 bytes.
pub fn storable(text: &str) -> bool {
    text.len() <= 1000 && !text.chars().any(char::is_control)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Store(e) => tracing::error!(error = %e, "store failure answering a request"),
            ApiError::Engine(e) => tracing::error!(error = %e, "a run could not start"),
            _ => {}
        }
        let mut response = (self.status(), Json(self.body())).into_response();
        if self.status() == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_failure_says_nothing_of_the_database() {
        let e = ApiError::Store(dragnet_store::Error::BadValue { what: "run status" });
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(e.body()["error"]["message"], "the store failed");
        assert_eq!(e.body()["error"]["kind"], "store_error");
    }

    #[test]
    fn another_teams_resource_reads_as_missing() {
        let e = ApiError::not_found("run", "run_1");
        assert_eq!(e.status(), StatusCode::NOT_FOUND);
        assert_eq!(e.body()["error"]["message"], "no run `run_1`");
    }
}
