//! An `mcp:` block compiled into an [`McpServer`], the same for a workflow
//! file and `agent.yaml`: exactly one of `command` and `url`, `env` only
//! with a `command` (names that can be variables, `{env: VAR}` naming
//! one), `url` over http(s). Every problem is reported at its place in the
//! file (file:line:col and YAML path) through the caller's [`Ctx`].

use std::collections::BTreeMap;

use dragnet_located::context::Ctx;
use dragnet_located::cursor::Cursor;

use crate::file::{ChildEnvFile, FromEnvFile, McpFile, ProviderFile};
use crate::server::{ChildEnv, McpServer, McpSource};

/// Where a provider is written: the keys each place takes differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A workflow file: no `app`, no `runtime_credentials_header`;
    /// `mcp.server` may name a declared server.
    Workflow,
    /// `agent.yaml`: no `mcp.server` (the gateway starts its own).
    Agent,
}

/// What a provider's tools come from, as its block says.
#[derive(Debug)]
pub enum Source<'f> {
    /// An OpenAPI document (`openapi`, or `app` in `agent.yaml`), its
    /// path as written.
    OpenApi {
        document: &'f str,
        app: bool,
    },
    Mcp(McpSource),
}

/// Which kind of provider `file` (at `c`, named `name`) is, every key
/// that does not belong to that kind or to `place` reported at its place.
/// `None` when something was reported.
pub fn source<'f>(
    cx: &mut Ctx,
    c: &Cursor<'_>,
    name: &str,
    file: &'f ProviderFile,
    place: Place,
) -> Option<Source<'f>> {
    let before = cx.count();
    if place == Place::Workflow {
        if file.app.is_some() {
            cx.key_error(
                c,
                "app",
                "`app` (a connected-app toolkit, whose tools a user connects) belongs to agent.yaml; a workflow's provider is `openapi` or `mcp`",
            );
        }
        if file.runtime_credentials_header.is_some() {
            cx.key_error(
                c,
                "runtime_credentials_header",
                "`runtime_credentials_header` belongs to agent.yaml: a workflow calls with the organisation's `credentials`; remove it",
            );
        }
    }
    let source = match (&file.openapi, &file.mcp, &file.app) {
        (Some(doc), None, None) => Some(Source::OpenApi {
            document: doc.as_str(),
            app: false,
        }),
        (None, None, Some(doc)) if place == Place::Agent => Some(Source::OpenApi {
            document: doc.as_str(),
            app: true,
        }),
        (None, Some(mcp), None) => {
            for (key, present) in [
                ("base_url", file.base_url.is_some()),
                ("credentials", file.credentials.is_some()),
                ("headers", !file.headers.is_empty()),
                ("paging", !file.paging.is_empty()),
                (
                    "runtime_credentials_header",
                    file.runtime_credentials_header.is_some() && place == Place::Agent,
                ),
            ] {
                if present {
                    let instead = match key {
                        "paging" => "an MCP tool's paging is read from its input schema",
                        _ => "give `mcp.headers`/`mcp.headers_env` (a URL) or `mcp.env` (a command) instead",
                    };
                    cx.key_error(
                        c,
                        key,
                        format!("provider `{name}` is an MCP server: `{key}` belongs to OpenAPI providers; {instead}"),
                    );
                }
            }
            mcp_source(cx, c, name, mcp, place).map(Source::Mcp)
        }
        (None, None, None) | (None, None, Some(_)) => {
            let kinds = match place {
                Place::Workflow => "`openapi` or `mcp`",
                Place::Agent => "`openapi`, `mcp` or `app`",
            };
            if file.app.is_none() {
                cx.error(c, format!("provider `{name}` needs one of {kinds}"));
            }
            None
        }
        _ => {
            cx.error(
                c,
                format!(
                    "provider `{name}` has more than one of `openapi`, `mcp` and `app`; keep one"
                ),
            );
            None
        }
    };
    source.filter(|_| cx.count() == before)
}

