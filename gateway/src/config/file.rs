//! `agent.yaml` as written: serde types that mirror the file one-to-one,
//! reject unknown keys, and document themselves through schemars (the
//! published schema is `schemas/agent.schema.json`). Nothing is checked
//! here beyond shape; `compile` does the rest.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// The configuration of a dragnet agent gateway: an organisation, the
/// providers of its tools, and agents that bind some of those tools.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "dragnet agent gateway")]
pub struct AgentConfigFile {
    /// Editors' schema reference (JSON files); ignored.
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// The organisation the providers' own credentials belong to.
    #[schemars(length(min = 1))]
    pub organisation: String,
    /// The environment variable holding the HS256 secret callers' tokens
    /// are signed with (at least 32 bytes); needed over HTTP.
    #[serde(default)]
    pub token_secret_env: Option<String>,
    /// Accept OAuth 2.1 access tokens over HTTP from these issuers (the
    /// gateway as a resource server), beside or instead of HS256 tokens.
    #[serde(default)]
    pub oauth: Option<super::oauth::OAuthFile>,
    /// The environment variable holding the key connected-app credentials
    /// are sealed with at rest (at least 32 bytes); needed when an agent
    /// binds an `app` provider's tools and callers connect it.
    #[serde(default)]
    pub connections_key_env: Option<String>,
    /// The size budget of every answer, in estimated tokens (one per four
    /// characters): 500 to 100,000, 8,000 when absent.
    #[serde(default)]
    pub size_budget_tokens: Option<u64>,
    /// Bounds of every tool call.
    #[serde(default)]
    pub limits: LimitsFile,
    /// Sources of tools, by name (`^[A-Za-z_][A-Za-z0-9_-]*$`).
    pub providers: BTreeMap<String, ProviderFile>,
    /// Agents by name, each with the tools it may call.
    pub agents: BTreeMap<String, AgentFile>,
}

/// Top-level keys, in the order of `AgentConfigFile`.
pub const TOP_LEVEL_KEYS: [&str; 9] = [
    "$schema",
    "organisation",
    "token_secret_env",
    "oauth",
    "connections_key_env",
    "size_budget_tokens",
    "limits",
    "providers",
    "agents",
];

/// Bounds of every tool call; each absent one keeps its default.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    pub max_pages: Option<u32>,
    pub max_requests: Option<u32>,
    pub max_items: Option<usize>,
    pub max_bytes: Option<u64>,
    pub wall_clock_seconds: Option<u64>,
    pub max_for_each_values: Option<usize>,
}

/// A provider's parts written the same way in workflow files.
pub use dragnet_providers::file::{
    ChildEnvFile, CredentialsFile, FromEnvFile, McpFile, ProviderFile,
};

/// An agent.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentFile {
    /// What the agent is for.
    #[serde(default)]
    pub description: Option<String>,
    /// The tools it may call.
    #[serde(rename = "agentTools")]
    pub agent_tools: Vec<BindingFile>,
    /// How many tools it lists directly at most (1 to 128, 15 by default):
    /// connected-app toolkits that do not fit are pooled behind
    /// `search_tools` and `load_tool`.
    #[serde(rename = "toolBudget", default)]
    pub tool_budget: Option<usize>,
}

/// One tool bound to an agent. Looping belongs to the binding: two agents
/// may bind the same tool, looping for one and not for the other.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BindingFile {
    /// The tool's name (or its operationId) in the provider.
    pub tool_id: String,
    pub provider_id: String,
    /// Give the agent the loop layer on this tool (`_all_pages`, `_fields`,
    /// `_for_each`, `_refresh`) and the retrieval tools.
    #[serde(default)]
    pub loop_responses: bool,
    /// Always pool the tool behind tool search (`true`), or always keep it
    /// direct (`false`); absent, the discovery rules decide.
    #[serde(default)]
    pub discovery: Option<bool>,
    /// How long its cached walks are served, in hours (1 to 720).
    #[serde(default)]
    pub dataset_ttl_hours: Option<u32>,
}
