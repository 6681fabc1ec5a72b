//! What a pushed workflow's providers may reach on this server (issues 21
//! and 23), checked when it is pushed or validated, each refusal located
//! at its key:
//! - a `base_url`, and an MCP server's `url`, held to `[server]
//!   upstream_hosts` by name (their addresses are held to it again when a
//!   run calls them);
//! - no `mcp.command`: a team may not start programs on the server;
//! - `mcp.server` names a server the operator declared
//!   (`[server.mcp_servers]`).

use std::collections::BTreeMap;
use std::path::Path as FsPath;

use dragnet_engine::workflow::model::{
    DeclaredServer, McpServer, McpSource, ProviderKind, Workflow,
};
use dragnet_engine::workflow::Diagnostics;
use dragnet_http::HostPolicy;
use dragnet_located::cursor::Cursor;
use dragnet_located::load::{load, Kind};
use dragnet_located::yaml::Pos;

/// One refusal: the provider, the keys under it where it is reported,
/// and the message.
struct Refusal {
    provider: String,
    at: &'static [&'static str],
    message: String,
}

/// A diagnostic at each provider of `wf` this server refuses; `Ok` when
/// none is.
pub fn check(
    hosts: &HostPolicy,
    declared: &BTreeMap<String, DeclaredServer>,
    file_name: &str,
    source: &str,
    wf: &Workflow,
) -> Result<(), Diagnostics> {
    let refused: Vec<Refusal> = wf
        .providers
        .iter()
        .filter_map(|(name, p)| refusal(hosts, declared, name, &p.kind))
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    let kind = Kind {
        when_empty: "the workflow file is empty",
        when_failed: "a provider reaches where this server refuses",
    };
    let located = load(FsPath::new(file_name), source, kind, |cx, root| {
        let root = Cursor::root(root);
        for r in &refused {
            let mut place = root.key("providers").and_then(|p| p.key(&r.provider));
            for key in r.at {
                place = place.and_then(|c| c.key(key));
            }
            match place {
                Some(at) => cx.error(&at, r.message.clone()),
                None => cx.at(Pos::START, "", r.message.clone()),
            }
        }
        Some(())
    });
    match located {
        Err(diagnostics) => Err(diagnostics),
        // Unreachable (every refusal is reported), but never an `Ok`.
        Ok(()) => {
            let mut cx = dragnet_located::context::Ctx::new(FsPath::new(file_name));
            for r in &refused {
                cx.at(Pos::START, "", r.message.clone());
            }
            Err(cx.finish())
        }
    }
}

/// Why provider `name` may not be used on this server, if it may not.
fn refusal(
    hosts: &HostPolicy,
    declared: &BTreeMap<String, DeclaredServer>,
    name: &str,
    kind: &ProviderKind,
) -> Option<Refusal> {
    let refuse = |at, message| {
        Some(Refusal {
            provider: name.to_string(),
            at,
            message,
        })
    };
    match kind {
        ProviderKind::OpenApi(p) => match hosts.check_base_url(&p.base_url) {
            Ok(()) => None,
            Err(r) => refuse(
                &["base_url"],
                format!("the base_url of provider `{name}` may not be used on this server: {r}"),
            ),
        },
        ProviderKind::Mcp(McpSource::Own(McpServer::Url { url, .. })) => {
            match hosts.check_base_url(url) {
                Ok(()) => None,
                Err(r) => refuse(
                    &["mcp", "url"],
                    format!(
                        "the MCP server of provider `{name}` may not be used on this server: {r}"
                    ),
                ),
            }
        }
        ProviderKind::Mcp(McpSource::Own(McpServer::Command { .. })) => refuse(
            &["mcp", "command"],
            format!(
                "provider `{name}`: a workflow pushed to a server may not start a program \
                 (`mcp.command`); use `mcp: {{server: NAME}}`, a server the operator declared{}, \
                 or `mcp: {{url: …}}`",
                declared_list(declared)
            ),
        ),
        ProviderKind::Mcp(McpSource::Declared(server)) if !declared.contains_key(server) => refuse(
            &["mcp", "server"],
            format!(
                "provider `{name}`: this server declares no MCP server `{server}`{}",
                declared_list(declared)
            ),
        ),
        ProviderKind::Mcp(McpSource::Declared(_)) => None,
    }
}

/// `" (declared: a, b)"`, or `" (none is declared)"`.
fn declared_list(declared: &BTreeMap<String, DeclaredServer>) -> String {
    match declared.is_empty() {
        true => " (none is declared)".into(),
        false => format!(
            " (declared: {})",
            declared.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    }
}
