//! Checking an access token from a configured issuer: the header's
//! algorithm (RS256, ES256 or EdDSA only), the issuer (`iss`, exactly one
//! configured), the signature under that issuer's key, the audience (`aud`
//! must name this gateway's resource, RFC 8707), the times (`exp` required,
//! `nbf` when present, with the configured leeway), the scope, and the
//! claims that name the organisation, user and agent. The claims read are
//! those the issuer's configuration names.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use dragnet_core::clock::Clock;
use serde_json::{Map, Value};

use super::jwk::Alg;
use super::keys::IssuerKeys;
use super::{IssuerConfig, OAuthError, ResourceServerConfig};
use crate::jws::{Jws, JwsError};
use crate::token::Claims;

/// Checks tokens for one resource against its issuers.
pub struct Verifier {
    resource: String,
    leeway: Duration,
    issuers: Vec<(IssuerConfig, IssuerKeys)>,
    clock: Arc<dyn Clock>,
}

impl Verifier {
    pub fn new(config: &ResourceServerConfig, clock: Arc<dyn Clock>) -> Verifier {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let issuers = config
            .issuers
            .iter()
            .map(|issuer| {
                let keys = IssuerKeys::new(
                    issuer.issuer.clone(),
                    issuer.jwks_uri.clone(),
                    http.clone(),
                    clock.clone(),
                );
                (issuer.clone(), keys)
            })
            .collect();
        Verifier {
            resource: config.resource.clone(),
            leeway: config.leeway,
            issuers,
            clock,
        }
    }

    /// The caller `token` names, when it is valid now.
    pub async fn verify(&self, token: &str) -> Result<Claims, OAuthError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(OAuthError::Missing);
        }
        let malformed = |_: JwsError| OAuthError::Malformed;
        let jws = Jws::split(token).map_err(malformed)?;
        let kid = jws.kid().map_err(malformed)?;
        let named = &jws.alg;
        let alg = Alg::parse(named)
            .ok_or_else(|| OAuthError::Algorithm(named.chars().take(16).collect()))?;
        let claims: Map<String, Value> = serde_json::from_slice(&jws.payload().map_err(malformed)?)
            .map_err(|_| OAuthError::Malformed)?;
        // The issuer picks the keys; nothing else is trusted before the
        // signature checks.
        let iss = claims
            .get("iss")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (config, keys) = self
            .issuers
            .iter()
            .find(|(c, _)| c.issuer == iss)
            .ok_or_else(|| OAuthError::UnknownIssuer(iss.chars().take(128).collect()))?;
        let key = keys.key(kid.as_deref(), alg).await?;
        let signature = jws.signature().map_err(malformed)?;
        if !key.verifies(alg, jws.signing_input(), &signature) {
            return Err(OAuthError::Signature);
        }
        self.check_signed_claims(config, &claims)
    }

    /// The caller named by `claims` of a token `config`'s issuer signed,
    /// when they are good now: times, audience, scope, the caller's
    /// claims. Only for claims whose signature was checked (`verify` calls
    /// it last); public so that the claim checks can be fuzzed alone.
    pub fn check_signed_claims(
        &self,
        config: &IssuerConfig,
        claims: &Map<String, Value>,
    ) -> Result<Claims, OAuthError> {
        self.check_times(claims)?;
        self.check_audience(claims)?;
        check_scope(config, claims)?;
        caller(config, claims)
    }

    fn check_times(&self, claims: &Map<String, Value>) -> Result<(), OAuthError> {
        let now = self.clock.now();
        let leeway = chrono::Duration::from_std(self.leeway).unwrap_or_default();
        let exp = time_claim(claims, "exp")?
            .ok_or_else(|| OAuthError::Claims("`exp` is missing".into()))?;
        if exp + leeway <= now {
            return Err(OAuthError::Expired(exp));
        }
        if let Some(nbf) = time_claim(claims, "nbf")? {
            if nbf - leeway > now {
                return Err(OAuthError::NotYetValid(nbf));
            }
        }
        Ok(())
    }

    fn check_audience(&self, claims: &Map<String, Value>) -> Result<(), OAuthError> {
        let named = |v: &Value| v.as_str() == Some(self.resource.as_str());
        let ok = match claims.get("aud") {
            Some(Value::Array(all)) => all.iter().any(named),
            Some(one) => named(one),
            None => false,
        };
        match ok {
            true => Ok(()),
            false => Err(OAuthError::Audience {
                resource: self.resource.clone(),
            }),
        }
    }
}

fn time_claim(
    claims: &Map<String, Value>,
    name: &str,
) -> Result<Option<DateTime<Utc>>, OAuthError> {
    let Some(value) = claims.get(name) else {
        return Ok(None);
    };
    value
        .as_i64()
        .or_else(|| value.as_f64().map(|f| f as i64))
        .and_then(|s| DateTime::from_timestamp(s, 0))
        .map(Some)
        .ok_or_else(|| OAuthError::Claims(format!("`{name}` is not a time")))
}

/// The token's scopes: `scope` (space-separated, RFC 9068) or `scp` (a
/// list or a string, as some identity providers write it).
fn check_scope(config: &IssuerConfig, claims: &Map<String, Value>) -> Result<(), OAuthError> {
    let mut granted: Vec<&str> = Vec::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(s)) => granted.extend(s.split_whitespace()),
            Some(Value::Array(all)) => granted.extend(all.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    match granted.contains(&config.scope.as_str()) {
        true => Ok(()),
        false => Err(OAuthError::Scope {
            required: config.scope.clone(),
        }),
    }
}

/// The caller, from the claims the issuer's configuration names.
fn caller(config: &IssuerConfig, claims: &Map<String, Value>) -> Result<Claims, OAuthError> {
    let text = |name: &str| -> Option<String> {
        claims
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let required = |name: &str| {
        text(name).ok_or_else(|| OAuthError::Claims(format!("`{name}` is missing or empty")))
    };
    let org = match &config.organisation {
        Some(org) => org.clone(),
        None => required(&config.claims.org)?,
    };
    let exp = time_claim(claims, "exp")?.map_or(0, |t| t.timestamp());
    Ok(Claims {
        org,
        sub: required(&config.claims.user)?,
        agent: required(&config.claims.agent)?,
        cache_scope: text(&config.claims.cache_scope),
        exp,
    })
}
