//! Where a provider's calls go: an OpenAPI provider's HTTP client, or an
//! upstream MCP server (a supervised child process or a streamable HTTP
//! server) whose tools become loop-layer tools. Both are driven through
//! the same `steps::execute`.

pub mod mcp_client;
pub mod mcp_tools;

use std::sync::Arc;

use dragnet_steps::http::HttpUpstream;

pub use mcp_client::{McpCall, McpUpstream, UpstreamProgress, UpstreamProgressSink};

/// One provider's connection.
#[derive(Debug, Clone)]
pub enum ProviderUpstream {
    /// An OpenAPI document's operations, with the organisation credentials.
    Http(Arc<HttpUpstream>),
    Mcp(Arc<McpUpstream>),
}
