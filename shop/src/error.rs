//! The crate's one error type, rendered as a JSON `{"error": "..."}` response.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// Everything a request can be refused for.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShopError {
    /// A query value, path segment, body or fault header that cannot be used.
    #[error("{0}")]
    BadRequest(String),
    /// The addressed resource does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request body is larger than the shop accepts.
    #[error("request body is larger than {0} bytes")]
    TooLarge(usize),
}

impl ShopError {
    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self::BadRequest(message.into())
    }

    fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }
}

impl IntoResponse for ShopError {
    fn into_response(self) -> Response {
        (self.status(), Json(json!({ "error": self.to_string() }))).into_response()
    }
}
