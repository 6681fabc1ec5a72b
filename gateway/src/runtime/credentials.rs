//! Whose credentials a call carries, and where they come from: the
//! organisation's (read from the environment when the gateway starts, as
//! are an upstream MCP server's secret headers), a connected app's stored
//! ones, or the caller's own runtime credentials for this one call.

use std::sync::Arc;

use dragnet_core::secret::Secret;
use dragnet_http::{Credentials, HttpUpstream, Redactor};

use super::{EnvLookup, Gateway, StartError};
use crate::caller::{Caller, CredentialKind};
use crate::config::file::CredentialsFile;
use crate::config::{Binding, McpServer, ProviderKind};
use dragnet_providers::mcp_client::ChildVars;
use dragnet_providers::{McpUpstream, ProviderUpstream, Resolver};

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

/// Why provider `provider` stops the gateway's start: a variable it names
/// is missing, or its upstream MCP server could not be used.
fn start_error(provider: &str, e: dragnet_providers::Error) -> StartError {
    match e {
        dragnet_providers::Error::MissingVariable { provider, var }
        | dragnet_providers::Error::MissingSecret {
            provider,
            name: var,
        } => StartError::MissingVariable { provider, var },
        other => StartError::Mcp {
            provider: provider.to_string(),
            message: other.to_string(),
        },
    }
}

/// A provider's organisation credentials, read from the environment.
pub(super) fn organisation_credentials(
    provider: &str,
    file: Option<&CredentialsFile>,
    env: &EnvLookup,
) -> Result<Credentials, StartError> {
    Resolver::Environment(env.clone())
        .credentials(provider, file)
        .map_err(|e| start_error(provider, e))
}

/// An upstream MCP server's connection as started, its secrets read from
/// the environment (added to `secrets`).
pub(super) fn resolve_mcp(
    provider: &str,
    server: &McpServer,
    env: &EnvLookup,
    secrets: &mut Redactor,
) -> Result<(McpServer, ChildVars), StartError> {
    Resolver::Environment(env.clone())
        .mcp(provider, server, secrets)
        .map_err(|e| start_error(provider, e))
}
