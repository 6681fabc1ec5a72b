//! The team secrets a run opens (issue 21): on a server, a workflow's
//! credentials (`credentials: {env: NAME}`) are its team's secrets, never
//! this process's environment. A run opens exactly the secrets its
//! workflow names, and nothing else reaches the engine.

use std::collections::{BTreeSet, HashMap};

use dragnet_core::secret::Secret;
use dragnet_engine::workflow::model::{CredentialsSpec, Workflow};
use dragnet_http::Sealer;
use dragnet_store::{open_secret, Db};

/// The variable the operator sets the sealing key in.
pub const KEY_VAR: &str = "DRAGNET_SECRETS_KEY";

/// Every variable name `wf`'s providers' credentials read, with the
/// provider and the key naming it.
pub fn named_secrets(wf: &Workflow) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for p in wf.providers.values() {
        let mut add = |key: &'static str, name: &str| {
            out.push((p.name.clone(), key, name.to_string()));
        };
        match &p.credentials {
            CredentialsSpec::None => {}
            CredentialsSpec::Bearer { env } | CredentialsSpec::Header { env, .. } => {
                add("env", env)
            }
            CredentialsSpec::Basic {
                username_env,
                password_env,
            } => {
                add("username_env", username_env);
                add("password_env", password_env);
            }
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
    let wanted: BTreeSet<String> = named_secrets(wf).into_iter().map(|(_, _, n)| n).collect();
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
    for (name, sealed) in db.sealed_secrets(team_id).await? {
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
