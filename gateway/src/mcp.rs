//! The one adapter over rmcp (pinned 3.11.0): an agent's gateway served as
//! an MCP server. This first slice serves stdio, where the agent is chosen
//! by the command line and the thread is the process's session; a call
//! that carries a progress token gets `notifications/progress` with the
//! walk's counters. The streamable HTTP transport and signed tokens are
//! still to come. Every tool error is a `CallToolResult` with `isError`,
//! so the agent reads it; nothing here is a protocol error but an unknown
//! method.

use std::sync::Arc;

use dragnet_steps::progress::{NoProgress, ProgressEvent, ProgressSink};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::results::ResultScope;
use crate::runtime::{Answer, Gateway};
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
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
        let args = request.arguments.unwrap_or_default();
        let Some(token) = token else {
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
            return Ok(result_of(answer));
        };
        // The walk's progress (already at most one per 750 ms) goes out as
        // notifications while the call runs, the last ones after it.
        let (events, mut received) = mpsc::unbounded_channel();
        let sink = ChannelSink(events);
        let call = self.gateway.call(
            &self.claims,
            &self.scope,
            &request.name,
            args,
            &sink,
            context.ct.clone(),
        );
        tokio::pin!(call);
        let mut sent = 0u32;
        let answer = loop {
            tokio::select! {
                answer = &mut call => break answer,
                Some(event) = received.recv() => {
                    sent += 1;
                    notify(&context, &token, sent, &event).await;
                }
            }
        };
        while let Ok(event) = received.try_recv() {
            sent += 1;
            notify(&context, &token, sent, &event).await;
        }
        Ok(result_of(answer))
    }
}

/// A progress sink that hands events to the request's notifier.
struct ChannelSink(mpsc::UnboundedSender<ProgressEvent>);

impl ProgressSink for ChannelSink {
    fn emit(&self, event: &ProgressEvent) {
        // The receiver lives as long as the call; a closed one drops it.
        let _ = self.0.send(event.clone());
    }
}

/// Sends one progress notification: the count so far as `progress`, the
/// walk's counters (SPEC §6) as the message.
async fn notify(
    context: &RequestContext<RoleServer>,
    token: &ProgressToken,
    n: u32,
    event: &ProgressEvent,
) {
    let mut param = ProgressNotificationParam::new(token.clone(), f64::from(n))
        .with_message(event.to_json().to_string());
    if event.pages_max > 0 {
        param = param.with_total(f64::from(event.pages_max.max(n)));
    }
    if let Err(error) = context.peer.notify_progress(param).await {
        tracing::debug!(%error, "a progress notification was not sent");
    }
}

/// The MCP result of an answer.
fn result_of(answer: Answer) -> CallToolResponse {
    let content = vec![ContentBlock::text(answer.text)];
    match answer.is_error {
        true => CallToolResult::error(content),
        false => CallToolResult::success(content),
    }
    .into()
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
