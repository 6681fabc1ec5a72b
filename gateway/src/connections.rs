//! Connected apps (SPEC §7): a caller's own credentials for an `app`
//! provider, given once with `connect_toolkit` and used for that
//! provider's calls from then on. They belong to the user — or to the
//! tenant the token names — within the organisation, and are kept sealed:
//! AES-256-GCM under a key from the configuration, with a fresh nonce per
//! write and the owner and provider bound in as associated data, so a
//! sealed value copied to another user's row does not open. The
//! `ConnectionStore` port is this crate's; a store implements it. Nothing
//! here logs a credential; they travel as `Secret`.

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

use dragnet_steps::http::Secret;

use crate::results::StoreFuture;
use crate::token::Claims;

/// Whose a connection is: the organisation, and `user:<sub>` or
/// `tenant:<cache_scope>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionOwner {
    pub org: String,
    pub owner: String,
}

impl ConnectionOwner {
    /// The tenant when the token names one, else the user.
    pub fn of(claims: &Claims) -> ConnectionOwner {
        let owner = match &claims.cache_scope {
            Some(tenant) if !tenant.trim().is_empty() => format!("tenant:{tenant}"),
            _ => format!("user:{}", claims.sub),
        };
        ConnectionOwner {
            org: claims.org.clone(),
            owner,
        }
    }
}

/// Keeps sealed connections.
pub trait ConnectionStore: Send + Sync {
    /// Stores (or replaces) `owner`'s sealed credentials for `provider`.
    fn put_sealed<'a>(
        &'a self,
        owner: &'a ConnectionOwner,
        provider: &'a str,
        sealed: &'a [u8],
    ) -> StoreFuture<'a, ()>;
    /// `owner`'s sealed credentials for `provider`, if any.
    fn get_sealed<'a>(
        &'a self,
        owner: &'a ConnectionOwner,
        provider: &'a str,
    ) -> StoreFuture<'a, Option<Vec<u8>>>;
}

/// The shortest connection key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 32;

/// Seals and opens connection credentials.
pub struct Sealer {
    key: LessSafeKey,
    rng: SystemRandom,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

impl Sealer {
    /// A sealer whose AES-256 key is the SHA-256 of `secret` (at least 32
    /// bytes long).
    pub fn new(secret: &[u8]) -> Result<Sealer, String> {
        if secret.len() < MIN_KEY_BYTES {
            return Err(format!(
                "the connection key has {} bytes; give at least {MIN_KEY_BYTES}",
                secret.len()
            ));
        }
        let digest = Sha256::digest(secret);
        let unbound = UnboundKey::new(&AES_256_GCM, &digest)
            .map_err(|_| "the connection key could not be made".to_string())?;
        Ok(Sealer {
            key: LessSafeKey::new(unbound),
            rng: SystemRandom::new(),
        })
    }

    /// The nonce, then the ciphertext and its tag.
    pub fn seal(
        &self,
        owner: &ConnectionOwner,
        provider: &str,
        secret: &Secret,
    ) -> Result<Vec<u8>, String> {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng
            .fill(&mut nonce)
            .map_err(|_| "no random nonce".to_string())?;
        let mut sealed = secret.expose().as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad(owner, provider)),
                &mut sealed,
            )
            .map_err(|_| "sealing failed".to_string())?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// The credentials `sealed` holds for `owner` and `provider`; `None`
    /// when it was sealed for anyone or anything else, or altered.
    pub fn open(&self, owner: &ConnectionOwner, provider: &str, sealed: &[u8]) -> Option<Secret> {
        if sealed.len() < NONCE_LEN {
            return None;
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut body = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(aad(owner, provider)), &mut body)
            .ok()?;
        String::from_utf8(plain.to_vec()).ok().map(Secret::new)
    }
}

fn aad(owner: &ConnectionOwner, provider: &str) -> Vec<u8> {
    format!(
        "dragnet-connection\0{}\0{}\0{provider}",
        owner.org, owner.owner
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(user: &str) -> ConnectionOwner {
        ConnectionOwner {
            org: "acme".into(),
            owner: format!("user:{user}"),
        }
    }

    #[test]
    fn a_sealed_credential_opens_only_for_its_owner_and_provider() {
        let sealer = Sealer::new(b"a connection key of at least thirty-two bytes").unwrap();
        let secret = Secret::new("mail-token-123456");
        let sealed = sealer.seal(&owner("ann"), "mail", &secret).unwrap();
        assert!(!sealed
            .windows(b"mail-token".len())
            .any(|w| w == b"mail-token"));
        let opened = sealer.open(&owner("ann"), "mail", &sealed).unwrap();
        assert_eq!(opened.expose(), "mail-token-123456");
        assert!(sealer.open(&owner("bob"), "mail", &sealed).is_none());
        assert!(sealer.open(&owner("ann"), "drive", &sealed).is_none());
        let mut altered = sealed.clone();
        let last = altered.len() - 1;
        altered[last] ^= 1;
        assert!(sealer.open(&owner("ann"), "mail", &altered).is_none());
        // Two seals of one value differ (a fresh nonce each).
        assert_ne!(sealer.seal(&owner("ann"), "mail", &secret).unwrap(), sealed);
        let other = Sealer::new(b"another connection key of thirty-two bytes!").unwrap();
        assert!(other.open(&owner("ann"), "mail", &sealed).is_none());
        assert!(Sealer::new(b"short").is_err());
    }
}
