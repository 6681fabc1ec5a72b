//! `dragnet mcp AGENT_CONFIG --agent NAME --stdio`: the agent gateway over
//! MCP on this process's stdin and stdout (stdout carries the protocol;
//! nothing else is written there). Providers whose base URL is `embedded`
//! get the demo shop, started in-process. Stored results and the cache
//! live in the configured store.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use dragnet_gateway::caller::result_scope;
use dragnet_gateway::config::{self, BaseUrl, ProviderKind};
use dragnet_gateway::mcp::{serve_stdio, McpAgent};
use dragnet_gateway::runtime::Gateway;
use dragnet_gateway::token::Claims;
use dragnet_steps::cache::CacheMode;

use crate::config::Config;
use crate::failure::CliError;
use crate::services::Services;
use crate::EXIT_COMPLETE;

#[derive(Args)]
pub struct McpArgs {
    /// The agent gateway's configuration (agent.yaml).
    file: PathBuf,
    /// The agent whose tools are served.
    #[arg(long)]
    agent: String,
    /// Serve over stdin and stdout (the only transport so far).
    #[arg(long)]
    stdio: bool,
}

pub async fn mcp(config: &Config, args: McpArgs) -> Result<u8> {
    if !args.stdio {
        bail!(CliError::argument_error(
            "--stdio",
            "give --stdio: the gateway serves MCP over stdin and stdout (streamable HTTP is not built yet)"
        ));
    }
    let agent_config = Arc::new(config::load(&args.file)?);
    if !agent_config.agents.contains_key(&args.agent) {
        let known: Vec<&String> = agent_config.agents.keys().collect();
        bail!(CliError::argument_error(
            "--agent",
            format!(
                "no agent `{}` in {}; its agents: {known:?}",
                args.agent,
                args.file.display()
            )
        ));
    }
    // Upstream MCP providers are parsed but not served yet: say so once.
    for p in agent_config.providers.values() {
        if matches!(p.kind, ProviderKind::Mcp(_)) {
            crate::out::say(&format!(
                "warning: provider `{}` is an MCP server; serving upstream MCP tools is not built \
                 yet, so its bindings are left out of the tool list",
                p.name
            ));
        }
    }
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
    let services = Services::open(config).await?;
    services.start_sweeper();
    let cache = (config.cache_mode != CacheMode::Off).then(|| {
        let store: Arc<dyn dragnet_steps::cache::CacheStore> = Arc::new(services.db.clone());
        (store, config.cache_mode)
    });
    let gateway = Gateway::new(
        agent_config.clone(),
        Arc::new(|var| std::env::var(var).ok()),
        shop.as_ref().map(|s| s.base_url()),
        Arc::new(services.db.clone()),
        cache,
        services.clock.clone(),
    )?;
    let claims = Claims {
        org: agent_config.organisation.clone(),
        sub: "stdio".into(),
        agent: args.agent.clone(),
        cache_scope: None,
        exp: i64::MAX,
    };
    let session = format!("{:016x}", rand_session());
    let scope = result_scope(&claims, Some(&session), None);
    let served = serve_stdio(McpAgent::new(Arc::new(gateway), claims, scope)).await;
    services.shutdown().await;
    if let Some(shop) = shop {
        shop.shutdown().await;
    }
    served.map_err(anyhow::Error::msg)?;
    Ok(EXIT_COMPLETE)
}

/// A session id for this process's one stdio session.
fn rand_session() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish()
}
