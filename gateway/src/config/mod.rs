//! `agent.yaml`: the gateway's configuration — the organisation, the
//! providers of tools (OpenAPI documents, upstream MCP servers, connected
//! apps), and agents binding some of those tools, looping or not. A file
//! is read with positions kept (dragnet-located) and compiled into
//! `AgentConfig` with every problem reported at once, each with
//! file:line:col and the YAML path, as workflow files are.

mod compile;
pub mod file;
pub mod oauth;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dragnet_core::{Limits, Tool, Toolkit};
use dragnet_located::Diagnostics;

use crate::guard::SizeBudget;

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub organisation: String,
    pub token_secret_env: Option<String>,
    /// The gateway as an OAuth resource server, when `oauth:` is given.
    pub oauth: Option<crate::oauth::ResourceServerConfig>,
    /// The variable the connected-app credentials' key is read from.
    pub connections_key_env: Option<String>,
    pub size_budget: SizeBudget,
    pub limits: Limits,
    pub providers: BTreeMap<String, Provider>,
    pub agents: BTreeMap<String, Agent>,
    /// The file it came from.
    pub source: PathBuf,
}

/// A provider of tools.
#[derive(Debug, Clone)]
pub struct Provider {
    pub name: String,
    pub kind: ProviderKind,
}

#[derive(Debug, Clone)]
pub enum ProviderKind {
    /// An OpenAPI document's operations; `app` marks a connected-app
    /// toolkit (discovery may pool it).
    OpenApi {
        toolkit: Arc<Toolkit>,
        base_url: BaseUrl,
        credentials: Option<file::CredentialsFile>,
        /// Sent with every request.
        headers: BTreeMap<String, String>,
        runtime_credentials_header: Option<String>,
        app: bool,
    },
    /// An upstream MCP server; its tools are known once connected.
    Mcp(McpServer),
}

/// Where an OpenAPI provider's requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseUrl {
    Url(String),
    /// The demo shop, started in-process.
    Embedded,
}

/// How an upstream MCP server is reached (the provider format shared
/// with workflow files).
pub use dragnet_providers::{ChildEnv, McpServer};

/// An agent and its bindings.
#[derive(Debug, Clone)]
pub struct Agent {
    pub name: String,
    pub bindings: Vec<Binding>,
    /// How many tools it lists directly at most (`toolBudget`, 15 by
    /// default); connected-app toolkits beyond it are pooled (SPEC §7).
    pub tool_budget: usize,
}

/// One bound tool.
#[derive(Debug, Clone)]
pub struct Binding {
    pub tool_id: String,
    pub provider: String,
    /// The tool, for OpenAPI providers (MCP tools are known once connected).
    pub tool: Option<Arc<Tool>>,
    pub looping: bool,
    pub discovery: Option<bool>,
    pub dataset_ttl_hours: Option<u32>,
}

/// Reads and compiles the configuration at `path`.
pub fn load(path: &Path) -> Result<AgentConfig, Diagnostics> {
    let text = dragnet_located::load::read(path, "agent configuration")?;
    load_str(path, &text)
}

/// Compiles configuration text; `source` names it in diagnostics and
/// anchors relative document paths.
pub fn load_str(source: &Path, text: &str) -> Result<AgentConfig, Diagnostics> {
    let kind = dragnet_located::load::Kind {
        when_empty: "the file is empty; an agent configuration needs `organisation`, `providers` \
                     and `agents`",
        when_failed: "the configuration could not be compiled",
    };
    dragnet_located::load::load(source, text, kind, |cx, root| {
        compile::compile(cx, root, source)
    })
}

/// The JSON Schema (draft-07) of `agent.yaml`.
pub fn json_schema() -> serde_json::Value {
    schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<file::AgentConfigFile>()
        .to_value()
}
