//! Whose credentials a call carries, and where they come from: the
//! organisation's (read from the environment when the gateway starts, as
//! are an upstream MCP server's secret headers), a connected app's stored
//! ones, or the caller's own runtime credentials for this one call.

use std::sync::Arc;

use dragnet_steps::http::{Credentials, HttpUpstream, Redactor, Secret};

use super::{EnvLookup, Gateway, StartError};
use crate::caller::{Caller, CredentialKind};
use crate::config::file::CredentialsFile;
use crate::config::{Binding, ChildEnv, McpServer, ProviderKind};
use crate::upstream::mcp_client::ChildVars;
use crate::upstream::{McpUpstream, ProviderUpstream};

/// The connection one call goes through.
pub(super) enum CallUpstream<'a> {
    Http(Arc<HttpUpstream>),
    Mcp(&'a McpUpstream),
}

impl Gateway {
    /// The connection for `binding`'s call by `caller`, and whose
    /// credentials it carries: the caller's own when the provider takes
    /// them and the caller presented them, else the organisation's.
    pub(super) fn call_upstream<'a>(
        &self,
        binding: &Binding,
        upstream: &'a ProviderUpstream,
        caller: &Caller,
        stored: Option<Secret>,
    ) -> Result<(CallUpstream<'a>, CredentialKind), String> {
        let http = match upstream {
            ProviderUpstream::Mcp(mcp) => {
                return Ok((CallUpstream::Mcp(mcp), CredentialKind::Organisation))
            }
            ProviderUpstream::Http(http) => http,
        };
        let Some(ProviderKind::OpenApi {
            credentials,
            runtime_credentials_header,
            ..
        }) = self
            .config
            .providers
            .get(&binding.provider)
            .map(|p| &p.kind)
        else {
            return Ok((
                CallUpstream::Http(http.clone()),
                CredentialKind::Organisation,
            ));
        };
        // A connected app's stored credentials are the caller's own.
        if let Some(secret) = stored {
            return Ok((
                CallUpstream::Http(Arc::new(http.with_credentials(Credentials::Bearer(secret)))),
                CredentialKind::Runtime,
            ));
        }
        match (
            runtime_credentials_header,
            caller.runtime.get(&binding.provider),
        ) {
            (Some(_), Some(secret)) => Ok((
                CallUpstream::Http(Arc::new(
                    http.with_credentials(Credentials::Bearer(secret.clone())),
                )),
                CredentialKind::Runtime,
            )),
            (Some(header), None) if credentials.is_none() => Err(format!(
                "`{}` needs your own credentials for provider `{}`: send them in the `{header}` \
                 header of the request",
                binding.tool_id, binding.provider
            )),
            _ => Ok((
                CallUpstream::Http(http.clone()),
                CredentialKind::Organisation,
            )),
        }
    }
}

/// A provider's organisation credentials, read from the environment.
pub(super) fn organisation_credentials(
    provider: &str,
    file: Option<&CredentialsFile>,
    env: &EnvLookup,
) -> Result<Credentials, StartError> {
    let need = |var: &str| {
        env(var)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| StartError::MissingVariable {
                provider: provider.to_string(),
                var: var.to_string(),
            })
    };
    Ok(match file {
        None => Credentials::None,
        Some(CredentialsFile::Bearer { env }) => Credentials::Bearer(Secret::new(need(env)?)),
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
    })
}

/// An upstream MCP server's connection as started: its `headers_env`
/// values read from the environment into its headers, and its child's
/// named variables resolved (`{env: VAR}` read from the environment, a
/// missing one stopping the start). Every value read is a secret, added
/// to `secrets`.
pub(super) fn resolve_mcp(
    provider: &str,
    server: &McpServer,
    env: &EnvLookup,
    secrets: &mut Redactor,
) -> Result<(McpServer, ChildVars), StartError> {
    let need = |var: &str| {
        env(var)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| StartError::MissingVariable {
                provider: provider.to_string(),
                var: var.to_string(),
            })
    };
    match server {
        McpServer::Command { env: named, .. } => {
            let mut vars = ChildVars::new();
            for (name, value) in named {
                let value = match value {
                    ChildEnv::Literal(v) => v.clone(),
                    ChildEnv::Var(var) => {
                        let value = need(var)?;
                        secrets.add(&value);
                        value
                    }
                };
                vars.push((name.clone(), Secret::new(value)));
            }
            Ok((server.clone(), vars))
        }
        McpServer::Url {
            url,
            headers,
            headers_env,
        } => {
            let mut headers = headers.clone();
            for (name, var) in headers_env {
                let value = need(var)?;
                secrets.add(&value);
                headers.insert(name.clone(), value);
            }
            let server = McpServer::Url {
                url: url.clone(),
                headers,
                headers_env: Default::default(),
            };
            Ok((server, ChildVars::new()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> McpServer {
        McpServer::Url {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: [("X-Team".to_string(), "support".to_string())].into(),
            headers_env: [("Authorization".to_string(), "WIKI_TOKEN".to_string())].into(),
        }
    }

    #[test]
    fn secret_headers_come_from_the_environment_or_the_start_fails_naming_the_variable() {
        let set: EnvLookup =
            Arc::new(|var| (var == "WIKI_TOKEN").then(|| "Bearer s3cret".to_string()));
        let mut secrets = Redactor::default();
        let (McpServer::Url { headers, .. }, _) =
            resolve_mcp("wiki", &server(), &set, &mut secrets).unwrap()
        else {
            panic!("a URL server")
        };
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        assert_eq!(headers["X-Team"], "support");
        assert_eq!(secrets.text("got Bearer s3cret".into()), "got [redacted]");
        let unset: EnvLookup = Arc::new(|_| None);
        let error = resolve_mcp("wiki", &server(), &unset, &mut secrets).unwrap_err();
        assert!(error.to_string().contains("WIKI_TOKEN"), "{error}");
    }

    #[test]
    fn a_childs_named_variables_are_read_at_start_and_known_as_secrets() {
        let server = McpServer::Command {
            argv: vec!["server".into()],
            env: [
                ("API_KEY".to_string(), ChildEnv::Var("FILES_KEY".into())),
                ("MODE".to_string(), ChildEnv::Literal("read-only".into())),
            ]
            .into(),
        };
        let set: EnvLookup = Arc::new(|var| (var == "FILES_KEY").then(|| "fk-991".to_string()));
        let mut secrets = Redactor::default();
        let (_, vars) = resolve_mcp("files", &server, &set, &mut secrets).unwrap();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(n, v)| (n.as_str(), v.expose())).collect();
        assert_eq!(vars, [("API_KEY", "fk-991"), ("MODE", "read-only")]);
        // The value read is a secret; the literal is not.
        assert_eq!(
            secrets.text("fk-991 read-only".into()),
            "[redacted] read-only"
        );
        let unset: EnvLookup = Arc::new(|_| None);
        let error = resolve_mcp("files", &server, &unset, &mut secrets).unwrap_err();
        assert!(
            error.to_string().contains("`FILES_KEY`") && error.to_string().contains("`files`"),
            "{error}"
        );
    }
}
