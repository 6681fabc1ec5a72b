//! Callers' tokens over HTTP: HS256-signed JWTs whose claims name the
//! organisation, the user (`sub`), the agent, an optional tenant
//! `cache_scope`, and the expiry (`exp`, seconds since the epoch). A token
//! is accepted only when its header says HS256 (never `none`), its
//! signature checks under the configured secret (in constant time), it has
//! not expired, and every required claim is a non-empty string. Why a
//! token is refused is said in one line that never repeats the token.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::jws::{Jws, JwsError};

type HmacSha256 = Hmac<Sha256>;

/// Who calls, as a verified token says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub org: String,
    /// The user.
    pub sub: String,
    pub agent: String,
    /// A tenant-wide scope for runtime-credential cache entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// Expiry, seconds since the epoch.
    pub exp: i64,
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("no bearer token")]
    Missing,
    #[error("the token is not a JWT (three base64url parts)")]
    Malformed,
    #[error("the token's algorithm is `{0}`; only HS256 is accepted")]
    Algorithm(String),
    #[error("the token's signature does not check")]
    Signature,
    #[error("the token expired at {0}")]
    Expired(DateTime<Utc>),
    #[error("the token's claims are incomplete: {0}")]
    Claims(String),
}

/// A secret to sign and check tokens with.
pub struct TokenKey(HmacSha256);

impl TokenKey {
    /// The fewest bytes a secret may have.
    pub const MIN_SECRET: usize = 32;

    /// A key from the configured secret; at least `MIN_SECRET` bytes.
    pub fn new(secret: &[u8]) -> Result<TokenKey, crate::Error> {
        let short = crate::Error::ShortTokenSecret {
            bytes: secret.len(),
            min: TokenKey::MIN_SECRET,
        };
        if secret.len() < TokenKey::MIN_SECRET {
            return Err(short);
        }
        // HMAC takes a key of any length: only the check above refuses one.
        HmacSha256::new_from_slice(secret)
            .map(TokenKey)
            .map_err(|_| short)
    }

    fn mac(&self) -> HmacSha256 {
        self.0.clone()
    }

    /// Signs `claims` (for operators minting tokens, and tests).
    pub fn mint(&self, claims: &Claims) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap_or_default());
        let signing = format!("{header}.{body}");
        let mut mac = self.mac();
        mac.update(signing.as_bytes());
        let sig = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{signing}.{sig}")
    }

    /// The claims of `token` when it is valid at `now`.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, TokenError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(TokenError::Missing);
        }
        let malformed = |_: JwsError| TokenError::Malformed;
        let jws = Jws::split(token).map_err(malformed)?;
        let alg = &jws.alg;
        if alg != "HS256" {
            return Err(TokenError::Algorithm(alg.chars().take(16).collect()));
        }
        let mut mac = self.mac();
        mac.update(jws.signing_input());
        mac.verify_slice(&jws.signature().map_err(malformed)?)
            .map_err(|_| TokenError::Signature)?;
        let claims: Claims = serde_json::from_slice(&jws.payload().map_err(malformed)?)
            .map_err(|e| TokenError::Claims(e.to_string()))?;
        for (name, value) in [
            ("org", &claims.org),
            ("sub", &claims.sub),
            ("agent", &claims.agent),
        ] {
            if value.trim().is_empty() {
                return Err(TokenError::Claims(format!("`{name}` is empty")));
            }
        }
        let expires = DateTime::from_timestamp(claims.exp, 0)
            .ok_or_else(|| TokenError::Claims("`exp` is out of range".into()))?;
        if expires <= now {
            return Err(TokenError::Expired(expires));
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TokenKey {
        TokenKey::new(b"0123456789abcdef0123456789abcdef").unwrap()
    }

    fn claims(exp: i64) -> Claims {
        Claims {
            org: "acme".into(),
            sub: "ada".into(),
            agent: "support".into(),
            cache_scope: None,
            exp,
        }
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    #[test]
    fn a_minted_token_verifies_and_nothing_else_does() {
        let good = key().mint(&claims(1_790_000_600));
        assert_eq!(key().verify(&good, now()), Ok(claims(1_790_000_600)));
        // Expired.
        let old = key().mint(&claims(1_789_999_999));
        assert!(matches!(
            key().verify(&old, now()),
            Err(TokenError::Expired(_))
        ));
        // Another secret.
        let other = TokenKey::new(b"another secret, also 32 bytes long!!").unwrap();
        assert_eq!(other.verify(&good, now()), Err(TokenError::Signature));
        // A changed claim under the old signature.
        let parts: Vec<&str> = good.split('.').collect();
        let mut forged = claims(1_790_000_600);
        forged.org = "bravo".into();
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap());
        let tampered = format!("{}.{body}.{}", parts[0], parts[2]);
        assert_eq!(key().verify(&tampered, now()), Err(TokenError::Signature));
        // alg: none, with or without a signature.
        let none = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
        let unsigned = format!("{none}.{}.", parts[1]);
        assert!(matches!(
            key().verify(&unsigned, now()),
            Err(TokenError::Algorithm(_))
        ));
        for junk in ["", "abc", "a.b", "a.b.c.d", "!!.!!.!!"] {
            assert!(key().verify(junk, now()).is_err(), "{junk}");
        }
        // An empty required claim.
        let mut empty = claims(1_790_000_600);
        empty.agent = " ".into();
        assert!(matches!(
            key().verify(&key().mint(&empty), now()),
            Err(TokenError::Claims(_))
        ));
        // Errors never repeat the token.
        let e = other.verify(&good, now()).unwrap_err().to_string();
        assert!(!e.contains(parts[2]));
        assert!(matches!(
            TokenKey::new(b"short"),
            Err(crate::Error::ShortTokenSecret { bytes: 5, min: 32 })
        ));
    }
}
