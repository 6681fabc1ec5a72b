//! `dragnet mcp --config agent.yaml`: the agent gateway over MCP, on this
//! process's stdin and stdout (`--stdio --agent NAME`; stdout carries the
//! protocol and nothing else) or over streamable HTTP (`--http ADDR`,
//! every request with a signed token naming its agent). And `dragnet
//! agent-token`, which signs such a token for operators and tests.
//!
//! The agent configuration is named by `--config` when that file is YAML
//! or JSON (the TOML settings then come from `DRAGNET_CONFIG` or the
//! default), or as the first argument. Providers whose base URL is
//! `embedded` get the demo shop, started in-process. Stored results and
//! the cache live in the configured store.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use dragnet_core::ports::cache::CacheMode;
use dragnet_gateway::caller::{result_scope, Caller, RuntimeCredentials};
use dragnet_gateway::config::{self, AgentConfig, BaseUrl, ProviderKind};
use dragnet_gateway::mcp::http::{self as mcp_http, HttpOptions, MCP_PATH};
use dragnet_gateway::mcp::{serve_stdio, McpAgent};
use dragnet_gateway::runtime::{Gateway, Services as GatewayServices};
use dragnet_gateway::token::{Claims, TokenKey};
use tokio_util::sync::CancellationToken;

use crate::config::{Config, Lifetime};
use crate::failure::CliError;
use crate::out::Out;
use crate::services::Services;
use crate::EXIT_COMPLETE;

/// The variable the token secret is read from when the configuration
/// names none (the gateway registers its value with the redactor, as it
/// does the connections key's).
pub const DEFAULT_SECRET_ENV: &str = dragnet_gateway::runtime::DEFAULT_TOKEN_SECRET_ENV;

#[derive(Args)]
pub struct McpArgs {
    /// The agent gateway's configuration (agent.yaml), when not given as
    /// `--config agent.yaml`.
    pub file: Option<PathBuf>,
    /// Over stdio: the agent whose tools are served.
    #[arg(long)]
    agent: Option<String>,
    /// Serve one client over stdin and stdout.
    #[arg(long, conflicts_with = "http")]
    stdio: bool,
    /// Serve streamable HTTP at ADDR (e.g. 127.0.0.1:8931), endpoint /mcp.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Over HTTP: a `Host` accepted besides the loopback names (repeat).
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// Print which of AGENT's tools are listed directly and which are
    /// pooled behind tool search, and why; then exit.
    #[arg(long, value_name = "AGENT", conflicts_with_all = ["stdio", "http"])]
    explain: Option<String>,
}

impl McpArgs {
    /// Whether one client is served over stdin and stdout.
    pub fn is_stdio(&self) -> bool {
        self.stdio
    }
}

#[derive(Args)]
pub struct AgentTokenArgs {
    /// The agent gateway's configuration (agent.yaml), when not given as
    /// `--config agent.yaml`.
    pub file: Option<PathBuf>,
    /// The agent the token may use.
    #[arg(long)]
    agent: String,
    /// The user the token is for (its subject).
    #[arg(long)]
    user: String,
    /// A tenant whose users share cache entries made with their own credentials.
    #[arg(long = "cache-scope")]
    cache_scope: Option<String>,
    /// How long the token is valid, in hours.
    #[arg(long, default_value_t = 12)]
    hours: u32,
}

/// The agent configuration named by the argument or by `--config`.
pub fn agent_config_path(file: &Option<PathBuf>, settings: &Option<PathBuf>) -> Result<PathBuf> {
    if let Some(file) = file {
        return Ok(file.clone());
    }
    match settings {
        Some(path) if is_agent_file(path) => Ok(path.clone()),
        _ => bail!(CliError::argument_error(
            "--config",
            "give the agent configuration: `--config agent.yaml` (or as the first argument)"
        )),
    }
}

/// Whether `--config` names an agent configuration rather than settings.
pub fn is_agent_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn load_agent_config(path: &Path) -> Result<AgentConfig> {
    Ok(config::load(path)?)
}

/// How HTTP callers are verified: operator tokens, OAuth access tokens, or
/// both.
struct HttpAuth {
    key: Option<Arc<TokenKey>>,
    oauth: Option<dragnet_gateway::oauth::ResourceServerConfig>,
}

