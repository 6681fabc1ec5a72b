//! The one adapter over rmcp (pinned 3.11.0): the gateway served as an MCP
//! server, over stdio (`serve_stdio`) or streamable HTTP (`http`), in both
//! protocol generations (legacy sessions with `initialize`, and stateless
//! 2026-07-28 requests).
//!
//! Who a request is for comes from its transport: over stdio one caller is
//! fixed for the process (the agent chosen by flag, the thread the
//! process's session; a 2026-07-28 request there is no session, so its
//! tool list never grows with what was loaded); over HTTP each request carries its verified token
//! (the HTTP layer refuses the rest), its session id on legacy sessions,
//! the thread id it presents (`X-Dragnet-Thread` header or the
//! `dev.dragnet/thread` key of `_meta`), and the runtime credentials the
//! configuration declares headers for. `tools/list` depends on the token's
//! agent only, never on the connection.
//!
//! A call that carries a progress token gets `notifications/progress`:
//! the walk's counters (at most one per 750 ms), and an upstream MCP
//! server's own progress for it passed on, as one rising series counted
//! in requests (the private `progress` module). Every tool error is a
//! `CallToolResult` with `isError`, so the agent reads it.

pub mod http;
pub mod lines;
mod progress;
pub(crate) mod resources;
mod stdio;

use std::sync::Arc;

use dragnet_core::progress::{ProgressEvent, ProgressSink};
use dragnet_core::secret::Secret;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    ErrorCode, InitializeRequestParams, InitializeResult, ListResourceTemplatesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::caller::{result_scope, Caller, RuntimeCredentials};
use crate::config::ProviderKind;
use crate::runtime::{Answer, Gateway};
use crate::token::Claims;
use dragnet_providers::{UpstreamProgress, UpstreamProgressSink};

/// How agents holding looping tools should use them, in dragnet's words.
pub const GUIDANCE: &str = "Some tools here can read a whole collection in one call. Before you \
count, total or compare rows, get all of them: pass _all_pages: true, and check that the answer \
says _pagingComplete: true. Ask only for the fields you need with _fields. If an answer was cut \
to fit (it has _truncated and a _resultId), read the rest with queryToolResult or \
fetchToolResult before you conclude anything. When a walk stopped early, say that the result is \
partial and why, in plain words; do not describe how the tools work to the user.";

/// How agents with a pool find the tools not listed.
pub const DISCOVERY_GUIDANCE: &str = "More tools exist than are listed: when none listed fits the task, search for one with search_tools (say what it should do), load the ones you need with load_tool, then call them (through call_tool when they do not appear in your list).";

/// The header a caller presents its thread id in (stateless requests).
pub const THREAD_HEADER: &str = "x-dragnet-thread";
/// The `_meta` key a caller may present its thread id in instead.
pub const THREAD_META: &str = "dev.dragnet/thread";
/// The header legacy streamable HTTP sessions are named by.
const SESSION_HEADER: &str = "mcp-session-id";

/// Whom requests are for.
#[derive(Clone)]
enum Callers {
    /// Over stdio: one caller for the process.
    Fixed(Box<Caller>),
    /// Over HTTP: each request's own, from what the HTTP layer verified.
    PerRequest,
}

/// The gateway as an MCP server handler.
#[derive(Clone)]
pub struct McpAgent {
    gateway: Arc<Gateway>,
    callers: Callers,
}

/// What the HTTP layer verified and extracted for one request: its claims
/// and its runtime credentials, the headers that carried them removed.
#[derive(Debug, Clone)]
pub struct Verified {
    pub claims: Claims,
    pub runtime: RuntimeCredentials,
}

impl McpAgent {
    /// One fixed caller (stdio).
    pub fn stdio(gateway: Arc<Gateway>, caller: Caller) -> McpAgent {
        McpAgent {
            gateway,
            callers: Callers::Fixed(Box::new(caller)),
        }
    }

    /// Callers per request (streamable HTTP).
    pub fn per_request(gateway: Arc<Gateway>) -> McpAgent {
        McpAgent {
            gateway,
            callers: Callers::PerRequest,
        }
    }

