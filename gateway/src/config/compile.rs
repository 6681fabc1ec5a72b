//! Compile: the positioned tree of `agent.yaml` becomes an `AgentConfig`.
//! Sections are read one by one (top-level keys, bounds, providers, then
//! each agent's bindings against those providers); every problem is
//! reported and compiling carries on; the configuration is returned only
//! when there were none.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dragnet_core::Limits;
use dragnet_located::context::Ctx;
use dragnet_located::cursor::{describe, Cursor};
use dragnet_located::diagnostic::suggest;
use dragnet_located::names::{bad_name, is_name};
use dragnet_located::yaml::Node;
use dragnet_walk::overrides::toolkit_with_roles;

use dragnet_providers::compile::{source, Place, Source};
use dragnet_providers::McpSource;

use super::file::{BindingFile, LimitsFile, ProviderFile, TOP_LEVEL_KEYS};

/// An agent's keys, in the order of `AgentFile`.
const AGENT_KEYS: [&str; 3] = ["description", "agentTools", "toolBudget"];
/// The most tools an agent may list directly (OpenAI's client limit).
const MAX_TOOL_BUDGET: usize = 128;
use super::{Agent, AgentConfig, BaseUrl, Binding, Provider, ProviderKind};
use crate::guard::{SizeBudget, DEFAULT_BUDGET_TOKENS};

/// The size budget's range, in tokens.
const BUDGET_RANGE: (u64, u64) = (500, 100_000);
/// The longest `dataset_ttl_hours` (30 days).
const MAX_TTL_HOURS: u32 = 720;

pub fn compile(cx: &mut Ctx, root: &Node, source: &Path) -> Option<AgentConfig> {
    let top = Cursor::root(root);
    if !top.is_map() {
        cx.error(
            &top,
            format!(
                "an agent configuration is a mapping with `organisation`, `providers` and \
                 `agents`, got {}",
                describe(root)
            ),
        );
        return None;
    }
    dragnet_located::load::check_keys(cx, &top, &TOP_LEVEL_KEYS);
    let organisation = match top.key("organisation") {
        None => {
            cx.error(&top, "missing field `organisation`; name the organisation");
            None
        }
        Some(c) => match cx.deserialize::<String>(&c) {
            Some(o) if !o.trim().is_empty() => Some(o.trim().to_string()),
            Some(_) => {
                cx.error(&c, "`organisation` is empty");
                None
            }
            None => None,
        },
    };
    let token_secret_env = top
        .key("token_secret_env")
        .and_then(|c| cx.deserialize::<Option<String>>(&c))
        .flatten();
    let oauth = super::oauth::compile(cx, top.key("oauth"));
    let connections_key_env = top
        .key("connections_key_env")
        .and_then(|c| cx.deserialize::<Option<String>>(&c))
        .flatten();
    let size_budget = budget(cx, top.key("size_budget_tokens"));
    let limits = limits(cx, top.key("limits"));
    let base = source.parent().unwrap_or(Path::new(""));
    let (providers, declared) = providers(cx, top.key("providers"), base);
    let agents = agents(cx, &top, &providers, &declared);
    if cx.count() > 0 {
        return None;
    }
    Some(AgentConfig {
        organisation: organisation?,
        token_secret_env,
        oauth,
        connections_key_env,
        size_budget,
        limits,
        providers,
        agents,
        source: source.to_path_buf(),
    })
}

fn budget(cx: &mut Ctx, c: Option<Cursor<'_>>) -> SizeBudget {
    let Some(c) = c else {
        return SizeBudget::default();
    };
    match cx.deserialize::<u64>(&c) {
        Some(n) if (BUDGET_RANGE.0..=BUDGET_RANGE.1).contains(&n) => {
            SizeBudget { tokens: n as usize }
        }
        Some(n) => {
            cx.error(
                &c,
                format!(
                    "`size_budget_tokens` is {n}; give {} to {} (tokens, one per four characters)",
                    BUDGET_RANGE.0, BUDGET_RANGE.1
                ),
            );
            SizeBudget {
                tokens: DEFAULT_BUDGET_TOKENS,
            }
        }
        None => SizeBudget::default(),
    }
}

