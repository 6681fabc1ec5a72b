//! Where a provider's calls go: an OpenAPI provider's HTTP client, or an
//! upstream MCP server (a supervised child process or a streamable HTTP
//! server) whose tools become loop-layer tools. Both are driven through
//! the same `dragnet_walk::execute`.

use std::sync::Arc;

use dragnet_http::HttpUpstream;

use crate::mcp_client::McpUpstream;

/// One provider's connection.
#[derive(Debug, Clone)]
pub enum ProviderUpstream {
    /// An OpenAPI document's operations, with the organisation credentials.
    Http(Arc<HttpUpstream>),
    Mcp(Arc<McpUpstream>),
}
