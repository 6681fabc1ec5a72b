//! Secrets at rest: AES-256-GCM under a key the operator provides, with a
//! fresh nonce per seal and the caller's context (whose the value is, and
//! under what name) bound in as associated data, so a sealed value copied
//! to another owner's row does not open. Connected-app credentials (the
//! gateway) and teams' secrets (the server) are both sealed here.

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

use dragnet_core::secret::Secret;

/// The shortest sealing key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 32;

/// Why a sealer could not be made or a value sealed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("the key has {got} bytes; give at least {MIN_KEY_BYTES}")]
    ShortKey { got: usize },
    #[error("the key could not be made")]
    BadKey,
    #[error("no random nonce could be drawn")]
    NoNonce,
    #[error("sealing failed")]
    Sealing,
}

/// Seals and opens secrets under one key.
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
    /// A sealer whose AES-256 key is the SHA-256 of `key` (at least
    /// `MIN_KEY_BYTES` long).
    pub fn new(key: &[u8]) -> Result<Sealer, SealError> {
        if key.len() < MIN_KEY_BYTES {
            return Err(SealError::ShortKey { got: key.len() });
        }
        let digest = Sha256::digest(key);
        let unbound = UnboundKey::new(&AES_256_GCM, &digest).map_err(|_| SealError::BadKey)?;
        Ok(Sealer {
            key: LessSafeKey::new(unbound),
            rng: SystemRandom::new(),
        })
    }

    /// The nonce, then the ciphertext and its tag; `context` is bound in.
    pub fn seal(&self, context: &[u8], secret: &Secret) -> Result<Vec<u8>, SealError> {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce).map_err(|_| SealError::NoNonce)?;
        let mut sealed = secret.expose().as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context),
                &mut sealed,
            )
            .map_err(|_| SealError::Sealing)?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// The secret `sealed` holds; `None` when it was sealed under another
    /// key or `context`, or altered.
    pub fn open(&self, context: &[u8], sealed: &[u8]) -> Option<Secret> {
        if sealed.len() < NONCE_LEN {
            return None;
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut body = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(context), &mut body)
            .ok()?;
        String::from_utf8(plain.to_vec()).ok().map(Secret::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_under_its_key_and_context() {
        let sealer = Sealer::new(b"a sealing key of at least thirty-two bytes").unwrap();
        let secret = Secret::new("value-123456");
        let sealed = sealer.seal(b"team-a\0TOKEN", &secret).unwrap();
        assert!(!sealed.windows(b"value".len()).any(|w| w == b"value"));
        let opened = sealer.open(b"team-a\0TOKEN", &sealed).unwrap();
        assert_eq!(opened.expose(), "value-123456");
        assert!(sealer.open(b"team-b\0TOKEN", &sealed).is_none());
        assert!(sealer.open(b"team-a\0OTHER", &sealed).is_none());
        assert!(sealer.open(b"team-a\0TOKEN", &sealed[..5]).is_none());
        let mut altered = sealed.clone();
        let last = altered.len() - 1;
        altered[last] ^= 1;
        assert!(sealer.open(b"team-a\0TOKEN", &altered).is_none());
        assert_ne!(sealer.seal(b"team-a\0TOKEN", &secret).unwrap(), sealed);
        let other = Sealer::new(b"another sealing key of thirty-two bytes!!").unwrap();
        assert!(other.open(b"team-a\0TOKEN", &sealed).is_none());
        assert_eq!(
            Sealer::new(b"short").unwrap_err(),
            SealError::ShortKey { got: 5 }
        );
    }
}