fn limits(cx: &mut Ctx, c: Option<Cursor<'_>>) -> Limits {
    let defaults = Limits::default();
    let Some(c) = c else {
        return defaults;
    };
    let Some(file) = cx.deserialize::<LimitsFile>(&c) else {
        return defaults;
    };
    let limits = Limits {
        max_pages: file.max_pages.unwrap_or(defaults.max_pages),
        max_requests: file.max_requests.unwrap_or(defaults.max_requests),
        max_items: file.max_items.unwrap_or(defaults.max_items),
        max_bytes: file.max_bytes.unwrap_or(defaults.max_bytes),
        wall_clock: file
            .wall_clock_seconds
            .map_or(defaults.wall_clock, Duration::from_secs),
        max_for_each_values: file
            .max_for_each_values
            .unwrap_or(defaults.max_for_each_values),
        retry: defaults.retry.clone(),
    };
    if let Err(e) = limits.validate() {
        cx.error(&c, format!("`limits`: {e}"));
        return defaults;
    }
    limits
}

/// The providers, and the names declared (refused ones too, so bindings
/// to them are not reported a second time).
fn providers(
    cx: &mut Ctx,
    section: Option<Cursor<'_>>,
    base: &Path,
) -> (BTreeMap<String, Provider>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut declared = Vec::new();
    let Some(section) = section else {
        return (out, declared);
    };
    if !section.is_map() {
        cx.error(
            &section,
            format!(
                "`providers` is a mapping of name to {{openapi | mcp | app, …}}, got {}",
                describe(section.node)
            ),
        );
        return (out, declared);
    }
    for (name, key_pos, c) in section.entries() {
        declared.push(name.to_string());
        let before = cx.count();
        if !is_name(name) {
            cx.at(key_pos, &c.path, bad_name("provider name", name));
        }
        let Some(file) = cx.deserialize::<ProviderFile>(&c) else {
            continue;
        };
        let kind = match source(cx, &c, name, &file, Place::Agent) {
            Some(Source::OpenApi { document, app }) => {
                openapi(cx, &c, name, document, &file, app, base)
            }
            Some(Source::Mcp(McpSource::Own(server))) => Some(ProviderKind::Mcp(server)),
            // Refused for agent.yaml by `source`.
            Some(Source::Mcp(McpSource::Declared(_))) | None => None,
        };
        if let (Some(kind), true) = (kind, cx.count() == before) {
            out.insert(
                name.to_string(),
                Provider {
                    name: name.to_string(),
                    kind,
                },
            );
        }
    }
    (out, declared)
}

fn openapi(
    cx: &mut Ctx,
    c: &Cursor<'_>,
    name: &str,
    doc: &str,
    file: &ProviderFile,
    app: bool,
    base: &Path,
) -> Option<ProviderKind> {
    let key = if app { "app" } else { "openapi" };
    let base_url = match file.base_url.as_deref().map(str::trim) {
        Some("embedded") => Some(BaseUrl::Embedded),
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            Some(BaseUrl::Url(url.to_string()))
        }
        Some(other) => {
            cx.value_error(
                c,
                "base_url",
                format!(
                    "base_url of provider `{name}` must start with http:// or https://, or be \
                     `embedded`; got `{other}`"
                ),
            );
            None
        }
        None => {
            cx.error(c, format!("provider `{name}` needs a `base_url`"));
            None
        }
    };
    let toolkit = match dragnet_openapi::import_file(&base.join(doc.trim())) {
        Ok(kit) if file.paging.is_empty() => Some(Arc::new(kit)),
        Ok(kit) => match toolkit_with_roles(&kit, &file.paging) {
            Ok(kit) => Some(Arc::new(kit)),
            Err(problems) => {
                if let Some(section) = c.key("paging") {
                    for p in problems {
                        cx.entry_error(&section, &p.tool, p.key, p.message);
                    }
                }
                None
            }
        },
        Err(e) => {
            cx.value_error(
                c,
                key,
                format!("cannot import the OpenAPI document of provider `{name}`: {e}"),
            );
            None
        }
    };
    if file
        .runtime_credentials_header
        .as_deref()
        .is_some_and(|h| h.trim().is_empty())
    {
        cx.value_error(c, "runtime_credentials_header", "give the header's name");
    }
    Some(ProviderKind::OpenApi {
        toolkit: toolkit?,
        base_url: base_url?,
        credentials: file.credentials.clone(),
        headers: file.headers.clone(),
        runtime_credentials_header: file.runtime_credentials_header.clone(),
        app,
    })
}

