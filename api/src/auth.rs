//! Who is calling: every `/v1` request carries `Authorization: Bearer
//! <token>`; the token's SHA-256 is looked up and the request acts as the
//! token's team. Tokens are made here (shown once, stored only as a hash)
//! and never logged — a request's token is read from its header and
//! dropped after the lookup.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use dragnet_store::{Db, Team, TokenInfo};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::AppState;

/// What every token's text starts with (so a leaked one is recognisable).
pub const TOKEN_PREFIX: &str = "dnt_";

/// The caller of a request: a team, through one of its tokens (by id).
#[derive(Debug, Clone)]
pub struct Caller(pub Team, pub String);

impl Caller {
    pub fn team_id(&self) -> &str {
        &self.0.team_id
    }

    /// Who a run this caller starts was started by: its token's id, never
    /// the token.
    pub fn started_by(&self) -> String {
        format!("token:{}", self.1)
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .ok_or(ApiError::MissingToken)?;
        let token = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or(ApiError::MissingToken)?;
        match state
            .db()
            .teams()
            .caller_of_token(&token_hash(token))
            .await?
        {
            Some((team, token_id)) => Ok(Caller(team, token_id)),
            None => Err(ApiError::BadToken),
        }
    }
}

/// The hex SHA-256 of a token's text: what the store keeps.
pub fn token_hash(token: &str) -> String {
    dragnet_core::hex::lower(&Sha256::digest(token.as_bytes()))
}

/// `n` random bytes as hex.
fn random_hex(n: usize) -> String {
    let bytes: Vec<u8> = (0..n).map(|_| rand::random::<u8>()).collect();
    dragnet_core::hex::lower(&bytes)
}

/// A new team id.
pub fn new_team_id() -> String {
    format!("team_{}", random_hex(8))
}

/// A token just made: its text is shown once.
pub struct NewToken {
    pub info: TokenInfo,
    pub token: String,
}

/// Makes a token for team `team` and stores its hash.
pub async fn create_token(
    db: &Db,
    team: &str,
    now: DateTime<Utc>,
) -> dragnet_store::Result<NewToken> {
    let secret: [u8; 32] = rand::random();
    let token = format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret)
    );
    let token_id = format!("tok_{}", random_hex(6));
    let info = db
        .teams()
        .create_token(&token_id, team, &token_hash(&token), now)
        .await?;
    Ok(NewToken { info, token })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_stored_as_a_stable_hash_only() {
        let h = token_hash("dnt_abc");
        assert_eq!(h.len(), 64);
        assert_eq!(h, token_hash("dnt_abc"));
        assert_ne!(h, token_hash("dnt_abd"));
        assert!(!h.contains("abc"));
    }
}
