//! The crate's one error type: a provider that cannot be used, because a
//! credential it names is missing or its upstream MCP server could not be
//! started, reached or listed. Messages name variables and secrets, never
//! their values.

/// Why a provider cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A variable the provider names is not set (or empty) in the process
    /// environment.
    #[error("provider `{provider}`: environment variable `{var}` is not set")]
    MissingVariable { provider: String, var: String },
    /// A server's run: the team has no secret of the name the provider
    /// names.
    #[error("provider `{provider}`: the team has no secret `{name}`")]
    MissingSecret { provider: String, name: String },
    #[error("cannot start `{command}`: {message}")]
    Spawn { command: String, message: String },
    #[error("the MCP session did not start: {0}")]
    Handshake(String),
    #[error("listing its tools failed: {0}")]
    List(String),
    /// A `url` server's host is refused by the host policy.
    #[error("{refused}")]
    HostRefused { refused: dragnet_http::HostRefused },
    #[error("header `{name}` cannot be sent: {message}")]
    Header { name: String, message: String },
}
