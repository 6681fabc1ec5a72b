//! The connections one run calls its providers through, opened when the
//! run starts and closed when it ends: an OpenAPI provider's HTTP client
//! with its credentials read, or an upstream MCP server connected (a child
//! process started for the run, or a streamable HTTP server) with its tool
//! list read. A provider that cannot be used fails only the steps that use
//! it, with the reason; providers no step uses are not opened.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use dragnet_core::secret::Secret;
use dragnet_core::Tool;
use dragnet_http::{HttpUpstream, Redactor};
use dragnet_providers::mcp_tools::tool_of;
use dragnet_providers::{McpServer, McpSource, McpUpstream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::step_error::ProviderError;
use super::RunOptions;
use crate::workflow::model::{OpenApiProvider, Provider, ProviderKind, StepKind, Workflow};

/// One provider's connection for the run.
pub(super) enum StepUpstream {
    Http(HttpUpstream),
    Mcp(McpProvider),
}

/// An upstream MCP server connected for the run.
pub(super) struct McpProvider {
    pub(super) upstream: Arc<McpUpstream>,
    /// Its tools as loop-layer tools, by name.
    tools: HashMap<String, Arc<Tool>>,
    /// What its answers are scrubbed of: every value read for it.
    pub(super) secrets: Arc<Redactor>,
}

impl McpProvider {
    /// Its tool `name`, or the step error naming the ones it has.
    pub(super) fn tool(&self, provider: &str, name: &str) -> Result<Arc<Tool>, ProviderError> {
        self.tools
            .get(name)
            .cloned()
            .ok_or_else(|| ProviderError::UnknownTool {
                provider: provider.to_string(),
                tool: name.to_string(),
                tools: {
                    let mut names: Vec<&str> = self.tools.keys().map(String::as_str).collect();
                    names.sort_unstable();
                    names.join(", ")
                },
            })
    }
}

/// The run's connections, by provider name.
pub(super) struct Upstreams {
    by_provider: HashMap<String, Result<StepUpstream, ProviderError>>,
    /// MCP supervisors and children's stderr relays.
    tasks: TaskTracker,
    shutdown: CancellationToken,
}

impl Upstreams {
    /// Opens every provider a step of `workflow` uses.
    pub(super) async fn open(workflow: &Workflow, options: &RunOptions) -> Upstreams {
        let used: HashSet<&str> = workflow
            .steps
            .iter()
            .filter_map(|s| match &s.kind {
                StepKind::Tool(t) => Some(t.provider.as_str()),
                StepKind::Branch(_) => None,
            })
            .collect();
        let tasks = TaskTracker::new();
        let shutdown = CancellationToken::new();
        let opening = workflow
            .providers
            .iter()
            .filter(|(name, _)| used.contains(name.as_str()))
            .map(|(name, p)| {
                let (tasks, shutdown) = (&tasks, &shutdown);
                async move {
                    let opened = match &p.kind {
                        ProviderKind::OpenApi(openapi) => {
                            http(p, openapi, options).map(StepUpstream::Http)
                        }
                        ProviderKind::Mcp(source) => {
                            mcp(p, source, options, tasks, shutdown.child_token())
                                .await
                                .map(StepUpstream::Mcp)
                        }
                    };
                    (name.clone(), opened)
                }
            });
        let by_provider = futures::future::join_all(opening)
            .await
            .into_iter()
            .collect();
        tasks.close();
        Upstreams {
            by_provider,
            tasks,
            shutdown,
        }
    }

    /// Provider `name`'s connection, or why it cannot be used.
    pub(super) fn get(&self, name: &str) -> Result<&StepUpstream, ProviderError> {
        match self.by_provider.get(name) {
            Some(Ok(up)) => Ok(up),
            Some(Err(e)) => Err(e.clone()),
            None => Err(ProviderError::Unknown {
                provider: name.to_string(),
            }),
        }
    }

    /// Stops what the run started: every MCP connection closed, every
    /// child process it started stopped, every task ended.
    pub(super) async fn close(&self) {
        self.shutdown.cancel();
        self.tasks.wait().await;
    }
}

/// The provider's client with its credentials read now.
fn http(
    p: &Provider,
    openapi: &OpenApiProvider,
    options: &RunOptions,
) -> Result<HttpUpstream, ProviderError> {
    let credentials = options
        .resolver()
        .credentials(&p.name, openapi.credentials.as_ref())
        .map_err(|e| ProviderError::of(&p.name, e))?;
    let base = options.base_urls.get(&p.name).unwrap_or(&openapi.base_url);
    let client = |error| ProviderError::Client {
        provider: p.name.clone(),
        error,
    };
    let mut up = HttpUpstream::new(base, credentials).map_err(client)?;
    for (name, value) in &openapi.headers {
        up = up.with_header(name, Secret::new(value.clone()));
    }
    if let Some(policy) = &options.hosts {
        up = up.with_hosts(policy.clone()).map_err(client)?;
    }
    Ok(up)
}

/// The provider's MCP server connected and its tools listed. A server's
/// run starts only what its operator declared; the values a provider
/// names are read by the run's resolver (the team's secrets on a server),
/// a declared server's were read from the operator's environment.
async fn mcp(
    p: &Provider,
    source: &McpSource,
    options: &RunOptions,
    tasks: &TaskTracker,
    shutdown: CancellationToken,
) -> Result<McpProvider, ProviderError> {
    let mut secrets = Redactor::default();
    let (server, vars) = match source {
        McpSource::Own(McpServer::Command { .. }) if !options.mcp_commands => {
            return Err(ProviderError::CommandRefused {
                provider: p.name.clone(),
            })
        }
        McpSource::Own(server) => options
            .resolver()
            .mcp(&p.name, server, &mut secrets)
            .map_err(|e| ProviderError::of(&p.name, e))?,
        McpSource::Declared(name) => {
            let declared = options.mcp_servers.get(name).ok_or_else(|| {
                let names: Vec<&str> = options.mcp_servers.keys().map(String::as_str).collect();
                ProviderError::Undeclared {
                    provider: p.name.clone(),
                    server: name.clone(),
                    declared: match names.is_empty() {
                        true => "none".into(),
                        false => names.join(", "),
                    },
                }
            })?;
            for (_, value) in &declared.vars {
                secrets.add(value.expose());
            }
            (declared.server.clone(), declared.vars.clone())
        }
    };
    if let Some(team) = &options.secrets {
        for value in team.values() {
            secrets.add(value.expose());
        }
    }
    let secrets = Arc::new(secrets);
    let upstream = McpUpstream::connect(
        &p.name,
        &server,
        vars,
        secrets.clone(),
        options.hosts.clone(),
        tasks,
        shutdown,
    )
    .await
    .map_err(|e| ProviderError::of(&p.name, e))?;
    let tools = upstream
        .tools()
        .iter()
        .map(|t| (t.name.to_string(), Arc::new(tool_of(t))))
        .collect();
    Ok(McpProvider {
        upstream,
        tools,
        secrets,
    })
}
