//! An upstream MCP server as a provider: a child process spoken to over
//! stdio, or a streamable HTTP server. The first connection is made when
//! the gateway starts and reads the whole tool list (every `nextCursor`
//! page). A supervisor task then watches the connection: when the child
//! exits or the connection drops it reconnects (restarting the child),
//! waiting 1 s, then twice as long after each failure up to 30 s; on
//! shutdown it closes the connection, which stops the child. Calls made
//! while it reconnects fail as connection errors the walk's retry policy
//! already handles.
//!
//! Each call's request carries a progress token of its own; the upstream's
//! `notifications/progress` for it are handed to that call's sink, which
//! passes them on to the gateway's own caller.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dragnet_core::{Tool, UpstreamError};
use dragnet_http::{HostPolicy, RawResponse, Redactor, Upstream};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, NumberOrString, ProgressNotificationParam, ProgressToken, RequestId,
    ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::child::ChildTransport;
use crate::mcp_tools::response_of;
use crate::server::{ChildEnv, McpServer};
use crate::Error;

/// A progress notification an upstream sent for a call.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's upstream progress goes.
pub trait UpstreamProgressSink: Send + Sync {
    fn upstream_progress(&self, progress: UpstreamProgress);
}

impl UpstreamProgressSink for dragnet_core::progress::NoProgress {
    fn upstream_progress(&self, _: UpstreamProgress) {}
}

/// Calls in flight, by the progress token rmcp gave their request, and
/// progress that arrived before its call was registered (a fast upstream
/// may report before `send` returns).
#[derive(Default)]
struct RouteTable {
    calls: HashMap<String, mpsc::UnboundedSender<UpstreamProgress>>,
    early: HashMap<String, Vec<UpstreamProgress>>,
}

/// Early reports kept for at most this many tokens.
const EARLY_TOKENS: usize = 64;

type Routes = Arc<Mutex<RouteTable>>;

/// The client side of the connection: routes progress to its call.
#[derive(Clone)]
struct Forwarder {
    routes: Routes,
}

impl ClientHandler for Forwarder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let key = token_key(&params.progress_token);
        let report = UpstreamProgress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        match routes.calls.get(&key) {
            Some(route) => {
                let _ = route.send(report);
            }
            None => {
                if routes.early.len() >= EARLY_TOKENS {
                    routes.early.clear();
                }
                routes.early.entry(key).or_default().push(report);
            }
        }
    }
}

fn token_key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

/// One upstream MCP server, connected and supervised.
pub struct McpUpstream {
    provider: String,
    identity: String,
    peer: watch::Receiver<Option<Peer<RoleClient>>>,
    routes: Routes,
    /// Where a call that is dropped midway sends its cancellation from.
    tasks: TaskTracker,
    /// Its tools as first listed.
    tools: Vec<rmcp::model::Tool>,
}

impl std::fmt::Debug for McpUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpUpstream")
            .field("provider", &self.provider)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

type Running = RunningService<RoleClient, Forwarder>;

