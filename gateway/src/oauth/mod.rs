//! The gateway as an OAuth 2.1 resource server (the MCP authorization
//! specification): access tokens from the issuers `agent.yaml` names are
//! accepted over streamable HTTP, beside the operator's HS256 tokens.
//!
//! - [`jwk`]: an issuer's public keys and the three algorithms accepted
//!   (RS256, ES256, EdDSA), each only with its own key type.
//! - [`keys`]: finding, caching and refreshing an issuer's key set.
//! - [`verify`]: the checks a token passes ([`Verifier`]).
//! - [`metadata`]: the protected-resource metadata document (RFC 9728)
//!   and the `WWW-Authenticate` challenges that point clients to it.
//! - `peer` (feature `test-util`): a real authorization server for tests.

pub mod jwk;
pub mod keys;
pub mod metadata;
#[cfg(feature = "test-util")]
pub mod peer;
pub mod verify;

use std::time::Duration;

use chrono::{DateTime, Utc};

pub use verify::Verifier;

/// This gateway as a resource: its identifier and whom it trusts.
#[derive(Debug, Clone)]
pub struct ResourceServerConfig {
    /// The resource identifier tokens must name in `aud` (the URL clients
    /// connect to, e.g. `https://mcp.example.com/mcp`).
    pub resource: String,
    pub issuers: Vec<IssuerConfig>,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
}

/// One trusted authorization server.
#[derive(Debug, Clone)]
pub struct IssuerConfig {
    /// The issuer identifier, compared exactly with a token's `iss`.
    pub issuer: String,
    /// Where its keys are; found through its metadata when not given.
    pub jwks_uri: Option<String>,
    /// The scope a token must carry to call tools.
    pub scope: String,
    /// Which claims name the caller.
    pub claims: ClaimNames,
    /// The organisation of every token this issuer signs, for identity
    /// providers that carry none in a claim.
    pub organisation: Option<String>,
}

/// The claims that name a caller.
#[derive(Debug, Clone)]
pub struct ClaimNames {
    pub org: String,
    pub user: String,
    pub agent: String,
    pub cache_scope: String,
}

impl Default for ClaimNames {
    fn default() -> ClaimNames {
        ClaimNames {
            org: "org".into(),
            user: "sub".into(),
            agent: "agent".into(),
            cache_scope: "cache_scope".into(),
        }
    }
}

/// Why an access token was refused. Never repeats the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    #[error("no bearer token")]
    Missing,
    #[error("the token is not a JWT (three base64url parts)")]
    Malformed,
    #[error("the token's algorithm is `{0}`; RS256, ES256 and EdDSA are accepted")]
    Algorithm(String),
    #[error("the token's issuer `{0}` is not one this gateway trusts")]
    UnknownIssuer(String),
    #[error("the issuer has no signing key {}", kid.as_deref().map(|k| format!("`{k}`")).unwrap_or_else(|| "that fits the token".into()))]
    UnknownKey { kid: Option<String> },
    #[error("the keys of issuer `{issuer}` cannot be read: {reason}")]
    Keys { issuer: String, reason: String },
    #[error("the token's signature does not check")]
    Signature,
    #[error("the token expired at {0}")]
    Expired(DateTime<Utc>),
    #[error("the token is not valid before {0}")]
    NotYetValid(DateTime<Utc>),
    #[error("the token is not for this resource ({resource})")]
    Audience { resource: String },
    #[error("the token lacks the scope `{required}`")]
    Scope { required: String },
    #[error("the token's claims are incomplete: {0}")]
    Claims(String),
}

impl OAuthError {
    /// Whether the token is valid but not enough (403 with
    /// `insufficient_scope`), rather than not valid (401).
    pub fn is_insufficient(&self) -> bool {
        matches!(self, OAuthError::Scope { .. })
    }
}
