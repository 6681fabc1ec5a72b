//! The gateway's token readers on arbitrary text (issue 24's OAuth and the
//! operator's HS256 tokens). Three inputs from one:
//! - the text as a token: `jws::peek_alg`, `Jws::split` and its parts,
//!   `TokenKey::verify` (the signature fails, so only the shape is read);
//!   a split token's signing input must be the token's first two parts;
//! - the text as the claims of a token signed with the fuzzer's own HS256
//!   key, so `TokenKey::verify` reads the claims past the signature;
//! - the text as OAuth claims whose signature was checked
//!   (`Verifier::check_signed_claims`: times, audience, scope, caller) and
//!   as a JWK set (`jwk::parse_key_set`).
//!
//! Errors are fine outcomes; a panic is not, and no error may repeat the
//! token.
#![no_main]
#![forbid(unsafe_code)]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::{TimeZone, Utc};
use dragnet_core::clock::SystemClock;
use dragnet_gateway::jws::{peek_alg, Jws};
use dragnet_gateway::oauth::{jwk, ClaimNames, IssuerConfig, ResourceServerConfig, Verifier};
use dragnet_gateway::token::TokenKey;
use hmac::{Hmac, Mac};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use sha2::Sha256;

const SECRET: &[u8] = b"fuzz-secret-fuzz-secret-fuzz-32b";

fn key() -> &'static TokenKey {
    static KEY: OnceLock<TokenKey> = OnceLock::new();
    KEY.get_or_init(|| TokenKey::new(SECRET).expect("a 32-byte secret"))
}

fn issuer() -> IssuerConfig {
    IssuerConfig {
        issuer: "https://issuer.example".into(),
        jwks_uri: Some("http://127.0.0.1:9/jwks".into()),
        scope: "mcp:tools".into(),
        claims: ClaimNames::default(),
        organisation: None,
    }
}

fn verifier() -> &'static Verifier {
    static VERIFIER: OnceLock<Verifier> = OnceLock::new();
    VERIFIER.get_or_init(|| {
        let config = ResourceServerConfig {
            resource: "https://mcp.example/mcp".into(),
            issuers: vec![issuer()],
            leeway: Duration::from_secs(60),
        };
        Verifier::new(&config, Arc::new(SystemClock))
    })
}

/// An HS256 token over `payload` signed with [`SECRET`].
fn signed(payload: &[u8]) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let body = URL_SAFE_NO_PAD.encode(payload);
    let signing = format!("{header}.{body}");
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET).expect("any key length");
    mac.update(signing.as_bytes());
    let sig = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{signing}.{sig}")
}

fuzz_target!(|data: &[u8]| {
    let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let text = String::from_utf8_lossy(data);
    let token = text.trim();
    let _ = peek_alg(&text);
    if let Ok(jws) = Jws::split(token) {
        let input = jws.signing_input();
        assert!(token.as_bytes().starts_with(input));
        assert_eq!(token.as_bytes().get(input.len()), Some(&b'.'));
        let _ = (jws.kid(), jws.payload(), jws.signature());
    }
    if let Err(e) = key().verify(&text, now) {
        // Longer than any of the errors' own words, so that a token made
        // of those words is not taken for one repeated.
        if token.len() >= 80 {
            assert!(!e.to_string().contains(token), "an error repeats the token");
        }
    }
    let _ = key().verify(&signed(data), now);
    if let Ok(claims) = serde_json::from_slice::<Map<String, Value>>(data) {
        let _ = verifier().check_signed_claims(&issuer(), &claims);
    }
    let _ = jwk::parse_key_set(data);
});