impl McpUpstream {
    /// Connects to `server`, reads its whole tool list, and leaves a
    /// supervisor on `tasks` that reconnects until `shutdown`. Under a
    /// host policy (a server's `upstream_hosts`), a `url` server's host is
    /// held to it, by name and by every address it resolves to, on every
    /// connection; its redirects are not followed.
    pub async fn connect(
        provider: &str,
        server: &McpServer,
        child_env: ChildVars,
        secrets: Arc<Redactor>,
        hosts: Option<Arc<HostPolicy>>,
        tasks: &TaskTracker,
        shutdown: CancellationToken,
    ) -> Result<Arc<McpUpstream>, Error> {
        let routes: Routes = Arc::default();
        let child = Child {
            provider: provider.to_string(),
            env: Arc::new(child_env),
            secrets,
            hosts,
            tasks: tasks.clone(),
            shutdown: shutdown.clone(),
        };
        let running = open(server, &child, &routes).await?;
        let tools = running
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| Error::List(e.to_string()))?;
        let (publish, peer) = watch::channel(Some(running.peer().clone()));
        let upstream = Arc::new(McpUpstream {
            provider: provider.to_string(),
            identity: identity_of(server),
            peer,
            routes: routes.clone(),
            tasks: tasks.clone(),
            tools,
        });
        tasks.spawn(supervise(
            provider.to_string(),
            server.clone(),
            child,
            running,
            routes,
            publish,
            shutdown,
        ));
        Ok(upstream)
    }

    /// Its tools, as listed when the gateway started.
    pub fn tools(&self) -> &[rmcp::model::Tool] {
        &self.tools
    }

    /// Calls `tool` with `arguments`, passing the upstream's progress for
    /// it to `progress`.
    pub async fn call(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        max_bytes: u64,
        progress: &dyn UpstreamProgressSink,
    ) -> Result<RawResponse, UpstreamError> {
        let result = self.call_whole(tool, arguments, progress).await?;
        // A tool error is the upstream refusing the request: not retried,
        // said in its own words.
        if result.is_error == Some(true) {
            return Err(UpstreamError::ToolError {
                message: dragnet_core::error::excerpt(tool_error_text(&result).as_bytes()),
            });
        }
        response_of(&result, max_bytes)
    }

    /// Calls `tool` with `arguments` and returns its answer as the server
    /// said it (every content block, `structuredContent`, `isError`,
    /// `_meta`), passing the upstream's progress for it to `progress`.
    pub async fn call_whole(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        progress: &dyn UpstreamProgressSink,
    ) -> Result<CallToolResult, UpstreamError> {
        let Some(peer) = self.peer.borrow().clone() else {
            return Err(UpstreamError::Connection {
                message: format!(
                    "the upstream MCP server of provider `{}` is restarting",
                    self.provider
                ),
            });
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments.clone()),
        ));
        let connection = |e: rmcp::ServiceError| UpstreamError::Connection {
            message: format!("the upstream MCP server of `{}`: {e}", self.provider),
        };
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(connection)?;
        let key = token_key(&handle.progress_token);
        let (route, mut received) = mpsc::unbounded_channel();
        let early = {
            let mut routes = self.lock_routes();
            routes.calls.insert(key.clone(), route);
            routes.early.remove(&key).unwrap_or_default()
        };
        for p in early {
            progress.upstream_progress(p);
        }
        let mut abandoned = Abandoned {
            peer: Some(peer.clone()),
            id: handle.id.clone(),
            tasks: &self.tasks,
        };
        let call = handle.await_response();
        tokio::pin!(call);
        let answered = loop {
            tokio::select! {
                answered = &mut call => break answered,
                Some(p) = received.recv() => progress.upstream_progress(p),
            }
        };
        abandoned.peer = None;
        self.lock_routes().calls.remove(&key);
        while let Ok(p) = received.try_recv() {
            progress.upstream_progress(p);
        }
        let result = match answered.map_err(connection)? {
            ServerResult::CallToolResult(result) => result,
            _ => {
                return Err(UpstreamError::Connection {
                    message: format!(
                        "the upstream MCP server of `{}` answered tools/call with something else",
                        self.provider
                    ),
                })
            }
        };
        Ok(result)
    }

    fn lock_routes(&self) -> std::sync::MutexGuard<'_, RouteTable> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What sets its answers apart in cache keys: how it is reached.
    pub fn identity(&self) -> &str {
        &self.identity
    }
}

/// What a tool error says: its text content, else its structured content.
fn tool_error_text(result: &rmcp::model::CallToolResult) -> String {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| match block {
            rmcp::model::ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    match (text.is_empty(), &result.structured_content) {
        (false, _) => text.join("\n"),
        (true, Some(value)) => value.to_string(),
        (true, None) => "(no message)".into(),
    }
}

/// Tells the upstream a request was given up when the call waiting for it
/// is dropped (the walk cancelled or out of time).
struct Abandoned<'a> {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
    tasks: &'a TaskTracker,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let id = self.id.clone();
        self.tasks.spawn(async move {
            let reason = Some("the caller gave the request up".to_string());
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                .await;
        });
    }
}

/// One call's view of an upstream MCP server: the loop layer's `Upstream`,
/// with the call's progress sink, and the secrets the upstream's progress
/// messages are scrubbed of on their way to it.
pub struct McpCall<'a> {
    pub upstream: &'a McpUpstream,
    pub progress: &'a dyn UpstreamProgressSink,
    pub redactor: &'a Redactor,
}

/// Progress messages scrubbed of secrets, then passed on.
struct ScrubbedProgress<'a> {
    inner: &'a dyn UpstreamProgressSink,
    redactor: &'a Redactor,
}

impl UpstreamProgressSink for ScrubbedProgress<'_> {
    fn upstream_progress(&self, mut progress: UpstreamProgress) {
        progress.message = progress.message.map(|m| self.redactor.text(m));
        self.inner.upstream_progress(progress);
    }
}

