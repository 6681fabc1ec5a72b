//! A provider's parts as written, the same in workflow files and
//! `agent.yaml`: serde types that mirror the file one-to-one, reject
//! unknown keys, and document themselves through schemars (both published
//! schemas are generated from them). Nothing is checked here beyond shape;
//! [`crate::compile`] does the rest.

use std::collections::BTreeMap;

use dragnet_walk::overrides::PagingRoles;
use schemars::JsonSchema;
use serde::Deserialize;

/// A provider of tools, written the same in workflow files and
/// `agent.yaml`: exactly one of `openapi`, `mcp` or (in `agent.yaml`) `app`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a provider: {openapi, base_url, credentials?, headers?, paging?} or {mcp}"
)]
pub struct ProviderFile {
    /// An OpenAPI 3.x or Swagger 2.0 document (JSON or YAML, path relative
    /// to this file) whose operations are the tools.
    #[serde(default)]
    pub openapi: Option<String>,
    /// An upstream MCP server whose tools are the tools.
    #[serde(default)]
    pub mcp: Option<McpFile>,
    /// `agent.yaml` only: a connected-app toolkit, an OpenAPI document
    /// whose tools the discovery rules may pool.
    #[serde(default)]
    pub app: Option<String>,
    /// Where `openapi` (and `app`) requests go: `http(s)://…` (in
    /// `agent.yaml` also `embedded`, the demo shop run in-process).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The organisation's credentials for `openapi` requests.
    #[serde(default)]
    pub credentials: Option<CredentialsFile>,
    /// Headers sent with every `openapi` request (not for secrets: those
    /// go in `credentials`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `agent.yaml` only: a user's own credentials, presented with each
    /// request in this header and sent upstream as a bearer token; never
    /// stored or logged.
    #[serde(default)]
    pub runtime_credentials_header: Option<String>,
    /// Paging roles named by hand, by operation (`openapi`/`app` only),
    /// for tools whose paging parameters the detection does not know:
    /// `{size, page}`, `{size, offset}` or `{cursor, next}`.
    #[serde(default)]
    pub paging: BTreeMap<String, PagingRoles>,
}

/// An upstream MCP server: exactly one of a command run as a child process
/// (stdio), a URL (streamable HTTP) with headers, or (in a workflow) the
/// name of a server the operator of `dragnet serve` declared.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpFile {
    /// The program and its arguments. Refused in a workflow pushed to
    /// `dragnet serve`: a team may not start programs on the server.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Workflows only: a server declared in the configuration's
    /// `[server.mcp_servers.<name>]` (its command and environment are the
    /// operator's). The way a pushed workflow reaches a local MCP server.
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// Sent with every request to `url`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Sent with every request to `url`, each value read from the named
    /// environment variable when the gateway starts (for secrets, which
    /// do not belong in this file).
    #[serde(default)]
    pub headers_env: BTreeMap<String, String>,
    /// The environment of the `command`'s child process besides the small
    /// default one (PATH, HOME, USER, LOGNAME, SHELL, TERM, LANG, TMPDIR):
    /// by variable name, a literal value (not for secrets) or `{env: VAR}`,
    /// read from the gateway's environment when it starts (a missing one
    /// stops the start). Nothing else of the gateway's environment reaches
    /// the child.
    #[serde(default)]
    pub env: BTreeMap<String, ChildEnvFile>,
}

/// One variable of an MCP child's environment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ChildEnvFile {
    /// This value, as written (not for secrets).
    Literal(String),
    /// The value of a variable of the gateway's environment.
    FromEnv(FromEnvFile),
}

/// A value read from the gateway's environment when it starts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FromEnvFile {
    /// The gateway's environment variable the value is read from.
    pub env: String,
}

/// A provider's credentials. Each `env`, `username_env` or `password_env`
/// names a variable: in agent.yaml and `dragnet run`, of the process's
/// environment (read when the gateway or the run starts); in a workflow
/// pushed to `dragnet serve`, one of the team's secrets (never the
/// server's environment).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CredentialsFile {
    /// `Authorization: Bearer <value of env>`.
    Bearer { env: String },
    /// `<name>: <value of env>`.
    Header { name: String, env: String },
    /// HTTP basic authentication.
    Basic {
        username_env: String,
        password_env: String,
    },
}