/// The operator tokens' key over HTTP. With `oauth:` configured it is
/// optional: absent when the configuration names no variable and
/// `DRAGNET_MCP_TOKEN_SECRET` is unset (then only access tokens are
/// accepted); a variable the configuration names must be set.
fn http_token_key(agent_config: &AgentConfig) -> Result<Option<Arc<TokenKey>>> {
    let default_unset = std::env::var(DEFAULT_SECRET_ENV)
        .unwrap_or_default()
        .is_empty();
    if agent_config.oauth.is_some() && agent_config.token_secret_env.is_none() && default_unset {
        return Ok(None);
    }
    token_key(agent_config).map(|key| Some(Arc::new(key)))
}

/// The token key: the secret from the variable the configuration names,
/// else from `DRAGNET_MCP_TOKEN_SECRET`.
fn token_key(agent_config: &AgentConfig) -> Result<TokenKey> {
    let var = agent_config
        .token_secret_env
        .as_deref()
        .unwrap_or(DEFAULT_SECRET_ENV);
    let secret = std::env::var(var).unwrap_or_default();
    if secret.is_empty() {
        bail!(CliError::argument_error(
            "token_secret_env",
            format!(
                "callers' tokens are signed with a secret read from `{var}`, which is not set \
                 (give at least 32 bytes)"
            )
        ));
    }
    TokenKey::new(secret.as_bytes()).map_err(|e| anyhow::anyhow!("`{var}`: {e}"))
}

pub async fn agent_token(
    args: AgentTokenArgs,
    settings: &Option<PathBuf>,
    out: &mut Out,
) -> Result<u8> {
    let path = agent_config_path(&args.file, settings)?;
    let agent_config = load_agent_config(&path)?;
    if !agent_config.agents.contains_key(&args.agent) {
        bail!(unknown_agent(&agent_config, &args.agent, &path));
    }
    let key = token_key(&agent_config)?;
    let exp = chrono::Utc::now().timestamp() + i64::from(args.hours) * 3600;
    let claims = Claims {
        org: agent_config.organisation.clone(),
        sub: args.user,
        agent: args.agent,
        cache_scope: args.cache_scope,
        exp,
    };
    writeln!(out, "{}", key.mint(&claims))?;
    Ok(EXIT_COMPLETE)
}

fn unknown_agent(agent_config: &AgentConfig, agent: &str, path: &Path) -> CliError {
    let known: Vec<&String> = agent_config.agents.keys().collect();
    CliError::argument_error(
        "--agent",
        format!(
            "no agent `{agent}` in {}; its agents: {known:?}",
            path.display()
        ),
    )
}