impl Upstream for McpCall<'_> {
    async fn send(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        let progress = ScrubbedProgress {
            inner: self.progress,
            redactor: self.redactor,
        };
        self.upstream
            .call(tool, arguments, max_bytes, &progress)
            .await
    }

    fn identity(&self) -> String {
        self.upstream.identity().to_string()
    }
}

/// A child's environment besides the default one.
pub use crate::server::ChildVars;

/// The variables of the gateway's own environment every child gets (the
/// MCP SDKs' default environment); nothing else of it is passed on.
#[cfg(not(windows))]
pub const DEFAULT_CHILD_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR",
];
#[cfg(windows)]
pub const DEFAULT_CHILD_ENV: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// What sets a server's answers apart in cache keys: the command and the
/// environment it names (names, literal values and the variables others
/// are read from — never a value read from the environment), or the URL.
fn identity_of(server: &McpServer) -> String {
    match server {
        McpServer::Command { argv, env } if env.is_empty() => {
            format!("mcp+stdio:{}", argv.join(" "))
        }
        McpServer::Command { argv, env } => {
            let named: Vec<String> = env
                .iter()
                .map(|(name, value)| match value {
                    ChildEnv::Literal(v) => format!("{name}={v}"),
                    ChildEnv::Var(var) => format!("{name}=${{{var}}}"),
                })
                .collect();
            format!("mcp+stdio:{} env:{}", argv.join(" "), named.join(";"))
        }
        McpServer::Url { url, .. } => format!("mcp+http:{url}"),
    }
}

/// The command that starts `argv` with only the default environment and
/// `vars`.
fn child_command(argv: &[String], vars: &ChildVars) -> Result<tokio::process::Command, Error> {
    let (program, args) = argv.split_first().ok_or_else(|| Error::Spawn {
        command: String::new(),
        message: "the command is empty".into(),
    })?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).env_clear();
    for name in DEFAULT_CHILD_ENV {
        // A shell function exported by bash (`() {…`) is not passed on.
        match std::env::var_os(name) {
            Some(value) if !value.to_string_lossy().starts_with("()") => {
                command.env(name, value);
            }
            _ => {}
        }
    }
    for (name, value) in vars {
        command.env(name, value.expose());
    }
    Ok(command)
}

/// What starting a child takes besides its command: its environment, the
/// secrets its stderr is scrubbed of, and where the task relaying that
/// stderr runs until shutdown.
#[derive(Clone)]
struct Child {
    provider: String,
    env: Arc<ChildVars>,
    secrets: Arc<Redactor>,
    /// Where a `url` server may be (`None`: anywhere).
    hosts: Option<Arc<HostPolicy>>,
    tasks: TaskTracker,
    shutdown: CancellationToken,
}

/// Passes a child's stderr on to the gateway's log (at info), a line at a
/// time, scrubbed of every secret the process holds: a server that prints
/// the variable it was given does not put it in the logs.
async fn relay_stderr(child: Child, stderr: tokio::process::ChildStderr) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    loop {
        let line = tokio::select! {
            _ = child.shutdown.cancelled() => return,
            line = lines.next_line() => line,
        };
        match line {
            Ok(Some(line)) => tracing::info!(
                provider = %child.provider,
                "upstream MCP server: {}",
                child.secrets.text(line)
            ),
            _ => return,
        }
    }
}

/// Opens one connection.
async fn open(server: &McpServer, child: &Child, routes: &Routes) -> Result<Running, Error> {
    let handler = Forwarder {
        routes: routes.clone(),
    };
    match server {
        McpServer::Command { argv, .. } => {
            let command = child_command(argv, &child.env)?;
            let (transport, stderr) = ChildTransport::spawn(command).map_err(|e| Error::Spawn {
                command: argv.join(" "),
                message: e.to_string(),
            })?;
            if let Some(stderr) = stderr {
                child.tasks.spawn(relay_stderr(child.clone(), stderr));
            }
            handler
                .serve(transport)
                .await
                .map_err(|e| Error::Handshake(e.to_string()))
        }
        McpServer::Url { url, headers, .. } => {
            // reqwest 0.13 (rmcp's) needs a process-wide TLS provider.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let config = http_config(url, headers)?;
            let transport = match &child.hosts {
                None => StreamableHttpClientTransport::from_config(config),
                Some(policy) => {
                    held_before_connecting(policy, url).await?;
                    StreamableHttpClientTransport::with_client(held_client(policy)?, config)
                }
            };
            handler
                .serve(transport)
                .await
                .map_err(|e| Error::Handshake(e.to_string()))
        }
    }
}

