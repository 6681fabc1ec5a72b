//! `oauth:` in `agent.yaml`: the gateway as an OAuth 2.1 resource server
//! ([`crate::oauth`]). As written ([`OAuthFile`]) and compiled
//! ([`compile`]) into a [`ResourceServerConfig`], every problem located.

use std::time::Duration;

use dragnet_located::context::Ctx;
use dragnet_located::cursor::Cursor;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::oauth::{ClaimNames, IssuerConfig, ResourceServerConfig};

/// Accept OAuth access tokens over HTTP: JWTs from the issuers listed,
/// for this gateway's resource.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuthFile {
    /// This gateway's resource identifier: the URL clients connect to
    /// (e.g. `https://mcp.example.com/mcp`). A token must name it in `aud`.
    pub resource: String,
    /// The authorization servers whose tokens are accepted.
    #[schemars(length(min = 1))]
    pub issuers: Vec<IssuerFile>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (0 to 300; 60
    /// when absent).
    #[serde(default)]
    pub leeway_seconds: Option<u64>,
}

/// One trusted authorization server.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssuerFile {
    /// Its issuer identifier, exactly as tokens carry it in `iss`.
    pub issuer: String,
    /// Where its keys are; read from its metadata
    /// (`/.well-known/oauth-authorization-server`, else
    /// `/.well-known/openid-configuration`) when absent.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// The scope a token must carry to use the gateway.
    pub scope: String,
    /// The organisation of every token of this issuer, when its tokens
    /// carry none (then `claims.org` is not read).
    #[serde(default)]
    pub organisation: Option<String>,
    /// Which claims name the caller.
    #[serde(default)]
    pub claims: ClaimsFile,
}

/// Claim names; each absent one keeps its default.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimsFile {
    /// The organisation (default `org`).
    pub org: Option<String>,
    /// The user (default `sub`).
    pub user: Option<String>,
    /// The agent (default `agent`).
    pub agent: Option<String>,
    /// The tenant-wide cache scope (default `cache_scope`).
    pub cache_scope: Option<String>,
}

/// The most clock skew allowed, in seconds.
const MAX_LEEWAY: u64 = 300;
const DEFAULT_LEEWAY: u64 = 60;

/// The compiled `oauth:` section, when present and valid.
pub fn compile(cx: &mut Ctx, c: Option<Cursor<'_>>) -> Option<ResourceServerConfig> {
    let c = c?;
    let file: OAuthFile = cx.deserialize(&c)?;
    let before = cx.count();
    if !is_url(&file.resource, false) {
        cx.value_error(
            &c,
            "resource",
            format!(
                "`resource` must be this gateway's URL (http:// or https://, no fragment), got `{}`",
                file.resource
            ),
        );
    }
    if file.issuers.is_empty() {
        cx.value_error(&c, "issuers", "`issuers` lists no authorization server");
    }
    let leeway = file.leeway_seconds.unwrap_or(DEFAULT_LEEWAY);
    if leeway > MAX_LEEWAY {
        cx.value_error(
            &c,
            "leeway_seconds",
            format!("`leeway_seconds` is at most {MAX_LEEWAY}, got {leeway}"),
        );
    }
    let issuers_at = c.key("issuers");
    for (i, issuer) in file.issuers.iter().enumerate() {
        let at = issuers_at.as_ref().and_then(|l| l.items().nth(i));
        let mut error = |key: &str, message: String| match &at {
            Some(at) => cx.value_error(at, key, message),
            None => cx.error(&c, message),
        };
        if !is_url(&issuer.issuer, true) {
            error(
                "issuer",
                format!(
                    "`issuer` must be an https:// URL (http:// only on a loopback address), got `{}`",
                    issuer.issuer
                ),
            );
        }
        if let Some(jwks) = &issuer.jwks_uri {
            if !is_url(jwks, true) {
                error(
                    "jwks_uri",
                    format!("`jwks_uri` must be an https:// URL (http:// only on a loopback address), got `{jwks}`"),
                );
            }
        }
        if issuer.scope.trim().is_empty() || issuer.scope.contains(char::is_whitespace) {
            error(
                "scope",
                format!(
                    "`scope` is one scope name without spaces, got `{}`",
                    issuer.scope
                ),
            );
        }
    }
    if cx.count() > before {
        return None;
    }
    Some(ResourceServerConfig {
        resource: file.resource,
        issuers: file.issuers.into_iter().map(issuer).collect(),
        leeway: Duration::from_secs(leeway),
    })
}

fn issuer(file: IssuerFile) -> IssuerConfig {
    let defaults = ClaimNames::default();
    IssuerConfig {
        issuer: file.issuer,
        jwks_uri: file.jwks_uri,
        scope: file.scope,
        organisation: file.organisation,
        claims: ClaimNames {
            org: file.claims.org.unwrap_or(defaults.org),
            user: file.claims.user.unwrap_or(defaults.user),
            agent: file.claims.agent.unwrap_or(defaults.agent),
            cache_scope: file.claims.cache_scope.unwrap_or(defaults.cache_scope),
        },
    }
}

/// An absolute http(s) URL without a fragment; with `secure`, plain http
/// only on a loopback host (tokens and keys must not travel in the clear).
fn is_url(url: &str, secure: bool) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let loopback = matches!(name, "localhost" | "127.0.0.1" | "[::1]");
    !name.is_empty()
        && !url.contains('#')
        && match scheme {
            "https" => true,
            "http" => !secure || loopback,
            _ => false,
        }
}