pub async fn mcp(config: &Config, args: McpArgs, settings: &Option<PathBuf>) -> Result<u8> {
    let path = agent_config_path(&args.file, settings)?;
    if !args.stdio && args.http.is_none() && args.explain.is_none() {
        bail!(CliError::argument_error(
            "--stdio",
            "choose a transport: --stdio (one client on stdin and stdout) or --http ADDR (or --explain AGENT)"
        ));
    }
    let agent_config = load_agent_config(&path)?;
    if let Some(agent) = &args.explain {
        if !agent_config.agents.contains_key(agent) {
            bail!(unknown_agent(&agent_config, agent, &path));
        }
    }
    let stdio_agent = match (args.stdio, &args.agent) {
        (true, Some(agent)) if !agent_config.agents.contains_key(agent) => {
            bail!(unknown_agent(&agent_config, agent, &path))
        }
        (true, Some(agent)) => Some(agent.clone()),
        (true, None) => bail!(CliError::argument_error(
            "--agent",
            "over stdio, name the agent whose tools are served"
        )),
        (false, _) => None,
    };
    let key = match args.http {
        Some(_) => http_token_key(&agent_config)?,
        None => None,
    };
    let oauth = agent_config.oauth.clone();
    let embedded_needed = agent_config.providers.values().any(|p| {
        matches!(
            &p.kind,
            ProviderKind::OpenApi {
                base_url: BaseUrl::Embedded,
                ..
            }
        )
    });
    let shop = match embedded_needed {
        true => Some(
            dragnet_shop::start("127.0.0.1:0".parse()?)
                .await
                .context("starting the embedded demo shop")?,
        ),
        false => None,
    };
    let services = Services::open(config, Lifetime::Serving).await?;
    services.start_sweeper();
    let cache = (config.cache_mode != CacheMode::Off).then(|| {
        let store: Arc<dyn dragnet_core::ports::cache::CacheStore> = Arc::new(services.db.cache());
        (store, config.cache_mode)
    });
    let organisation = agent_config.organisation.clone();
    let gateway = Gateway::start(
        agent_config,
        GatewayServices {
            env: Arc::new(|var| std::env::var(var).ok()),
            embedded: shop.as_ref().map(|s| s.base_url().to_string()),
            results: Arc::new(services.db.results()),
            cache,
            clock: services.clock.clone(),
            connections: Some(Arc::new(services.db.connections())),
        },
    )
    .await?;
    let gateway = Arc::new(gateway);
    if let Some(agent) = &args.explain {
        let explained = explain(&gateway, agent);
        gateway.shutdown().await;
        services.shutdown().await;
        if let Some(shop) = shop {
            shop.shutdown().await;
        }
        let mut stdout = std::io::stdout();
        stdout.write_all(explained.as_bytes())?;
        stdout.flush()?;
        return Ok(EXIT_COMPLETE);
    }
    let served = match (stdio_agent, args.http, key) {
        (Some(agent), _, _) => {
            let claims = Claims {
                org: organisation,
                sub: "stdio".into(),
                agent,
                cache_scope: None,
                exp: i64::MAX,
            };
            let session = format!("{:016x}", rand_session());
            let caller = Caller {
                session: true,
                scope: result_scope(&claims, Some(&session), None),
                claims,
                runtime: RuntimeCredentials::default(),
            };
            Ok(serve_stdio(McpAgent::stdio(gateway.clone(), caller)).await?)
        }
        (None, Some(addr), key) => {
            let auth = HttpAuth { key, oauth };
            serve_http(gateway.clone(), addr, auth, args.allowed_hosts, &services).await
        }
        _ => Ok(()),
    };
    gateway.shutdown().await;
    services.shutdown().await;
    if let Some(shop) = shop {
        shop.shutdown().await;
    }
    served?;
    Ok(EXIT_COMPLETE)
}

/// `--explain AGENT`: each bound tool, direct or pooled, and why.
fn explain(gateway: &Gateway, agent: &str) -> String {
    use dragnet_gateway::discovery::split::Placement;
    let Some(rows) = gateway.explain(agent) else {
        return String::new();
    };
    let budget = gateway
        .config()
        .agents
        .get(agent)
        .map_or(0, |a| a.tool_budget);
    let direct = rows
        .iter()
        .filter(|(_, _, p)| matches!(p, Placement::Direct(_)))
        .count();
    let mut out = format!(
        "agent `{agent}`: {direct} of {} tools listed directly (budget {budget}), {} pooled\n",
        rows.len(),
        rows.len() - direct
    );
    let width = rows.iter().map(|(n, _, _)| n.len()).max().unwrap_or(0);
    for (name, provider, placement) in &rows {
        let (what, why) = match placement {
            Placement::Direct(why) => ("direct", why),
            Placement::Pooled(why) => ("pooled", why),
        };
        out.push_str(&format!(
            "  {what}  {name:<width$}  {}\n",
            why.explain(provider)
        ));
    }
    if rows.len() > direct {
        out.push_str("  also listed: search_tools, load_tool, call_tool (not counted)\n");
    }
    out
}

/// Serves streamable HTTP until Ctrl-C or SIGTERM.
async fn serve_http(
    gateway: Arc<Gateway>,
    addr: SocketAddr,
    auth: HttpAuth,
    allowed_hosts: Vec<String>,
    services: &Services,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener.local_addr()?;
    let shutdown = CancellationToken::new();
    let router = mcp_http::router(
        gateway,
        HttpOptions {
            key: auth.key,
            oauth: auth.oauth,
            clock: services.clock.clone(),
            allowed_hosts,
            shutdown: shutdown.clone(),
        },
    );
    // The address on stdout (as `dragnet serve` does), for scripts.
    let mut stdout = std::io::stdout();
    writeln!(
        stdout,
        "dragnet mcp: serving streamable HTTP at http://{bound}{MCP_PATH}"
    )?;
    stdout.flush()?;
    // At a signal, end every session (their streams close) and drain.
    let signal = async move {
        interrupted().await;
        shutdown.cancel();
    };
    mcp_http::serve(listener, router, signal)
        .await
        .context("serving MCP over HTTP")
}

/// Resolves at Ctrl-C or SIGTERM.
async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// A session id for this process's one stdio session.
fn rand_session() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish()
}
