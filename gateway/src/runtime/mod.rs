//! The gateway at work, without a transport: an agent's tools listed and
//! called. A call of a bound tool goes through the loop layer
//! (`steps::execute`, the one implementation workflows use too) with the
//! binding's looping (reserved arguments split off, so none reaches the
//! upstream, and refused on a binding that does not loop), the caller's
//! cache scope (looping bindings only: `_refresh`, the way past a hit, is
//! theirs), the size guard, and the retrieval-only rule; the
//! retrieval tools read stored results. A provider may be an OpenAPI
//! document (its calls carry the organisation's credentials, or the
//! caller's own when the provider takes them) or an upstream MCP server
//! (connected and supervised from `start`, its progress passed on). Every
//! failure is a tool error the agent reads, never a protocol error.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use dragnet_core::clock::Clock;
use dragnet_core::ports::cache::{CacheMode, CacheStore};
use dragnet_core::progress::ProgressSink;
use dragnet_core::secret::Secret;
use dragnet_core::Payload;
use dragnet_core::{ConnectionStore, ResultStore};
use dragnet_http::redact::Redacting;
use dragnet_http::{HttpUpstream, Redactor, SealError};
use dragnet_walk::cache::CachePolicy;
use dragnet_walk::options::RESERVED;
use dragnet_walk::{LoopOptions, Runtime, ToolCall, Unshaped};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::caller::{cache_scope, cache_ttl, Caller};
use crate::config::{AgentConfig, BaseUrl, ProviderKind};
use crate::connections::Sealer;
use crate::definition::ToolDefinition;
use crate::discovery::pool::{meta_tools, AgentPool, Loaded, LOAD_TOOL, SEARCH_TOOL};
use crate::guard::guard;
use crate::restriction::{PendingCuts, FETCH_TOOL, QUERY_TOOL};
use crate::results::ResultLink;
use crate::retrieval;
use crate::stored_hits::StoredHits;
use dragnet_providers::mcp_tools::tool_of;
use dragnet_providers::{McpCall, McpUpstream, ProviderUpstream, UpstreamProgressSink};

mod apps;
mod credentials;
mod discovery;
mod passthrough;
mod resources;
mod served;

use served::ServedTools;

use credentials::{organisation_credentials, resolve_mcp, CallUpstream};

/// Reads an environment variable (injected: tests and the CLI decide).
pub use dragnet_providers::EnvLookup;

/// Where a call's progress goes: the walk's counters, and what an upstream
/// MCP server reports of its own.
pub trait CallSink: ProgressSink + UpstreamProgressSink {}

impl<T: ProgressSink + UpstreamProgressSink> CallSink for T {}

/// The gateway: a compiled configuration and what its calls use.
pub struct Gateway {
    pub(crate) config: Arc<AgentConfig>,
    upstreams: HashMap<String, ProviderUpstream>,
    results: Arc<dyn ResultStore<Payload>>,
    cache: Option<(Arc<dyn CacheStore>, CacheMode)>,
    cuts: PendingCuts,
    /// Complete walks stored from cache hits, named again by the same answer.
    stored_hits: StoredHits,
    clock: Arc<dyn Clock>,
    /// The supervisors of upstream MCP servers, and their stop signal.
    tasks: TaskTracker,
    shutdown: CancellationToken,
    /// Each agent's split of direct and pooled tools (SPEC §7), and what
    /// each thread loaded from its pool.
    pub(crate) pools: HashMap<String, AgentPool>,
    /// Each agent's served tools and their definitions, built once.
    served: HashMap<String, ServedTools>,
    pub(crate) loaded: Loaded,
    /// Where connected-app credentials are kept, and their sealer (none
    /// without a connections key).
    pub(crate) connections: Option<(Arc<dyn ConnectionStore>, Arc<Sealer>)>,
    /// Every secret the process holds (the token secret, the connections
    /// key, the providers' credentials, MCP header values and the
    /// variables read for MCP children): scrubbed from whatever an
    /// upstream answers, with the caller's own added for each call.
    secrets: Redactor,
}

