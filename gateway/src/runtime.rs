//! The gateway at work, still without a transport: an agent's tools listed
//! and called. A call of a bound tool goes through the loop layer
//! (`steps::execute`, the one implementation workflows use too) with the
//! binding's looping (reserved arguments split off, so none reaches the
//! upstream, and refused on a binding that does not loop), the caller's
//! cache scope (looping bindings only: `_refresh`, the way past a hit, is
//! theirs), the size guard, and the retrieval-only rule; the
//! retrieval tools read stored results. Every failure is a tool error the
//! agent reads, never a protocol error.

use std::collections::HashMap;
use std::sync::Arc;

use dragnet_steps::cache::{CacheMode, CachePolicy, CacheStore};
use dragnet_steps::clock::Clock;
use dragnet_steps::http::{Credentials, HttpUpstream, Secret};
use dragnet_steps::looping::options::RESERVED;
use dragnet_steps::progress::ProgressSink;
use dragnet_steps::{LoopOptions, Runtime, ToolCall};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::caller::{cache_scope, cache_ttl, CredentialKind};
use crate::config::file::CredentialsFile;
use crate::config::{AgentConfig, BaseUrl, Binding, ProviderKind};
use crate::guard::guard;
use crate::listing::{agent_tools, Bound, ToolDefinition};
use crate::restriction::{PendingCuts, FETCH_TOOL, QUERY_TOOL};
use crate::results::{ResultScope, ResultStore};
use crate::retrieval;
use crate::token::Claims;

/// Reads an environment variable (injected: tests and the CLI decide).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The gateway: a compiled configuration and what its calls use.
pub struct Gateway {
    config: Arc<AgentConfig>,
    upstreams: HashMap<String, Arc<HttpUpstream>>,
    results: Arc<dyn ResultStore>,
    cache: Option<(Arc<dyn CacheStore>, CacheMode)>,
    cuts: PendingCuts,
    clock: Arc<dyn Clock>,
}

/// Why the gateway cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("provider `{provider}` needs the environment variable `{var}`")]
    MissingVariable { provider: String, var: String },
    #[error("provider `{provider}` has base_url `embedded`, but nothing serves it here")]
    NoEmbedded { provider: String },
    #[error("provider `{provider}`: {message}")]
    Client { provider: String, message: String },
}

/// One answer: the text the agent reads, and whether it is a tool error.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
}

impl Answer {
    fn error(message: impl Into<String>) -> Answer {
        Answer {
            text: message.into(),
            is_error: true,
        }
    }
}

impl Gateway {
    /// Connects the OpenAPI providers (organisation credentials from
    /// `env`; `embedded` base URLs from `embedded`).
    pub fn new(
        config: Arc<AgentConfig>,
        env: EnvLookup,
        embedded: Option<&str>,
        results: Arc<dyn ResultStore>,
        cache: Option<(Arc<dyn CacheStore>, CacheMode)>,
        clock: Arc<dyn Clock>,
    ) -> Result<Gateway, StartError> {
        let mut upstreams = HashMap::new();
        for (name, p) in &config.providers {
            let ProviderKind::OpenApi {
                base_url,
                credentials,
                ..
            } = &p.kind
            else {
                continue;
            };
            let base = match base_url {
                BaseUrl::Url(u) => u.clone(),
                BaseUrl::Embedded => embedded
                    .ok_or_else(|| StartError::NoEmbedded {
                        provider: name.clone(),
                    })?
                    .to_string(),
            };
            let need = |var: &str| {
                env(var)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| StartError::MissingVariable {
                        provider: name.clone(),
                        var: var.to_string(),
                    })
            };
            let credentials = match credentials {
                None => Credentials::None,
                Some(CredentialsFile::Bearer { env }) => {
                    Credentials::Bearer(Secret::new(need(env)?))
                }
                Some(CredentialsFile::Header { name, env }) => Credentials::ApiKeyHeader {
                    header: name.clone(),
                    key: Secret::new(need(env)?),
                },
                Some(CredentialsFile::Basic {
                    username_env,
                    password_env,
                }) => Credentials::Basic {
                    user: need(username_env)?,
                    password: Secret::new(need(password_env)?),
                },
            };
            let up = HttpUpstream::new(&base, credentials).map_err(|e| StartError::Client {
                provider: name.clone(),
                message: e.to_string(),
            })?;
            upstreams.insert(name.clone(), Arc::new(up));
        }
        Ok(Gateway {
            config,
            upstreams,
            results,
            cache,
            cuts: PendingCuts::default(),
            clock,
        })
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The bindings of `agent` the gateway can serve now (tools of OpenAPI
    /// providers), with the definitions they are listed by, and after them
    /// the retrieval tools when one loops.
    fn served(&self, agent: &str) -> (Vec<&Binding>, Vec<ToolDefinition>) {
        let Some(a) = self.config.agents.get(agent) else {
            return (Vec::new(), Vec::new());
        };
        let (usable, bound): (Vec<&Binding>, Vec<Bound<'_>>) = a
            .bindings
            .iter()
            .filter_map(|b| {
                let tool = b.tool.as_deref()?;
                Some((
                    b,
                    Bound {
                        provider: &b.provider,
                        tool,
                        looping: b.looping,
                    },
                ))
            })
            .unzip();
        (usable, agent_tools(&bound))
    }

    /// What `tools/list` holds for `agent`.
    pub fn tools(&self, agent: &str) -> Vec<ToolDefinition> {
        self.served(agent).1
    }

    /// Calls `name` for `claims` in thread `scope`.
    pub async fn call(
        &self,
        claims: &Claims,
        scope: &ResultScope,
        name: &str,
        args: Map<String, Value>,
        progress: &dyn ProgressSink,
        cancel: CancellationToken,
    ) -> Answer {
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
                Ok(text) => Answer {
                    text,
                    is_error: false,
                },
                Err(e) => Answer::error(e.to_string()),
            };
        }
        let Some(binding) = bindings
            .iter()
            .zip(&defs)
            .find(|(_, d)| d.name == name)
            .map(|(b, _)| *b)
        else {
            return Answer::error(format!("no tool `{name}` for agent `{}`", claims.agent));
        };
        let (Some(tool), Some(upstream)) = (
            binding.tool.as_deref(),
            self.upstreams.get(&binding.provider),
        ) else {
            return Answer::error(format!("tool `{name}` is not served here"));
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
                let scope = cache_scope(claims, CredentialKind::Organisation);
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
        let call = ToolCall {
            tool,
            arguments,
            options,
            limits: self.config.limits.clone(),
            cache,
        };
        let runtime = Runtime {
            progress,
            clock: self.clock.clone(),
            cancel,
        };
        let result = match dragnet_steps::execute(call, upstream.as_ref(), &runtime).await {
            Ok(r) => r,
            Err(e) => return Answer::error(e.to_string()),
        };
        match guard(result, budget, self.results.as_ref(), scope, now).await {
            Ok(g) => {
                if let (Some(id), Some(_)) = (&g.result_id, g.cut) {
                    self.cuts.cut(scope, id, now);
                }
                Answer {
                    text: g.text,
                    is_error: false,
                }
            }
            Err(e) => Answer::error(e.to_string()),
        }
    }
}
