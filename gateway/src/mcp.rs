//! The one adapter over rmcp (pinned 3.11.0): an agent's gateway served as
//! an MCP server. This first slice serves stdio, where the agent is chosen
//! by the command line and the thread is the process's session; the
//! streamable HTTP transport, signed tokens and progress notifications are
//! still to come. Every tool error is a `CallToolResult` with `isError`,
//! so the agent reads it; nothing here is a protocol error but an unknown
//! method.

use std::sync::Arc;

use dragnet_steps::progress::NoProgress;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::results::ResultScope;
use crate::runtime::Gateway;
use crate::token::Claims;

/// How agents holding looping tools should use them, in dragnet's words.
pub const GUIDANCE: &str = "Some tools here can read a whole collection in one call. Before you \
count, total or compare rows, get all of them: pass _all_pages: true, and check that the answer \
says _pagingComplete: true. Ask only for the fields you need with _fields. If an answer was cut \
to fit (it has _truncated and a _resultId), read the rest with queryToolResult or \
fetchToolResult before you conclude anything. When a walk stopped early, say that the result is \
partial and why, in plain words; do not describe how the tools work to the user.";

/// One agent's gateway as an MCP server.
pub struct McpAgent {
    gateway: Arc<Gateway>,
    claims: Claims,
    scope: ResultScope,
}

impl McpAgent {
    /// Agent `claims.agent` of `gateway`, its results kept in `scope`.
    pub fn new(gateway: Arc<Gateway>, claims: Claims, scope: ResultScope) -> McpAgent {
        McpAgent {
            gateway,
            claims,
            scope,
        }
    }

    fn loops(&self) -> bool {
        self.gateway
            .config()
            .agents
            .get(&self.claims.agent)
            .is_some_and(|a| a.bindings.iter().any(|b| b.looping))
    }
}

impl ServerHandler for McpAgent {
    fn get_info(&self) -> ServerConfig {
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        match self.loops() {
            true => info.with_instructions(GUIDANCE),
            false => info,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self
            .gateway
            .tools(&self.claims.agent)
            .into_iter()
            .map(|d| {
                let schema = match d.input_schema {
                    Value::Object(o) => o,
                    _ => serde_json::Map::new(),
                };
                Tool::new(d.name, d.description, Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let answer = self
            .gateway
            .call(
                &self.claims,
                &self.scope,
                &request.name,
                args,
                &NoProgress,
                context.ct.clone(),
            )
            .await;
        let content = vec![ContentBlock::text(answer.text)];
        Ok(match answer.is_error {
            true => CallToolResult::error(content),
            false => CallToolResult::success(content),
        }
        .into())
    }
}

/// Serves `agent` over this process's stdin and stdout until the client
/// goes away.
pub async fn serve_stdio(agent: McpAgent) -> Result<(), String> {
    let running = agent
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("the MCP session ended abnormally: {e}"))
}