/// What the gateway is started with besides its configuration.
pub struct Services {
    /// Organisation credentials are read here.
    pub env: EnvLookup,
    /// The base URL `embedded` stands for, when the demo shop runs here.
    pub embedded: Option<String>,
    pub results: Arc<dyn ResultStore<Payload>>,
    pub cache: Option<(Arc<dyn CacheStore>, CacheMode)>,
    pub clock: Arc<dyn Clock>,
    /// Where connected-app credentials are kept (sealed with the key of
    /// the configuration's `connections_key_env`).
    pub connections: Option<Arc<dyn ConnectionStore>>,
}

/// The variable the connections key is read from when the configuration
/// names none.
pub const DEFAULT_CONNECTIONS_KEY_ENV: &str = "DRAGNET_CONNECTIONS_KEY";

/// The variable the callers' token secret is read from when the
/// configuration names none.
pub const DEFAULT_TOKEN_SECRET_ENV: &str = "DRAGNET_MCP_TOKEN_SECRET";

/// Why the gateway cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("provider `{provider}` needs the environment variable `{var}`")]
    MissingVariable { provider: String, var: String },
    #[error("provider `{provider}` has base_url `embedded`, but nothing serves it here")]
    NoEmbedded { provider: String },
    #[error("provider `{provider}`: {message}")]
    Client { provider: String, message: String },
    #[error("provider `{provider}` (an upstream MCP server): {message}")]
    Mcp { provider: String, message: String },
    #[error("`{var}`: the connection key: {source}")]
    ConnectionsKey {
        var: String,
        #[source]
        source: SealError,
    },
    #[error(
        "agent `{agent}` binds `{tool}` of provider `{provider}`, which the upstream MCP server \
         does not have; its tools: {known}"
    )]
    UnknownMcpTool {
        agent: String,
        provider: String,
        tool: String,
        known: String,
    },
}

/// One answer: the text the agent reads, and whether it is a tool error.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
    /// An upstream MCP server's answer as it said it (scrubbed of
    /// secrets), passed to the agent unchanged; `text` is then empty.
    pub whole: Option<Box<rmcp::model::CallToolResult>>,
    /// Where the whole answer was stored, when it was: the agent gets a
    /// `resource_link` to it beside the text.
    pub stored: Option<ResultLink>,
}

impl Answer {
    pub(crate) fn error(message: impl Into<String>) -> Answer {
        Answer {
            is_error: true,
            ..Answer::said(message)
        }
    }

    /// An answer that is only text.
    pub(crate) fn said(text: impl Into<String>) -> Answer {
        Answer {
            text: text.into(),
            is_error: false,
            whole: None,
            stored: None,
        }
    }
}