/// Provider `name`'s MCP source: its own server (see [`mcp_server`]) or,
/// in a workflow, `server: NAME`, a server the operator declared.
pub fn mcp_source(
    cx: &mut Ctx,
    provider: &Cursor<'_>,
    name: &str,
    mcp: &McpFile,
    place: Place,
) -> Option<McpSource> {
    let Some(declared) = &mcp.server else {
        return mcp_server(cx, provider, name, mcp).map(McpSource::Own);
    };
    let at = provider.key("mcp");
    let at = at.as_ref().unwrap_or(provider);
    if place == Place::Agent {
        cx.value_error(
            at,
            "server",
            "`mcp.server` names a server the operator of `dragnet serve` declared, for workflows; in agent.yaml give `command` or `url`",
        );
        return None;
    }
    let others = mcp.command.is_some()
        || mcp.url.is_some()
        || !mcp.env.is_empty()
        || !mcp.headers.is_empty()
        || !mcp.headers_env.is_empty();
    if others {
        cx.value_error(
            at,
            "server",
            format!("`mcp.server: {declared}` stands alone: the operator's declaration gives its command and environment; remove the other `mcp` keys"),
        );
        return None;
    }
    let trimmed = declared.trim();
    let fine = !trimmed.is_empty()
        && trimmed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !fine {
        cx.value_error(
            at,
            "server",
            format!("`mcp.server` is `{declared}`; give the name of a declared server (letters, digits, `_` and `-`)"),
        );
        return None;
    }
    Some(McpSource::Declared(trimmed.to_string()))
}

/// Provider `name`'s MCP server (its block `mcp` under the provider's
/// cursor `provider`), or `None` when a problem was reported.
pub fn mcp_server(
    cx: &mut Ctx,
    provider: &Cursor<'_>,
    name: &str,
    mcp: &McpFile,
) -> Option<McpServer> {
    let at = provider.key("mcp");
    let complain = |cx: &mut Ctx, message: String| match &at {
        Some(at) => cx.error(at, message),
        None => cx.error(provider, message),
    };
    match (&mcp.command, &mcp.url) {
        (Some(cmd), None) if !cmd.is_empty() && !cmd[0].trim().is_empty() => {
            let env = child_env(cx, at.as_ref().unwrap_or(provider), &mcp.env);
            Some(McpServer::Command {
                argv: cmd.clone(),
                env,
            })
        }
        (None, Some(_)) if !mcp.env.is_empty() => {
            complain(
                cx,
                "`mcp.env` is the environment of a `command`'s child process; a server at `url` \
                 takes `headers` or `headers_env`"
                    .into(),
            );
            None
        }
        (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
            Some(McpServer::Url {
                url: url.clone(),
                headers: mcp.headers.clone(),
                headers_env: mcp.headers_env.clone(),
            })
        }
        (None, Some(url)) => {
            complain(
                cx,
                format!("`mcp.url` must start with http:// or https://, got `{url}`"),
            );
            None
        }
        (Some(_), None) => {
            complain(
                cx,
                "`mcp.command` is empty; give the program and its arguments".into(),
            );
            None
        }
        _ => {
            complain(
                cx,
                format!(
                    "the MCP server of provider `{name}` needs exactly one of `command` and `url`"
                ),
            );
            None
        }
    }
}

/// An MCP child's environment (`mcp.env` under `at`): names checked,
/// values as written; each problem at its entry.
fn child_env(
    cx: &mut Ctx,
    at: &Cursor<'_>,
    file: &BTreeMap<String, ChildEnvFile>,
) -> BTreeMap<String, ChildEnv> {
    let mut out = BTreeMap::new();
    let section = at.key("env");
    let complain = |cx: &mut Ctx, name: &str, key: Option<&str>, message: String| match &section {
        Some(section) => cx.entry_error(section, name, key, message),
        None => cx.error(at, message),
    };
    for (name, value) in file {
        let fine = !name.is_empty()
            && !name.contains('=')
            && !name.contains('\0')
            && !name.chars().any(char::is_whitespace);
        if !fine {
            complain(
                cx,
                name,
                None,
                format!("`mcp.env` names a variable `{name}`, which cannot be an environment variable's name"),
            );
            continue;
        }
        let value = match value {
            ChildEnvFile::Literal(v) => ChildEnv::Literal(v.clone()),
            ChildEnvFile::FromEnv(FromEnvFile { env }) if !env.trim().is_empty() => {
                ChildEnv::Var(env.trim().to_string())
            }
            ChildEnvFile::FromEnv(_) => {
                complain(
                    cx,
                    name,
                    Some("env"),
                    format!("`mcp.env.{name}.env` is empty; name the gateway's variable to read"),
                );
                continue;
            }
        };
        out.insert(name.clone(), value);
    }
    out
}