/// `url`'s host held to `policy` by name and, for a name, by every
/// address it resolves to now, so a refusal is said plainly (the client's
/// resolver holds every later connection to it the same way). A name that
/// does not resolve is left to the connection to report.
async fn held_before_connecting(policy: &HostPolicy, url: &str) -> Result<(), Error> {
    policy
        .check_base_url(url)
        .map_err(|refused| Error::HostRefused { refused })?;
    let host = reqwest_mcp::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string));
    let Some(host) = host.filter(|h| !h.starts_with('[') && h.parse::<std::net::IpAddr>().is_err())
    else {
        return Ok(());
    };
    match policy.resolve(&host).await {
        Err(e) => match e.downcast::<dragnet_http::HostRefused>() {
            Ok(refused) => Err(Error::HostRefused { refused: *refused }),
            Err(_) => Ok(()),
        },
        Ok(_) => Ok(()),
    }
}

/// An HTTP client whose every connection's addresses are held to
/// `policy`, and that follows no redirect (a redirect to an address
/// literal would pass by the resolver).
fn held_client(policy: &Arc<HostPolicy>) -> Result<reqwest_mcp::Client, Error> {
    reqwest_mcp::Client::builder()
        .dns_resolver(Arc::new(HeldResolver {
            policy: policy.clone(),
        }))
        .redirect(reqwest_mcp::redirect::Policy::none())
        .build()
        .map_err(|e| Error::Handshake(format!("cannot build the HTTP client: {e}")))
}

/// Resolves names as [`HostPolicy::resolve`] does.
struct HeldResolver {
    policy: Arc<HostPolicy>,
}

impl reqwest_mcp::dns::Resolve for HeldResolver {
    fn resolve(&self, name: reqwest_mcp::dns::Name) -> reqwest_mcp::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = policy.resolve(&host).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest_mcp::dns::Addrs)
        })
    }
}

fn http_config(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, Error> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    for (name, value) in headers {
        let bad = |message: String| Error::Header {
            name: name.clone(),
            message,
        };
        let header_name =
            http::HeaderName::try_from(name.as_str()).map_err(|e| bad(e.to_string()))?;
        let header_value =
            http::HeaderValue::try_from(value.as_str()).map_err(|e| bad(e.to_string()))?;
        config.custom_headers.insert(header_name, header_value);
    }
    Ok(config)
}

/// Keeps a connection up until `shutdown`.
async fn supervise(
    provider: String,
    server: McpServer,
    child: Child,
    mut running: Running,
    routes: Routes,
    publish: watch::Sender<Option<Peer<RoleClient>>>,
    shutdown: CancellationToken,
) {
    const FIRST: Duration = Duration::from_secs(1);
    const MOST: Duration = Duration::from_secs(30);
    loop {
        let stop = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        tokio::select! {
            _ = &mut waiting => {}
            _ = shutdown.cancelled() => {
                // Closing the connection stops the child process.
                stop.cancel();
                let _ = waiting.await;
                publish.send_replace(None);
                return;
            }
        }
        publish.send_replace(None);
        let mut wait = FIRST;
        loop {
            tracing::warn!(
                provider = %provider,
                "the upstream MCP server stopped; reconnecting in {} s",
                wait.as_secs()
            );
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(wait) => {}
            }
            match open(&server, &child, &routes).await {
                Ok(next) => {
                    publish.send_replace(Some(next.peer().clone()));
                    running = next;
                    break;
                }
                Err(error) => {
                    tracing::warn!(provider = %provider, %error, "reconnecting failed");
                    wait = (wait * 2).min(MOST);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_identity_names_its_environment_but_never_a_value_read() {
        let argv = vec!["npx".to_string(), "server-files".to_string()];
        let bare = McpServer::Command {
            argv: argv.clone(),
            env: Default::default(),
        };
        assert_eq!(identity_of(&bare), "mcp+stdio:npx server-files");
        let named = |root: &str| McpServer::Command {
            argv: argv.clone(),
            env: [
                ("ROOT".to_string(), ChildEnv::Literal(root.into())),
                ("KEY".to_string(), ChildEnv::Var("FILES_KEY".into())),
            ]
            .into(),
        };
        let a = identity_of(&named("/srv/a"));
        assert_eq!(
            a,
            "mcp+stdio:npx server-files env:KEY=${FILES_KEY};ROOT=/srv/a"
        );
        assert_ne!(a, identity_of(&named("/srv/b")));
        assert_ne!(a, identity_of(&bare));
    }
}
