//! A tool as an MCP client sees it: the vocabulary every tool list is made
//! of — bound tools ([`crate::listing`]), the retrieval tools, the
//! discovery tools ([`crate::discovery::pool`]) and the connected-app tools
//! ([`crate::apps`]).

use serde::Serialize;
use serde_json::Value;

/// A tool as an MCP client sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}
