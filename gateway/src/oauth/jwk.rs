//! Public keys from a JSON Web Key Set (RFC 7517), checked with `ring`.
//!
//! Three signature algorithms are accepted, each only with the key type
//! it belongs to: RS256 with an RSA key, ES256 with a P-256 key, EdDSA with
//! an Ed25519 key. A token whose header names any other algorithm (`none`,
//! HS256, RS512…) is refused before a key is looked at, so a public key can
//! never serve as an HMAC secret.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde::Deserialize;

/// A signature algorithm this gateway accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alg {
    Rs256,
    Es256,
    EdDsa,
}

impl Alg {
    /// The algorithm a JOSE header names, when it is one accepted.
    pub fn parse(name: &str) -> Option<Alg> {
        match name {
            "RS256" => Some(Alg::Rs256),
            "ES256" => Some(Alg::Es256),
            "EdDSA" => Some(Alg::EdDsa),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Alg::Rs256 => "RS256",
            Alg::Es256 => "ES256",
            Alg::EdDsa => "EdDSA",
        }
    }
}

/// One verification key of an issuer.
#[derive(Debug, Clone)]
pub struct PublicKey {
    pub kid: Option<String>,
    material: Material,
}

#[derive(Debug, Clone)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The uncompressed point `04 || x || y`.
    P256(Vec<u8>),
    Ed25519(Vec<u8>),
}

/// A JWK as a key set lists it (only the members read here).
#[derive(Debug, Deserialize)]
struct Jwk {
    kty: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default, rename = "use")]
    use_: Option<String>,
    #[serde(default)]
    alg: Option<String>,
    #[serde(default)]
    crv: Option<String>,
    #[serde(default)]
    n: Option<String>,
    #[serde(default)]
    e: Option<String>,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    y: Option<String>,
}

#[derive(Debug, Deserialize)]
struct KeySetDoc {
    keys: Vec<serde_json::Value>,
}

/// The signing keys of a JWKS document: encryption keys, keys of other
/// types and malformed entries are skipped (an issuer may publish keys
/// this gateway has no use for). Fails only when the document itself is
/// not a key set.
pub fn parse_key_set(body: &[u8]) -> Result<Vec<PublicKey>, String> {
    let doc: KeySetDoc = serde_json::from_slice(body).map_err(|e| format!("not a JWK set: {e}"))?;
    Ok(doc
        .keys
        .into_iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k).ok())
        .filter_map(public_key)
        .collect())
}

fn public_key(jwk: Jwk) -> Option<PublicKey> {
    if jwk.use_.as_deref().is_some_and(|u| u != "sig") {
        return None;
    }
    let bytes = |v: &Option<String>| v.as_deref().and_then(|s| URL_SAFE_NO_PAD.decode(s).ok());
    let material = match (jwk.kty.as_str(), jwk.crv.as_deref()) {
        ("RSA", _) if matches!(jwk.alg.as_deref(), None | Some("RS256")) => Material::Rsa {
            n: bytes(&jwk.n)?,
            e: bytes(&jwk.e)?,
        },
        ("EC", Some("P-256")) if matches!(jwk.alg.as_deref(), None | Some("ES256")) => {
            let (x, y) = (bytes(&jwk.x)?, bytes(&jwk.y)?);
            if x.len() != 32 || y.len() != 32 {
                return None;
            }
            let mut point = vec![4u8];
            point.extend(x);
            point.extend(y);
            Material::P256(point)
        }
        ("OKP", Some("Ed25519")) if matches!(jwk.alg.as_deref(), None | Some("EdDSA")) => {
            Material::Ed25519(bytes(&jwk.x)?)
        }
        _ => return None,
    };
    Some(PublicKey {
        kid: jwk.kid,
        material,
    })
}

impl PublicKey {
    /// Whether this key is of the type `alg` signs with.
    pub fn fits(&self, alg: Alg) -> bool {
        matches!(
            (&self.material, alg),
            (Material::Rsa { .. }, Alg::Rs256)
                | (Material::P256(_), Alg::Es256)
                | (Material::Ed25519(_), Alg::EdDsa)
        )
    }

    /// Whether `signature` over `message` checks under this key with `alg`.
    pub fn verifies(&self, alg: Alg, message: &[u8], signature: &[u8]) -> bool {
        match (&self.material, alg) {
            (Material::Rsa { n, e }, Alg::Rs256) => RsaPublicKeyComponents { n, e }
                .verify(&signature::RSA_PKCS1_2048_8192_SHA256, message, signature)
                .is_ok(),
            (Material::P256(point), Alg::Es256) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Ed25519(x), Alg::EdDsa) => UnparsedPublicKey::new(&signature::ED25519, x)
                .verify(message, signature)
                .is_ok(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair};

    #[test]
    fn each_algorithm_checks_only_with_its_own_key_type() {
        let rng = SystemRandom::new();
        let ed = Ed25519KeyPair::from_pkcs8(Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref())
            .unwrap();
        let es_doc =
            EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                .unwrap();
        let es = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            es_doc.as_ref(),
            &rng,
        )
        .unwrap();
        let point = es.public_key().as_ref();
        let set = serde_json::json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": URL_SAFE_NO_PAD.encode(ed.public_key().as_ref())},
            {"kty": "EC", "crv": "P-256", "kid": "es", "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])},
            {"kty": "EC", "crv": "P-256", "kid": "enc", "use": "enc", "x": "AA", "y": "AA"},
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "broken"},
            "not an object",
        ]});
        let keys = parse_key_set(set.to_string().as_bytes()).unwrap();
        let kids: Vec<_> = keys.iter().map(|k| k.kid.as_deref().unwrap()).collect();
        assert_eq!(kids, ["ed", "es"], "only the usable signing keys");
        let message = b"header.payload";
        let ed_sig = ed.sign(message);
        let es_sig = es.sign(&rng, message).unwrap();
        assert!(keys[0].fits(Alg::EdDsa) && !keys[0].fits(Alg::Es256));
        assert!(keys[0].verifies(Alg::EdDsa, message, ed_sig.as_ref()));
        assert!(!keys[0].verifies(Alg::EdDsa, b"header.other", ed_sig.as_ref()));
        assert!(keys[1].verifies(Alg::Es256, message, es_sig.as_ref()));
        // A key never checks a signature of another algorithm.
        assert!(!keys[1].verifies(Alg::EdDsa, message, ed_sig.as_ref()));
        assert!(!keys[0].verifies(Alg::Rs256, message, ed_sig.as_ref()));
        for refused in ["none", "HS256", "RS512", "PS256", "rs256", ""] {
            assert_eq!(Alg::parse(refused), None, "{refused}");
        }
        assert!(parse_key_set(b"{\"not\": \"keys\"}").is_err());
    }
}
