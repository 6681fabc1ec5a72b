//! Errors as machines read them: a stable snake_case `kind` for every
//! variant of `Error` and `UpstreamError`, and the structured fields each
//! carries (`argument`, `status`, `tool`…), for JSON error documents. Every
//! variant is matched by name, so a new one cannot go without a kind.

use serde_json::{json, Map, Value};

use crate::error::{Error, UpstreamError};

impl Error {
    /// The stable name of this error, e.g. `unknown_tool`, `upstream_status`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::ReadDocument { .. } => "read_document",
            Error::ParseDocument { .. } => "parse_document",
            Error::InvalidDocument { .. } => "invalid_document",
            Error::UnknownTool { .. } => "unknown_tool",
            Error::InvalidArgument { .. } => "invalid_argument",
            Error::InvalidReserved { .. } => "invalid_reserved",
            Error::InvalidForEachKey { .. } => "invalid_for_each_key",
            Error::InvalidFilter { .. } => "invalid_filter",
            Error::NotWalkable { .. } => "not_walkable",
            Error::Upstream(e) => e.kind(),
            Error::AllValuesFailed { .. } => "all_values_failed",
            Error::Cancelled => "cancelled",
        }
    }

    /// The structured fields of this error beside its message (no secret is
    /// among them: excerpts and messages are left to the message).
    pub fn details(&self) -> Map<String, Value> {
        let fields = match self {
            Error::ReadDocument { file, .. } => json!({"file": file.display().to_string()}),
            Error::ParseDocument { file, .. } => json!({"file": file}),
            Error::InvalidDocument { file, pointer, .. } => {
                json!({"file": file, "pointer": pointer})
            }
            Error::UnknownTool { name, suggestions } => {
                json!({"tool": name, "suggestions": suggestions})
            }
            Error::InvalidArgument { argument, .. } | Error::InvalidReserved { argument, .. } => {
                json!({"argument": argument})
            }
            Error::InvalidForEachKey {
                key,
                tool,
                parameters,
            } => {
                json!({"argument": "_for_each", "key": key, "tool": tool, "parameters": parameters})
            }
            Error::InvalidFilter { index, .. } => json!({"argument": "_filter", "clause": index}),
            Error::NotWalkable { tool, .. } => json!({"tool": tool}),
            Error::Upstream(e) => return e.details(),
            Error::AllValuesFailed { .. } | Error::Cancelled => json!({}),
        };
        match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
}

impl UpstreamError {
    /// The stable name of this failure.
    pub fn kind(&self) -> &'static str {
        match self {
            UpstreamError::Status { .. } => "upstream_status",
            UpstreamError::Connection { .. } => "upstream_connection",
            UpstreamError::Malformed { .. } => "upstream_malformed",
            UpstreamError::MissingCollection { .. } => "upstream_missing_collection",
            UpstreamError::MalformedPage { .. } => "upstream_malformed_page",
            UpstreamError::Redirect { .. } => "upstream_redirect_refused",
            UpstreamError::ByteBound { .. } => "upstream_byte_bound",
            UpstreamError::HostRefused { .. } => "upstream_host_refused",
            UpstreamError::ToolError { .. } => "upstream_tool_error",
        }
    }

    /// `status`, `retryAfterMs`, `page`, `path` where the failure has them,
    /// and always `retryable`.
    pub fn details(&self) -> Map<String, Value> {
        let mut map = Map::new();
        match self {
            UpstreamError::Status {
                status,
                retry_after_ms,
                ..
            } => {
                map.insert("status".into(), json!(status));
                if let Some(ms) = retry_after_ms {
                    map.insert("retryAfterMs".into(), json!(ms));
                }
            }
            UpstreamError::Malformed { status, .. } => {
                map.insert("status".into(), json!(status));
            }
            UpstreamError::MissingCollection { page, path } => {
                map.insert("page".into(), json!(page));
                map.insert("path".into(), json!(path));
            }
            UpstreamError::MalformedPage { page, .. } => {
                map.insert("page".into(), json!(page));
            }
            UpstreamError::ByteBound { read } => {
                map.insert("bytesRead".into(), json!(read));
            }
            UpstreamError::HostRefused { host, .. } => {
                map.insert("host".into(), json!(host));
            }
            UpstreamError::Connection { .. }
            | UpstreamError::Redirect { .. }
            | UpstreamError::ToolError { .. } => {}
        }
        map.insert("retryable".into(), json!(self.is_retryable()));
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_fields() {
        let e = Error::UnknownTool {
            name: "listOrdrs".into(),
            suggestions: vec!["listOrders".into()],
        };
        assert_eq!(e.kind(), "unknown_tool");
        assert_eq!(e.details()["suggestions"], json!(["listOrders"]));
        let e = Error::InvalidArgument {
            argument: "page".into(),
            message: "not an integer".into(),
        };
        assert_eq!(e.kind(), "invalid_argument");
        assert_eq!(e.details()["argument"], "page");
        let e = Error::from(UpstreamError::Status {
            status: 429,
            excerpt: "slow down".into(),
            retry_after_ms: Some(2000),
        });
        assert_eq!(e.kind(), "upstream_status");
        let d = e.details();
        assert_eq!(
            (
                d["status"].clone(),
                d["retryAfterMs"].clone(),
                d["retryable"].clone()
            ),
            (json!(429), json!(2000), json!(true))
        );
        assert_eq!(Error::Cancelled.kind(), "cancelled");
        assert!(Error::Cancelled.details().is_empty());
        let e = UpstreamError::Connection {
            message: "refused".into(),
        };
        assert_eq!(e.kind(), "upstream_connection");
        assert_eq!(e.details()["retryable"], true);
    }
}
