//! Whose credentials a call carries, and where they come from: the
//! organisation's (read from the environment when the gateway starts, as
//! are an upstream MCP server's secret headers), a connected app's stored
//! ones, or the caller's own runtime credentials for this one call.

use std::sync::Arc;

use dragnet_steps::http::{Credentials, HttpUpstream, Secret};

use super::{EnvLookup, Gateway, StartError};
use crate::caller::{Caller, CredentialKind};
use crate::config::file::CredentialsFile;
use crate::config::{Binding, McpServer, ProviderKind};
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

/// An upstream MCP server's connection with its `headers_env` values read
/// from the environment into its headers.
pub(super) fn with_secret_headers(
    provider: &str,
    server: &McpServer,
    env: &EnvLookup,
) -> Result<McpServer, StartError> {
    let McpServer::Url {
        url,
        headers,
        headers_env,
    } = server
    else {
        return Ok(server.clone());
    };
    let mut headers = headers.clone();
    for (name, var) in headers_env {
        let value =
            env(var)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| StartError::MissingVariable {
                    provider: provider.to_string(),
                    var: var.clone(),
                })?;
        headers.insert(name.clone(), value);
    }
    Ok(McpServer::Url {
        url: url.clone(),
        headers,
        headers_env: Default::default(),
    })
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
        let McpServer::Url { headers, .. } = with_secret_headers("wiki", &server(), &set).unwrap()
        else {
            panic!("a URL server")
        };
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        assert_eq!(headers["X-Team"], "support");
        let unset: EnvLookup = Arc::new(|_| None);
        let error = with_secret_headers("wiki", &server(), &unset).unwrap_err();
        assert!(error.to_string().contains("WIKI_TOKEN"), "{error}");
    }
}