impl Gateway {
    /// Connects every provider: OpenAPI ones get their HTTP client with the
    /// organisation credentials from `services.env` (`embedded` base URLs
    /// from `services.embedded`); upstream MCP servers are connected, their
    /// whole tool lists read, and the bindings to them resolved.
    pub async fn start(config: AgentConfig, services: Services) -> Result<Gateway, StartError> {
        let Services {
            env,
            embedded,
            results,
            cache,
            clock,
            connections,
        } = services;
        let key_var = config
            .connections_key_env
            .clone()
            .unwrap_or_else(|| DEFAULT_CONNECTIONS_KEY_ENV.to_string());
        let mut secrets = Redactor::default();
        let token_var = config
            .token_secret_env
            .as_deref()
            .unwrap_or(DEFAULT_TOKEN_SECRET_ENV);
        if let Some(token_secret) = env(token_var) {
            secrets.add(&token_secret);
        }
        let sealer = match env(&key_var).filter(|k| !k.is_empty()) {
            Some(key) => Some(Arc::new(Sealer::new(key.as_bytes()).map_err(|source| {
                StartError::ConnectionsKey {
                    var: key_var.clone(),
                    source,
                }
            })?)),
            None => None,
        };
        if let Some(key) = env(&key_var) {
            secrets.add(&key);
        }
        let connections = connections.zip(sealer);
        let tasks = TaskTracker::new();
        let shutdown = CancellationToken::new();
        let mut config = config;
        // Every secret is known before any child starts: a child's stderr
        // is scrubbed of them all.
        let mut upstreams = HashMap::new();
        let mut children = Vec::new();
        for (name, p) in &config.providers {
            match &p.kind {
                ProviderKind::OpenApi {
                    base_url,
                    credentials,
                    headers,
                    ..
                } => {
                    let base = match base_url {
                        BaseUrl::Url(u) => u.clone(),
                        BaseUrl::Embedded => {
                            embedded.clone().ok_or_else(|| StartError::NoEmbedded {
                                provider: name.clone(),
                            })?
                        }
                    };
                    let credentials = organisation_credentials(name, credentials.as_ref(), &env)?;
                    secrets.merge(&Redactor::new(&credentials, &[]));
                    let mut up =
                        HttpUpstream::new(&base, credentials).map_err(|e| StartError::Client {
                            provider: name.clone(),
                            message: e.to_string(),
                        })?;
                    for (header, value) in headers {
                        up = up.with_header(header, Secret::new(value.clone()));
                    }
                    upstreams.insert(name.clone(), ProviderUpstream::Http(Arc::new(up)));
                }
                ProviderKind::Mcp(server) => {
                    children.push((name, resolve_mcp(name, server, &env, &mut secrets)?));
                }
            }
        }
        let shared = Arc::new(secrets.clone());
        for (name, (server, child_env)) in children {
            let up = McpUpstream::connect(
                name,
                &server,
                child_env,
                shared.clone(),
                None,
                &tasks,
                shutdown.child_token(),
            )
            .await
            .map_err(|e| StartError::Mcp {
                provider: name.clone(),
                message: e.to_string(),
            })?;
            upstreams.insert(name.clone(), ProviderUpstream::Mcp(up));
        }
        resolve_mcp_bindings(&mut config, &upstreams, &secrets)?;
        tasks.close();
        let mut gateway = Gateway {
            config: Arc::new(config),
            upstreams,
            results,
            cache,
            cuts: PendingCuts::default(),
            stored_hits: StoredHits::default(),
            clock,
            tasks,
            shutdown,
            pools: HashMap::new(),
            served: HashMap::new(),
            loaded: Loaded::default(),
            connections,
            secrets,
        };
        gateway.served = gateway
            .config
            .agents
            .iter()
            .map(|(name, agent)| (name.clone(), ServedTools::of(&agent.bindings)))
            .collect();
        gateway.pools = gateway
            .config
            .agents
            .keys()
            .map(|agent| (agent.clone(), gateway.pool_of(agent)))
            .collect();
        Ok(gateway)
    }

    /// Stops the upstream MCP servers' supervisors (closing their
    /// connections, which stops child processes) and waits for them.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tasks.wait().await;
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Whether `agent` is configured.
    pub fn has_agent(&self, agent: &str) -> bool {
        self.config.agents.contains_key(agent)
    }

    /// Whether `agent` holds a looping binding (and so the retrieval tools
    /// and the usage guidance).
    pub fn loops(&self, agent: &str) -> bool {
        self.config
            .agents
            .get(agent)
            .is_some_and(|a| a.bindings.iter().any(|b| b.looping))
    }

    /// What `tools/list` holds for `agent` on a stateless request: its
    /// direct tools, the discovery tools when it has a pool, and the
    /// retrieval tools when one of its tools loops. Never varies.
    pub fn tools(&self, agent: &str) -> Vec<ToolDefinition> {
        self.listed(agent, None)
    }

    /// What `tools/list` holds for `caller`: on a legacy session, also the
    /// pooled tools its thread loaded.
    pub fn tools_for(&self, caller: &Caller) -> Vec<ToolDefinition> {
        let loaded = caller
            .session
            .then(|| self.loaded.of(&caller.claims.agent, &caller.scope));
        self.listed(&caller.claims.agent, loaded.as_ref())
    }

    fn listed(&self, agent: &str, loaded: Option<&BTreeSet<String>>) -> Vec<ToolDefinition> {
        let (bindings, defs) = self.served(agent);
        let pool = self.pools.get(agent);
        let mut out: Vec<ToolDefinition> = defs
            .iter()
            .enumerate()
            .filter(|(i, d)| {
                *i >= bindings.len()
                    || pool.is_none_or(|p| p.is_direct(*i))
                    || loaded.is_some_and(|l| l.contains(&d.name))
            })
            .map(|(_, d)| d.clone())
            .collect();
        if pool.is_some_and(AgentPool::has_pool) {
            out.extend(meta_tools());
        }
        if self.binds_apps(agent) {
            out.extend(crate::apps::connection_tools());
        }
        out
    }