    /// The caller of one request.
    fn caller(
        &self,
        context: &RequestContext<RoleServer>,
        call_meta: Option<&rmcp::model::RequestMetaObject>,
    ) -> Result<Caller, McpError> {
        let parts = match &self.callers {
            // A stateless (2026-07-28) request over stdio is no session:
            // its tool list must not depend on what earlier requests loaded.
            Callers::Fixed(caller) => {
                let mut caller = caller.as_ref().clone();
                caller.session = caller.session && !stateless(context);
                return Ok(caller);
            }
            Callers::PerRequest => context
                .extensions
                .get::<::http::request::Parts>()
                .ok_or_else(unauthenticated)?,
        };
        let verified = parts
            .extensions
            .get::<Verified>()
            .ok_or_else(unauthenticated)?;
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let from_meta = |meta: &rmcp::model::RequestMetaObject| {
            meta.0
                 .0
                .get(THREAD_META)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let session = header(SESSION_HEADER);
        let presented = header(THREAD_HEADER)
            .or_else(|| call_meta.and_then(from_meta))
            .or_else(|| from_meta(&context.meta));
        Ok(Caller {
            session: session.is_some(),
            scope: result_scope(&verified.claims, session.as_deref(), presented.as_deref()),
            claims: verified.claims.clone(),
            runtime: verified.runtime.clone(),
        })
    }

    fn agent_of(&self, context: &RequestContext<RoleServer>) -> Result<String, McpError> {
        Ok(self.caller(context, None)?.claims.agent)
    }

    fn info_for(&self, agent: &str) -> ServerConfig {
        let info = ServerConfig::new(capabilities());
        let mut parts = Vec::new();
        if self.gateway.loops(agent) {
            parts.push(GUIDANCE);
        }
        if self.gateway.has_pool(agent) {
            parts.push(DISCOVERY_GUIDANCE);
        }
        match parts.is_empty() {
            true => info,
            false => info.with_instructions(parts.join(" ")),
        }
    }
}

/// What the gateway serves: tools (whose list changes as tools are
/// loaded), and stored results as resources.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_resources()
        .build()
}

/// Whether a request is of a protocol without `initialize` (2026-07-28 and
/// later): each request stands alone, with no session.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

fn unauthenticated() -> McpError {
    McpError::new(
        ErrorCode::INVALID_REQUEST,
        "the request carries no verified caller",
        None,
    )
}

/// Reads the runtime credentials `gateway`'s providers declare headers for
/// out of `headers`, removing those headers.
pub fn take_runtime_credentials(
    gateway: &Gateway,
    headers: &mut ::http::HeaderMap,
) -> RuntimeCredentials {
    let mut found = RuntimeCredentials::default();
    for (name, provider) in &gateway.config().providers {
        let ProviderKind::OpenApi {
            runtime_credentials_header: Some(header),
            ..
        } = &provider.kind
        else {
            continue;
        };
        let Some(value) = headers.remove(header.as_str()) else {
            continue;
        };
        if let Ok(text) = value.to_str() {
            let text = text.trim();
            let token = text
                .strip_prefix("Bearer ")
                .or_else(|| text.strip_prefix("bearer "))
                .unwrap_or(text);
            if !token.is_empty() {
                found.insert(name, Secret::new(token));
            }
        }
    }
    found
}

