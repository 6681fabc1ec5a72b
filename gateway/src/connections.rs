//! Connected apps (SPEC §7): a caller's own credentials for an `app`
//! provider, given once with `connect_toolkit` and used for that
//! provider's calls from then on. They belong to the user — or to the
//! tenant the token names — within the organisation, and are kept sealed:
//! AES-256-GCM under a key from the configuration, with a fresh nonce per
//! write and the owner and provider bound in as associated data, so a
//! sealed value copied to another user's row does not open. They are kept
//! through dragnet-core's `ConnectionStore` port (a store implements it).
//! Nothing here logs a credential; they travel as `Secret`.

use dragnet_core::secret::Secret;
use dragnet_core::ConnectionOwner;
use dragnet_http::SealError;

use crate::token::Claims;

/// Whose the connections of a caller with `claims` are: the tenant when
/// the token names one, else the user.
pub fn owner_of(claims: &Claims) -> ConnectionOwner {
    let owner = match &claims.cache_scope {
        Some(tenant) if !tenant.trim().is_empty() => format!("tenant:{tenant}"),
        _ => format!("user:{}", claims.sub),
    };
    ConnectionOwner {
        org: claims.org.clone(),
        owner,
    }
}

/// The shortest connection key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = dragnet_http::seal::MIN_KEY_BYTES;

/// Seals and opens connection credentials: the sealer of
/// `dragnet_http::seal` with the owner and provider bound in.
#[derive(Debug)]
pub struct Sealer(dragnet_http::Sealer);

impl Sealer {
    /// A sealer whose AES-256 key is the SHA-256 of `secret` (at least 32
    /// bytes long).
    pub fn new(secret: &[u8]) -> Result<Sealer, SealError> {
        dragnet_http::Sealer::new(secret).map(Sealer)
    }

    /// The nonce, then the ciphertext and its tag.
    pub fn seal(
        &self,
        owner: &ConnectionOwner,
        provider: &str,
        secret: &Secret,
    ) -> Result<Vec<u8>, SealError> {
        self.0.seal(&aad(owner, provider), secret)
    }

    /// The credentials `sealed` holds for `owner` and `provider`; `None`
    /// when it was sealed for anyone or anything else, or altered.
    pub fn open(&self, owner: &ConnectionOwner, provider: &str, sealed: &[u8]) -> Option<Secret> {
        self.0.open(&aad(owner, provider), sealed)
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
