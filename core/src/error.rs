//! The error of a tool call, shared by the crates under the engine and the
//! gateway (import, HTTP, walk). Variants are structured so callers
//! (CLI, engine, gateway) can map them without parsing strings.

use std::path::PathBuf;

/// Everything that can go wrong importing a document or making a tool call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The OpenAPI document could not be read from disk.
    #[error("{}: cannot read the document: {source}", file.display())]
    ReadDocument {
        file: PathBuf,
        source: std::io::Error,
    },
    /// The OpenAPI document is not valid JSON or YAML.
    #[error("{file}: not valid JSON or YAML: {message}")]
    ParseDocument { file: String, message: String },
    /// The document parsed but is not a usable OpenAPI/Swagger document.
    /// `pointer` is a JSON pointer into the document (`""` for the root).
    #[error("{file}: at {pointer}: {message}")]
    InvalidDocument {
        file: String,
        pointer: String,
        message: String,
    },
    /// No tool of that name in the toolkit.
    #[error("unknown tool `{name}`{}", suggestion_suffix(.suggestions))]
    UnknownTool {
        name: String,
        suggestions: Vec<String>,
    },
    /// An argument is missing, unknown or of the wrong type.
    #[error("invalid argument `{argument}`: {message}")]
    InvalidArgument { argument: String, message: String },
    /// A reserved argument (`_fields`, `_for_each`…) is malformed.
    #[error("invalid `{argument}`: {message}")]
    InvalidReserved { argument: String, message: String },
    /// `_for_each.key` names no parameter of the tool.
    #[error("invalid_for_each_key: `{key}` is not a parameter of `{tool}`; its parameters are: {}", .parameters.join(", "))]
    InvalidForEachKey {
        key: String,
        tool: String,
        parameters: Vec<String>,
    },
    /// A filter clause names an unknown operator or has a bad value.
    #[error("invalid filter clause {index}: {message}")]
    InvalidFilter { index: usize, message: String },
    /// `_all_pages` asked of a tool that cannot be walked.
    #[error("`{tool}` cannot walk all pages: {reason}")]
    NotWalkable { tool: String, reason: String },
    /// The upstream failed and nothing was fetched to keep.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// Every `_for_each` value failed.
    #[error("every _for_each value failed; first error: {first}")]
    AllValuesFailed { first: String },
    /// The call was cancelled before anything was fetched.
    #[error("cancelled")]
    Cancelled,
}

fn suggestion_suffix(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean: {}?", suggestions.join(", "))
    }
}

/// One failed upstream request (after retries, if it was retryable).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum UpstreamError {
    /// The upstream answered with a non-success status.
    #[error("upstream answered HTTP {status}: {excerpt}")]
    Status {
        status: u16,
        excerpt: String,
        /// Delay the upstream asked for (`Retry-After`), in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// The request never got an answer (connection refused, reset, timeout).
    #[error("request failed: {message}")]
    Connection { message: String },
    /// The upstream answered 2xx but the body is not JSON.
    #[error(
        "upstream answered HTTP {status} with a body that is not valid JSON ({message}): {excerpt}"
    )]
    Malformed {
        status: u16,
        message: String,
        excerpt: String,
    },
    /// A later page lacks the collection found on page one.
    #[error("page {page} has no collection at `{path}` (page one had it)")]
    MissingCollection { page: u32, path: String },
    /// A page contradicts its own response schema or declared total.
    #[error("page {page} is malformed: {message}")]
    MalformedPage { page: u32, message: String },
    /// A redirect that is not followed: too many hops, or a target that is
    /// not HTTP(S).
    #[error("redirect refused: {message}")]
    Redirect { message: String },
    /// The body was cut off at the raw-bytes bound.
    #[error("the response body passed the raw-bytes bound after {read} bytes; reading stopped")]
    ByteBound { read: u64 },
    /// The host may not be an upstream (`[server] upstream_hosts`, or a
    /// link-local or cloud metadata address): nothing was sent to it.
    #[error("the upstream host `{host}` is refused: {rule}")]
    HostRefused { host: String, rule: String },
    /// An upstream MCP server's tool answered with `isError`: the server
    /// refused the request (not retried), in its own words.
    #[error("the tool answered an error: {message}")]
    ToolError { message: String },
}

impl UpstreamError {
    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            UpstreamError::Status { status, .. } => *status == 429 || *status >= 500,
            UpstreamError::Connection { .. } => true,
            UpstreamError::Malformed { .. }
            | UpstreamError::MissingCollection { .. }
            | UpstreamError::MalformedPage { .. }
            | UpstreamError::Redirect { .. }
            | UpstreamError::ByteBound { .. }
            | UpstreamError::HostRefused { .. }
            | UpstreamError::ToolError { .. } => false,
        }
    }
}

/// Short, single-line excerpt of a body for error messages.
pub fn excerpt(body: &[u8]) -> String {
    const MAX: usize = 160;
    let text = String::from_utf8_lossy(&body[..body.len().min(MAX * 4)]);
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = flat.trim();
    if trimmed.chars().count() > MAX {
        let cut: String = trimmed.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        trimmed.to_string()
    }
}
