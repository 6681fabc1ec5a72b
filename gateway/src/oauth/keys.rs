//! An issuer's signing keys: found through its metadata (RFC 8414, else
//! OpenID Connect discovery) unless the configuration names the JWKS URL,
//! fetched on first use, cached, and fetched again when a token names a
//! key the cache does not hold (the issuer rotated its keys). A refetch
//! happens at most once per [`REFETCH_AFTER`], so tokens naming made-up
//! keys cannot make the gateway hammer the issuer.

use std::sync::Arc;
use std::time::Duration;

use dragnet_core::clock::Clock;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::jwk::{parse_key_set, Alg, PublicKey};
use super::OAuthError;

/// The least time between two fetches of an issuer's keys.
pub const REFETCH_AFTER: Duration = Duration::from_secs(10);
/// The most a metadata or key-set document may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest metadata or key-set document read.
const MAX_DOCUMENT: usize = 1 << 20;

/// The keys of one issuer.
pub struct IssuerKeys {
    issuer: String,
    configured_jwks: Option<String>,
    http: reqwest::Client,
    clock: Arc<dyn Clock>,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    jwks_uri: Option<String>,
    keys: Vec<PublicKey>,
    fetched: Option<Instant>,
}

impl IssuerKeys {
    pub fn new(
        issuer: String,
        jwks_uri: Option<String>,
        http: reqwest::Client,
        clock: Arc<dyn Clock>,
    ) -> IssuerKeys {
        IssuerKeys {
            issuer,
            configured_jwks: jwks_uri,
            http,
            clock,
            cache: Mutex::default(),
        }
    }

    /// The key `kid` names for `alg` (without a `kid`, the one key of the
    /// right type, when there is exactly one).
    pub async fn key(&self, kid: Option<&str>, alg: Alg) -> Result<PublicKey, OAuthError> {
        let mut cache = self.cache.lock().await;
        if let Some(key) = pick(&cache.keys, kid, alg) {
            return Ok(key);
        }
        let now = self.clock.instant();
        let due = cache
            .fetched
            .is_none_or(|at| now.saturating_duration_since(at) >= REFETCH_AFTER);
        if due {
            cache.fetched = Some(now);
            let uri = match (&self.configured_jwks, &cache.jwks_uri) {
                (Some(uri), _) | (None, Some(uri)) => uri.clone(),
                (None, None) => {
                    let uri = self.discover().await?;
                    cache.jwks_uri = Some(uri.clone());
                    uri
                }
            };
            let body = self.get(&uri).await?;
            cache.keys = parse_key_set(&body).map_err(|reason| OAuthError::Keys {
                issuer: self.issuer.clone(),
                reason,
            })?;
            if let Some(key) = pick(&cache.keys, kid, alg) {
                return Ok(key);
            }
        }
        Err(OAuthError::UnknownKey {
            kid: kid.map(|k| k.chars().take(64).collect()),
        })
    }

    /// The `jwks_uri` of the issuer's metadata, whose `issuer` must be the
    /// configured one exactly (RFC 8414 §3.3).
    async fn discover(&self) -> Result<String, OAuthError> {
        let base = self.issuer.trim_end_matches('/');
        let mut last = String::new();
        for path in [
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ] {
            let body = match self.get(&format!("{base}{path}")).await {
                Ok(body) => body,
                Err(error) => {
                    last = error.to_string();
                    continue;
                }
            };
            let meta: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            if meta["issuer"].as_str() != Some(self.issuer.as_str()) {
                return Err(self.keys_error(format!(
                    "its metadata at {path} names issuer {} instead",
                    meta["issuer"]
                )));
            }
            return meta["jwks_uri"]
                .as_str()
                .map(String::from)
                .ok_or_else(|| self.keys_error(format!("its metadata at {path} has no jwks_uri")));
        }
        Err(self.keys_error(format!("no metadata found: {last}")))
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, OAuthError> {
        let failed = |reason: String| self.keys_error(format!("GET {url}: {reason}"));
        let mut response = self
            .http
            .get(url)
            .timeout(FETCH_TIMEOUT)
            .send()
            .await
            .map_err(|e| failed(e.without_url().to_string()))?;
        if !response.status().is_success() {
            return Err(failed(format!("status {}", response.status())));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| failed(e.without_url().to_string()))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT {
                return Err(failed(format!("larger than {MAX_DOCUMENT} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn keys_error(&self, reason: String) -> OAuthError {
        OAuthError::Keys {
            issuer: self.issuer.clone(),
            reason,
        }
    }
}

fn pick(keys: &[PublicKey], kid: Option<&str>, alg: Alg) -> Option<PublicKey> {
    match kid {
        Some(kid) => keys
            .iter()
            .find(|k| k.kid.as_deref() == Some(kid) && k.fits(alg)),
        None => {
            let mut fitting = keys.iter().filter(|k| k.fits(alg));
            let only = fitting.next();
            only.filter(|_| fitting.next().is_none())
        }
    }
    .cloned()
}