impl ServerHandler for McpAgent {
    fn get_info(&self) -> ServerConfig {
        match &self.callers {
            Callers::Fixed(caller) => self.info_for(&caller.claims.agent),
            Callers::PerRequest => ServerConfig::new(capabilities()),
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = self.info_for(&self.agent_of(&context)?).instructions;
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        let info = self.info_for(&self.agent_of(&context)?);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = self.caller(&context, None)?;
        let tools = self
            .gateway
            .tools_for(&caller)
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

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            resources::template(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let caller = self.caller(&context, request.meta.as_ref())?;
        // Boxed for the reason `call_tool`'s call is.
        match Box::pin(self.gateway.read_result(&caller, &request.uri)).await {
            Ok(stored) => Ok(resources::contents(&request.uri, stored).into()),
            Err(e) if matches!(e, crate::Error::UnknownResult { .. }) => {
                Err(McpError::resource_not_found(e.to_string(), None))
            }
            Err(e) => Err(McpError::invalid_params(e.to_string(), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&context, request.meta.as_ref())?;
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
        let args = request.arguments.unwrap_or_default();
        // Progress (the walk's, already at most one per 750 ms, and an
        // upstream's) goes out as notifications while the call runs, the
        // last ones after it; without a token it is dropped.
        let (events, mut received) = mpsc::unbounded_channel();
        let sink = ChannelSink(token.is_some().then_some(events));
        let loads = request.name == crate::discovery::pool::LOAD_TOOL && caller.session;
        // Boxed: the call's state is tens of kilobytes, and rmcp moves the
        // handler's future into a task of its own for every request; a box
        // keeps that move to a pointer's size.
        let mut call =
            Box::pin(
                self.gateway
                    .call(&caller, &request.name, args, &sink, context.ct.clone()),
            );
        let Some(token) = token else {
            let answer = call.await;
            if loads && !answer.is_error {
                tools_changed(&context).await;
            }
            return Ok(result_of(answer, links_known(&context)));
        };
        let mut series = progress::Sequence::default();
        let answer = loop {
            tokio::select! {
                answer = &mut call => break answer,
                Some(event) = received.recv() => notify(&context, &token, &mut series, &event).await,
            }
        };
        while let Ok(event) = received.try_recv() {
            notify(&context, &token, &mut series, &event).await;
        }
        if loads && !answer.is_error {
            tools_changed(&context).await;
        }
        Ok(result_of(answer, links_known(&context)))
    }
}

/// Tells a session's client that its tool list changed (a tool was loaded).
async fn tools_changed(context: &RequestContext<RoleServer>) {
    if let Err(error) = context.peer.notify_tool_list_changed().await {
        tracing::debug!(%error, "telling the client its tool list changed");
    }
}

/// One progress report of a call.
#[derive(Debug, Clone)]
enum Event {
    Walk(ProgressEvent),
    Upstream(UpstreamProgress),
}

/// A sink that hands a call's progress to its notifier (or drops it when
/// the call carried no progress token).
struct ChannelSink(Option<mpsc::UnboundedSender<Event>>);

impl ProgressSink for ChannelSink {
    fn emit(&self, event: &ProgressEvent) {
        // The receiver lives as long as the call; a closed one drops it.
        if let Some(events) = &self.0 {
            let _ = events.send(Event::Walk(event.clone()));
        }
    }
}

impl UpstreamProgressSink for ChannelSink {
    fn upstream_progress(&self, progress: UpstreamProgress) {
        if let Some(events) = &self.0 {
            let _ = events.send(Event::Upstream(progress));
        }
    }
}

/// Sends one progress notification of the call's series (see
/// [`progress`]): the walk's counters (SPEC §6) as the message, or an
/// upstream's own report under `upstream`. A report that cannot advance
/// the series is not sent.
async fn notify(
    context: &RequestContext<RoleServer>,
    token: &ProgressToken,
    series: &mut progress::Sequence,
    event: &Event,
) {
    let (point, message) = match event {
        Event::Walk(walk) => (
            series.walk(walk.requests, walk.requests_max),
            walk.to_json(),
        ),
        Event::Upstream(up) => (
            series.upstream(up.progress, up.total),
            serde_json::json!({
                "upstream": {"progress": up.progress, "total": up.total, "message": up.message}
            }),
        ),
    };
    let Some(point) = point else { return };
    let mut param = ProgressNotificationParam::new(token.clone(), point.progress)
        .with_message(message.to_string());
    if let Some(total) = point.total {
        param = param.with_total(total);
    }
    if let Err(error) = context.peer.notify_progress(param).await {
        tracing::debug!(%error, "a progress notification was not sent");
    }
}

/// Whether the caller's protocol has `resource_link` content blocks
/// (2025-06-18 and later; revisions are dated, so they compare as text).
/// A caller whose version is not known is taken to be current.
fn links_known(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_none_or(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2025_06_18.as_str())
}

/// The MCP result of an answer, for a caller that reads `resource_link`
/// blocks or (`links` false, an older protocol) does not: it gets the
/// link's words as text instead, since a block it cannot read would fail
/// the whole answer.
fn result_of(answer: Answer, links: bool) -> CallToolResponse {
    // An upstream's answer as it said it.
    if let Some(mut result) = answer.whole.map(|whole| *whole) {
        // An upstream on an older protocol sends no `resultType`; ours is
        // complete (the handler drops it again for older callers).
        result.result_type = Some(rmcp::model::ResultType::COMPLETE);
        if !links {
            result.content = result.content.into_iter().map(resources::as_text).collect();
        }
        return result.into();
    }
    let mut content = vec![ContentBlock::text(answer.text)];
    content.extend(
        answer
            .stored
            .as_ref()
            .map(resources::link)
            .filter(|_| links),
    );
    match answer.is_error {
        true => CallToolResult::error(content),
        false => CallToolResult::success(content),
    }
    .into()
}

/// Serves `agent` over this process's stdin and stdout until the client
/// goes away.
pub async fn serve_stdio(agent: McpAgent) -> Result<(), crate::Error> {
    let (read, write) = stdio::stdio();
    let running = agent
        .serve(lines::Lines::new(read, write))
        .await
        .map_err(|e| crate::Error::Session {
            ended: false,
            message: e.to_string(),
        })?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| crate::Error::Session {
            ended: true,
            message: e.to_string(),
        })
}