    /// Calls `name` for `caller`: a discovery tool, or a bound tool
    /// (directly, or through `call_tool`).
    pub async fn call(
        &self,
        caller: &Caller,
        name: &str,
        args: Map<String, Value>,
        progress: &dyn CallSink,
        cancel: CancellationToken,
    ) -> Answer {
        if let Some(answer) = self.connection_call(caller, name, &args).await {
            return answer;
        }
        match self.discovery_call(caller, name, args) {
            Ok(answer) => answer,
            Err((name, args)) => self.call_bound(caller, &name, args, progress, cancel).await,
        }
    }

    async fn call_bound(
        &self,
        caller: &Caller,
        name: &str,
        args: Map<String, Value>,
        progress: &dyn CallSink,
        cancel: CancellationToken,
    ) -> Answer {
        let claims = &caller.claims;
        let scope = &caller.scope;
        let now = self.clock.now();
        let result_id = args.get("resultId").and_then(Value::as_str);
        if let Err(e) = self.cuts.admit(scope, name, result_id, now) {
            return Answer::error(e.to_string());
        }
        let budget = self.config.size_budget;
        // The agent's tools, built once for the call.
        let (bindings, defs) = self.served(&claims.agent);
        let retrieval =
            (name == QUERY_TOOL || name == FETCH_TOOL) && defs.iter().any(|d| d.name == QUERY_TOOL);
        if retrieval {
            let answer = match name {
                QUERY_TOOL => {
                    retrieval::query(self.results.as_ref(), scope, &args, budget, now).await
                }
                _ => retrieval::fetch(self.results.as_ref(), scope, &args, now).await,
            };
            return match answer {
                Ok(text) => Answer::said(text),
                Err(e) => Answer::error(e.to_string()),
            };
        }
        let Some((at, binding)) = bindings
            .iter()
            .zip(defs)
            .enumerate()
            .find(|(_, (_, d))| d.name == name)
            .map(|(i, (b, _))| (i, *b))
        else {
            return Answer::error(format!("no tool `{name}` for agent `{}`", claims.agent));
        };
        let pooled = self
            .pools
            .get(&claims.agent)
            .is_some_and(|p| p.is_pooled(at));
        if pooled && !self.loaded.of(&claims.agent, scope).contains(name) {
            return Answer::error(format!(
                "`{name}` is in this agent's tool pool: load it with {LOAD_TOOL} first (find tools with {SEARCH_TOOL})"
            ));
        }
        let (Some(tool), Some(upstream)) = (
            binding.tool.as_deref(),
            self.upstreams.get(&binding.provider),
        ) else {
            return Answer::error(format!("tool `{name}` is not served here"));
        };
        let stored = match self.stored_credentials(caller, &binding.provider).await {
            Ok(stored) => stored,
            Err(e) => return Answer::error(e.to_string()),
        };
        let secrets = self.call_secrets(caller, stored.as_ref());
        let (upstream, credential_kind) =
            match self.call_upstream(binding, upstream, caller, stored) {
                Ok(chosen) => chosen,
                Err(message) => return Answer::error(message),
            };
        let (arguments, options) = match binding.looping {
            true => match LoopOptions::split_reserved(args) {
                Ok(split) => split,
                Err(e) => return Answer::error(e.to_string()),
            },
            false => {
                if let Some(k) = RESERVED.iter().find(|k| args.contains_key(**k)) {
                    return Answer::error(format!(
                        "`{k}` is not available on `{name}`: this tool answers as the upstream does"
                    ));
                }
                (args, LoopOptions::default())
            }
        };
        // Looping bindings only: `_refresh`, the way past a hit, is theirs.
        let cache = self
            .cache
            .as_ref()
            .filter(|_| binding.looping)
            .map(|(store, mode)| {
                let scope = cache_scope(claims, credential_kind);
                CachePolicy {
                    store: store.clone(),
                    mode: *mode,
                    ttl: cache_ttl(&scope, binding.dataset_ttl_hours),
                    scope,
                    tool_id: format!("{}.{}", binding.provider, tool.name),
                    read: true,
                    clock: self.clock.clone(),
                }
            });
        // A call on a binding without looping to an upstream MCP server:
        // its answer as the server said it, when it fits.
        let mut answered = None;
        if let (CallUpstream::Mcp(mcp), false) = (&upstream, binding.looping) {
            let sink = progress as &dyn UpstreamProgressSink;
            let guarding = passthrough::Guarding {
                secrets: &secrets,
                budget,
                results: self.results.as_ref(),
                scope,
                clock: self.clock.clone(),
            };
            let limits = self.config.limits.clone();
            // Awaited where it is made: a future kept in a local first is
            // laid out twice in this one's state (5 KB more to copy into
            // the call's box on every call).
            match passthrough::call(mcp, tool, &arguments, sink, limits, &guarding).await {
                Ok(passthrough::Passed::Whole(answer)) => return answer,
                Ok(passthrough::Passed::TooLarge(too_large)) => answered = Some(too_large),
                Err(message) => return Answer::error(message),
            }
        }
        let call = ToolCall {
            tool,
            arguments,
            options,
            limits: self.config.limits.clone(),
            cache,
        };
        let runtime = Runtime {
            progress: progress as &dyn ProgressSink,
            clock: self.clock.clone(),
            cancel,
            journal: None,
            // Results are stored and shaped again on retrieval.
            unshaped: Unshaped::Kept,
        };
        // Whatever the upstream answers is scrubbed of every secret the
        // process holds before the walk reads it: nothing it returns, stores,
        // logs or caches carries one.
        let executed = match (&upstream, &answered) {
            (_, Some(answered)) => dragnet_walk::execute(call, answered, &runtime).await,
            (CallUpstream::Http(http), None) => {
                let upstream = Redacting {
                    inner: http.as_ref(),
                    redactor: &secrets,
                };
                dragnet_walk::execute(call, &upstream, &runtime).await
            }
            (CallUpstream::Mcp(mcp), None) => {
                let upstream = McpCall {
                    upstream: mcp,
                    progress: progress as &dyn UpstreamProgressSink,
                    redactor: &secrets,
                };
                let upstream = Redacting {
                    inner: &upstream,
                    redactor: &secrets,
                };
                dragnet_walk::execute(call, &upstream, &runtime).await
            }
        };
        let result = match executed {
            Ok(r) => r,
            Err(e) => return Answer::error(secrets.text(e.to_string())),
        };
        let results = self.results.as_ref();
        match guard(result, budget, results, scope, now, &self.stored_hits).await {
            Ok(g) => {
                if let (Some(link), Some(_)) = (&g.stored, g.cut) {
                    self.cuts.cut(scope, &link.id, now);
                }
                Answer {
                    stored: g.stored,
                    ..Answer::said(g.text)
                }
            }
            Err(e) => Answer::error(secrets.text(e.to_string())),
        }
    }

