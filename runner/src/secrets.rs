//! The team secrets a run opens (issue 21): on a server, the secrets a
//! workflow's providers name (`credentials: {env: NAME}`, an MCP server's
//! `headers_env` and `env: {VAR: {env: NAME}}`) are its team's, never
//! this process's environment. A run opens exactly the secrets its
//! workflow names, and nothing else reaches the engine.

use std::collections::{BTreeSet, HashMap};

use dragnet_core::secret::Secret;
use dragnet_engine::workflow::model::{
    ChildEnv, CredentialsFile, McpServer, McpSource, ProviderKind, Workflow,
};
use dragnet_http::Sealer;
use dragnet_store::{open_secret, Db};

/// The variable the operator sets the sealing key in.
pub const KEY_VAR: &str = "DRAGNET_SECRETS_KEY";

/// One secret a workflow names: its provider, the keys under the
/// provider where it is named (for a located error), and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedSecret {
    pub provider: String,
    /// E.g. `["credentials", "env"]` or `["mcp", "env", "API_KEY", "env"]`.
    pub at: Vec<String>,
    pub name: String,
}

/// Every secret `wf`'s providers name: credentials, an MCP server's
/// `headers_env` values and its child's `{env: NAME}` variables.
pub fn named_secrets(wf: &Workflow) -> Vec<NamedSecret> {
    let mut out = Vec::new();
    for p in wf.providers.values() {
        let mut add = |at: &[&str], name: &str| {
            out.push(NamedSecret {
                provider: p.name.clone(),
                at: at.iter().map(|k| k.to_string()).collect(),
                name: name.to_string(),
            });
        };
        match &p.kind {
            ProviderKind::OpenApi(o) => match &o.credentials {
                None => {}
                Some(CredentialsFile::Bearer { env } | CredentialsFile::Header { env, .. }) => {
                    add(&["credentials", "env"], env)
                }
                Some(CredentialsFile::Basic {
                    username_env,
                    password_env,
                }) => {
                    add(&["credentials", "username_env"], username_env);
                    add(&["credentials", "password_env"], password_env);
                }
            },
            ProviderKind::Mcp(McpSource::Own(McpServer::Command { env, .. })) => {
                for (var, value) in env {
                    if let ChildEnv::Var(name) = value {
                        add(&["mcp", "env", var, "env"], name);
                    }
                }
            }
            ProviderKind::Mcp(McpSource::Own(McpServer::Url { headers_env, .. })) => {
                for (header, name) in headers_env {
                    add(&["mcp", "headers_env", header], name);
                }
            }
            ProviderKind::Mcp(McpSource::Declared(_)) => {}
        }
    }
    out
}

/// The secrets `wf` names that team `team_id` has set, opened: exactly
/// what a run of it may read. One that does not open (another key, or a
/// row copied from elsewhere) is left out and logged by name.
pub async fn for_run(
    db: &Db,
    sealer: Option<&Sealer>,
    team_id: &str,
    wf: &Workflow,
) -> Result<HashMap<String, Secret>, dragnet_store::Error> {
    let wanted: BTreeSet<String> = named_secrets(wf).into_iter().map(|n| n.name).collect();
    let mut out = HashMap::new();
    if wanted.is_empty() {
        return Ok(out);
    }
    let Some(sealer) = sealer else {
        tracing::warn!(
            "the run's workflow names team secrets but this process has no {KEY_VAR}: \
             its steps fail until the process is started with the server's key"
        );
        return Ok(out);
    };
    for (name, sealed) in db.secrets().sealed_secrets(team_id).await? {
        if !wanted.contains(&name) {
            continue;
        }
        match open_secret(sealer, team_id, &name, &sealed) {
            Some(value) => {
                out.insert(name, value);
            }
            None => tracing::warn!(
                secret = %name,
                "a team secret does not open under this server's key: set it again"
            ),
        }
    }
    Ok(out)
}
