//! How an upstream MCP server is reached, as compiled from an
//! [`McpFile`](crate::file::McpFile) by [`crate::compile::mcp_server`]:
//! validated, its secrets still named, not read (a
//! [`Resolver`](crate::Resolver) reads them when the server is started).

use std::collections::BTreeMap;

use dragnet_core::secret::Secret;

/// A child's environment besides the default one: each name with its
/// value (read from the gateway's environment at start, or written in the
/// configuration).
pub type ChildVars = Vec<(String, Secret)>;

/// How an upstream MCP server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServer {
    /// A child process: its program and arguments, and its environment
    /// besides the default one.
    Command {
        argv: Vec<String>,
        env: BTreeMap<String, ChildEnv>,
    },
    Url {
        url: String,
        headers: BTreeMap<String, String>,
        /// Header name → the environment variable its value is read from.
        headers_env: BTreeMap<String, String>,
    },
}

/// One variable of an upstream MCP child's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnv {
    /// A value written in the configuration.
    Literal(String),
    /// The value of the gateway's variable of this name, read at start.
    Var(String),
}

/// Where a provider's MCP server comes from: its own `command` or `url`,
/// or (in a workflow) a server the operator declared, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpSource {
    Own(McpServer),
    /// `mcp: {server: NAME}`: `[server.mcp_servers.NAME]` of the
    /// configuration, resolved when a run starts.
    Declared(String),
}

/// A server the operator declared (`[server.mcp_servers.NAME]`): its
/// command and its child's environment, read from the operator's
/// environment when the process started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredServer {
    /// Always a [`McpServer::Command`].
    pub server: McpServer,
    pub vars: ChildVars,
}
