//! A provider's parts as written, the same in workflow files and
//! `agent.yaml`: serde types that mirror the file one-to-one, reject
//! unknown keys, and document themselves through schemars (both published
//! schemas are generated from them). Nothing is checked here beyond shape;
//! [`crate::compile`] does the rest.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// An upstream MCP server: a command run as a child process (stdio), or a
/// URL (streamable HTTP) with headers.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpFile {
    /// The program and its arguments.
    #[serde(default)]
    pub command: Option<Vec<String>>,
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