fn agents(
    cx: &mut Ctx,
    top: &Cursor<'_>,
    providers: &BTreeMap<String, Provider>,
    declared: &[String],
) -> BTreeMap<String, Agent> {
    let mut out = BTreeMap::new();
    let Some(section) = top.key("agents") else {
        cx.error(
            top,
            "missing field `agents`; give at least one agent and its agentTools",
        );
        return out;
    };
    if !section.is_map() {
        cx.error(
            &section,
            format!(
                "`agents` is a mapping of name to {{agentTools}}, got {}",
                describe(section.node)
            ),
        );
        return out;
    }
    for (name, key_pos, c) in section.entries() {
        if !is_name(name) {
            cx.at(key_pos, &c.path, bad_name("agent name", name));
        }
        if !c.is_map() {
            cx.error(
                &c,
                format!(
                    "agent `{name}` is a mapping with `agentTools`, got {}",
                    describe(c.node)
                ),
            );
            continue;
        }
        // The agent's own keys, then each binding on its own, so one bad
        // binding does not hide the others' problems.
        dragnet_located::load::check_keys(cx, &c, &AGENT_KEYS);
        if let Some(d) = c.key("description") {
            cx.deserialize::<Option<String>>(&d);
        }
        let mut tool_budget = crate::discovery::split::DEFAULT_BUDGET;
        if let Some(b) = c.key("toolBudget") {
            match cx.deserialize::<usize>(&b) {
                Some(n) if (1..=MAX_TOOL_BUDGET).contains(&n) => tool_budget = n,
                Some(n) => cx.error(
                    &b,
                    format!(
                        "`toolBudget` is {n}; give 1 to {MAX_TOOL_BUDGET} tools listed directly"
                    ),
                ),
                None => {}
            }
        }
        let Some(list) = c.key("agentTools") else {
            cx.error(
                &c,
                format!("agent `{name}` needs `agentTools`: the tools it may call"),
            );
            continue;
        };
        if !list.is_seq() {
            cx.error(
                &list,
                format!(
                    "`agentTools` is a list of {{tool_id, provider_id, loop_responses?}}, got {}",
                    describe(list.node)
                ),
            );
            continue;
        }
        let mut bindings = Vec::new();
        let mut seen = HashSet::new();
        for at in list.items() {
            let Some(b) = cx.deserialize::<BindingFile>(&at) else {
                continue;
            };
            let at = &at;
            if !seen.insert((b.provider_id.clone(), b.tool_id.clone())) {
                cx.error(
                    at,
                    format!(
                        "`{}` of `{}` is bound twice to agent `{name}`",
                        b.tool_id, b.provider_id
                    ),
                );
                continue;
            }
            if b.dataset_ttl_hours
                .is_some_and(|h| h == 0 || h > MAX_TTL_HOURS)
            {
                cx.value_error(
                    at,
                    "dataset_ttl_hours",
                    format!("give 1 to {MAX_TTL_HOURS} hours"),
                );
            }
            let tool = match providers.get(&b.provider_id) {
                None if declared.contains(&b.provider_id) => continue,
                None => {
                    let hint =
                        suggest(&b.provider_id, providers.keys().map(String::as_str), || {
                            format!(
                                "; declared: {}",
                                providers.keys().cloned().collect::<Vec<_>>().join(", ")
                            )
                        });
                    cx.value_error(
                        at,
                        "provider_id",
                        format!("no provider `{}`{hint}", b.provider_id),
                    );
                    continue;
                }
                Some(Provider {
                    kind: ProviderKind::OpenApi { toolkit, .. },
                    ..
                }) => match toolkit.tool(&b.tool_id) {
                    Some(t) => Some(Arc::new(t.clone())),
                    None => {
                        let hint = suggest(
                            &b.tool_id,
                            toolkit.tools.iter().map(|t| t.name.as_str()),
                            String::new,
                        );
                        cx.value_error(
                            at,
                            "tool_id",
                            format!(
                                "provider `{}` has no tool `{}`{hint}",
                                b.provider_id, b.tool_id
                            ),
                        );
                        continue;
                    }
                },
                // An MCP server's tools are known once it is connected.
                Some(_) => None,
            };
            bindings.push(Binding {
                tool_id: b.tool_id.clone(),
                provider: b.provider_id.clone(),
                tool,
                looping: b.loop_responses,
                discovery: b.discovery,
                dataset_ttl_hours: b.dataset_ttl_hours,
            });
        }
        out.insert(
            name.to_string(),
            Agent {
                name: name.to_string(),
                bindings,
                tool_budget,
            },
        );
    }
    out
}