    /// The secrets one call's answers are scrubbed of: the process's, and
    /// the caller's own (runtime credentials presented with the request, a
    /// connected app's stored token).
    fn call_secrets(&self, caller: &Caller, stored: Option<&Secret>) -> Redactor {
        let mut secrets = self.secrets.clone();
        for secret in caller.runtime.values().chain(stored) {
            secrets.add(secret.expose());
        }
        secrets
    }
}

/// Gives every binding to an upstream MCP server its tool, as the server
/// listed it.
fn resolve_mcp_bindings(
    config: &mut AgentConfig,
    upstreams: &HashMap<String, ProviderUpstream>,
    secrets: &Redactor,
) -> Result<(), StartError> {
    for agent in config.agents.values_mut() {
        for binding in &mut agent.bindings {
            let Some(ProviderUpstream::Mcp(mcp)) = upstreams.get(&binding.provider) else {
                continue;
            };
            let found = mcp.tools().iter().find(|t| t.name == binding.tool_id);
            let Some(found) = found else {
                let known: Vec<&str> = mcp.tools().iter().map(|t| t.name.as_ref()).collect();
                return Err(StartError::UnknownMcpTool {
                    agent: agent.name.clone(),
                    provider: binding.provider.clone(),
                    tool: binding.tool_id.clone(),
                    known: known.join(", "),
                });
            };
            // What it says of its tools reaches the agent: scrubbed too.
            let mut tool = tool_of(found);
            tool.description = secrets.text(tool.description);
            binding.tool = Some(Arc::new(tool));
        }
    }
    Ok(())
}
