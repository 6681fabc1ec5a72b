//! `[server.mcp_servers]`: the MCP servers an operator lets workflows
//! start, by name (`mcp: {server: NAME}`), each checked and its `{env =
//! "VAR"}` values read from this process's environment when it starts.

use std::collections::BTreeMap;

use dragnet_core::secret::Secret;
use dragnet_providers::file::{ChildEnvFile, FromEnvFile};
use dragnet_providers::{ChildEnv, DeclaredServer, McpServer};
use serde::Deserialize;
use toml::Spanned;

use super::Source;
use crate::failure::CliError;

/// `[server.mcp_servers.NAME]`: a program the operator lets workflows
/// start, by name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileMcpServer {
    command: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, ChildEnvFile>,
}

/// `[server.mcp_servers]`, each server's `{env = "VAR"}` values read from
/// the environment now; an error is located at its server.
pub(super) fn declared(
    env: &dyn Fn(&str) -> Option<String>,
    file: &BTreeMap<String, Spanned<FileMcpServer>>,
    source: &Source<'_>,
) -> Result<std::sync::Arc<BTreeMap<String, DeclaredServer>>, CliError> {
    let mut out = BTreeMap::new();
    for (name, declared) in file {
        let key = format!("server.mcp_servers.{name}");
        let at = |message: String| source.value_error(declared.span(), &key, message);
        let fine = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !fine {
            return Err(at(format!(
                "`{name}` cannot be a server's name: use letters, digits, `_` and `-`"
            )));
        }
        let server = declared.get_ref();
        if server.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(at(
                "`command` is empty; give the program and its arguments".into()
            ));
        }
        let mut named = BTreeMap::new();
        let mut vars = Vec::new();
        for (var, value) in &server.env {
            let value = match value {
                ChildEnvFile::Literal(v) => {
                    named.insert(var.clone(), ChildEnv::Literal(v.clone()));
                    v.clone()
                }
                ChildEnvFile::FromEnv(FromEnvFile { env: from }) => {
                    named.insert(var.clone(), ChildEnv::Var(from.clone()));
                    env(from).filter(|v| !v.is_empty()).ok_or_else(|| {
                        at(format!(
                            "`env.{var}` reads the environment variable `{from}`, which is not set"
                        ))
                    })?
                }
            };
            vars.push((var.clone(), Secret::new(value)));
        }
        out.insert(
            name.clone(),
            DeclaredServer {
                server: McpServer::Command {
                    argv: server.command.clone(),
                    env: named,
                },
                vars,
            },
        );
    }
    Ok(std::sync::Arc::new(out))
}
