//! An `mcp:` block compiled into an [`McpServer`], the same for a workflow
//! file and `agent.yaml`: exactly one of `command` and `url`, `env` only
//! with a `command` (names that can be variables, `{env: VAR}` naming
//! one), `url` over http(s). Every problem is reported at its place in the
//! file (file:line:col and YAML path) through the caller's [`Ctx`].

use std::collections::BTreeMap;

use dragnet_located::context::Ctx;
use dragnet_located::cursor::Cursor;

use crate::file::{ChildEnvFile, FromEnvFile, McpFile};
use crate::server::{ChildEnv, McpServer};

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
