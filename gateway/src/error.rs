//! The crate's one error type. Each variant says what the agent can do
//! next; an id of another organisation or thread is `UnknownResult`, the
//! same answer as for one that never existed.

use chrono::{DateTime, Utc};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no stored result `{id}`: results are kept 15 minutes for the conversation that made \
         them; call the tool again to get a new one"
    )]
    UnknownResult { id: String },

    #[error(
        "stored result `{id}` expired at {expired_at}: results are kept 15 minutes; call the \
         tool again (with the same arguments) to get the data again"
    )]
    ExpiredResult {
        id: String,
        expired_at: DateTime<Utc>,
    },

    #[error("`{argument}`: {message}")]
    BadArgument { argument: String, message: String },

    #[error(
        "stored result `{id}` holds no collection of items to query; read it with \
         fetchToolResult {{resultId, offset, length}}"
    )]
    NoItems { id: String },

    #[error(
        "`{tool}` was not called: the previous answer was cut and is stored as {id}. Read it \
         first with queryToolResult {{resultId: \"{id}\", offset, filter?, fields?}} or \
         fetchToolResult {{resultId: \"{id}\", offset, length}}; then other tools can be called"
    )]
    RetrievalOnly { tool: String, id: String },

    /// The store behind a port failed: its error, kept whole (whether it
    /// is transient included).
    #[error("the result store failed: {0}")]
    Store(#[from] dragnet_core::ports::Error),

    /// The secret callers' tokens are signed with is too short to sign
    /// with.
    #[error("the token secret has {bytes} bytes; give at least {min}")]
    ShortTokenSecret { bytes: usize, min: usize },

    /// The MCP session over stdio did not start (`ended: false`) or ended
    /// abnormally, in rmcp's words.
    #[error("the MCP session {}: {message}", if *.ended { "ended abnormally" } else { "did not start" })]
    Session { ended: bool, message: String },
}

impl Error {
    pub fn bad(argument: impl Into<String>, message: impl Into<String>) -> Error {
        Error::BadArgument {
            argument: argument.into(),
            message: message.into(),
        }
    }

    /// The stable snake_case name a tool error is reported by.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::UnknownResult { .. } => "unknown_result",
            Error::ExpiredResult { .. } => "expired_result",
            Error::BadArgument { .. } => "invalid_argument",
            Error::NoItems { .. } => "no_items",
            Error::RetrievalOnly { .. } => "retrieval_only",
            Error::Store(_) => "store_error",
            Error::ShortTokenSecret { .. } => "short_token_secret",
            Error::Session { .. } => "mcp_session",
        }
    }
}
