//! A compact JWS (a JWT as callers present it) taken apart: the three
//! base64url parts `header.payload.signature`, the header's `alg` (and
//! `kid`), the bytes the signature covers, and the payload and signature
//! decoded when a check asks for them. What a token means is its
//! checker's (`token` for the operator's HS256 tokens, `oauth::verify`
//! for an issuer's); this module only reads its shape, and never checks
//! a signature.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

/// Why a token is not a compact JWS. Each checker says so in its own
/// words (`TokenError::Malformed`, `OAuthError::Malformed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwsError {
    /// Not exactly three dot-separated parts.
    Parts,
    /// A part that is not unpadded base64url.
    Base64,
    /// A header that is not a JSON object with a string `alg` (and, when
    /// present, a string `kid`).
    Header,
}

/// The header's algorithm. Other members are not read here: a checker
/// that uses the key id reads it apart (`Jws::kid`), so one that does not
/// never refuses a token for it.
#[derive(Deserialize)]
struct Alg {
    alg: String,
}

/// The header's key id, when one is named.
#[derive(Deserialize)]
struct KeyId {
    #[serde(default)]
    kid: Option<String>,
}

/// A compact JWS split into its parts, its header decoded.
#[derive(Debug)]
pub struct Jws<'t> {
    /// The algorithm the header names.
    pub alg: String,
    /// The header's JSON.
    header: Vec<u8>,
    /// `header.payload` as presented: what the signature covers.
    signed: &'t str,
    payload: &'t str,
    signature: &'t str,
}

impl<'t> Jws<'t> {
    /// Splits `token` (already trimmed) into exactly three parts and
    /// decodes its header.
    pub fn split(token: &'t str) -> Result<Jws<'t>, JwsError> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwsError::Parts);
        };
        let signed = &token[..header.len() + 1 + payload.len()];
        let header = decode(header)?;
        let Alg { alg } = serde_json::from_slice(&header).map_err(|_| JwsError::Header)?;
        Ok(Jws {
            alg,
            header,
            signed,
            payload,
            signature,
        })
    }

    /// The key id the header names; a `kid` that is not a string is a
    /// malformed header.
    pub fn kid(&self) -> Result<Option<String>, JwsError> {
        serde_json::from_slice::<KeyId>(&self.header)
            .map(|k| k.kid)
            .map_err(|_| JwsError::Header)
    }

    /// What the signature covers: `header.payload` as presented.
    pub fn signing_input(&self) -> &'t [u8] {
        self.signed.as_bytes()
    }

    /// The payload's bytes.
    pub fn payload(&self) -> Result<Vec<u8>, JwsError> {
        decode(self.payload)
    }

    /// The signature's bytes.
    pub fn signature(&self) -> Result<Vec<u8>, JwsError> {
        decode(self.signature)
    }
}

/// The `alg` the first part of `token` names, if it is a base64url JSON
/// object with a string `alg`; the rest of the token is not looked at.
/// This only routes a token to its checker, which then reads it whole
/// (`Jws::split`); unlike that, a repeated header member reads as its
/// last value here.
pub fn peek_alg(token: &str) -> Option<String> {
    let header = token.trim().split('.').next()?;
    let value: Value = serde_json::from_slice(&decode(header).ok()?).ok()?;
    value["alg"].as_str().map(String::from)
}

fn decode(part: &str) -> Result<Vec<u8>, JwsError> {
    URL_SAFE_NO_PAD.decode(part).map_err(|_| JwsError::Base64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> String {
        URL_SAFE_NO_PAD.encode(text)
    }

    #[test]
    fn a_compact_jws_splits_into_its_header_payload_and_signature() {
        let token = format!(
            "{}.{}.{}",
            b64(r#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#),
            b64(r#"{"sub":"ada"}"#),
            b64("sig")
        );
        let jws = Jws::split(&token).unwrap();
        assert_eq!(jws.alg, "RS256");
        assert_eq!(jws.kid(), Ok(Some("k1".to_string())));
        assert_eq!(jws.payload().unwrap(), br#"{"sub":"ada"}"#);
        assert_eq!(jws.signature().unwrap(), b"sig");
        let dot = token.rfind('.').unwrap();
        assert_eq!(jws.signing_input(), &token.as_bytes()[..dot]);
        assert_eq!(peek_alg(&format!("  {token}\n")).as_deref(), Some("RS256"));
    }

    #[test]
    fn too_few_or_too_many_parts_are_refused() {
        let header = b64(r#"{"alg":"HS256"}"#);
        for token in [
            String::new(),
            header.clone(),
            format!("{header}.e30"),
            format!("{header}.e30.c2ln.c2ln"),
            format!("{header}.e30.c2ln."),
        ] {
            assert_eq!(Jws::split(&token).unwrap_err(), JwsError::Parts, "{token}");
        }
        // The routing peek reads the header alone, however many parts.
        assert_eq!(peek_alg(&header).as_deref(), Some("HS256"));
        assert_eq!(
            peek_alg(&format!("{header}.e30.c2ln.c2ln")).as_deref(),
            Some("HS256")
        );
    }

    #[test]
    fn bad_base64_is_refused_where_it_is_read() {
        let header = b64(r#"{"alg":"HS256"}"#);
        for bad in ["!!", "e30=", "a"] {
            let token = format!("{bad}.e30.c2ln");
            assert_eq!(Jws::split(&token).unwrap_err(), JwsError::Base64, "{bad}");
            assert_eq!(peek_alg(&token), None, "{bad}");
        }
        // Payload and signature are decoded only when asked for.
        let jws = format!("{header}.!!.c2l+");
        let jws = Jws::split(&jws).unwrap();
        assert_eq!(jws.payload(), Err(JwsError::Base64));
        assert_eq!(jws.signature(), Err(JwsError::Base64));
    }

    #[test]
    fn a_header_that_is_not_json_or_names_no_alg_is_refused() {
        for header in [
            "not json",
            r#"["alg","HS256"]"#,
            r#"{"typ":"JWT"}"#,
            r#"{"alg":256}"#,
            r#"{"alg":null}"#,
            r#"{"alg":"HS256","alg":"none"}"#,
        ] {
            let token = format!("{}.e30.c2ln", b64(header));
            assert_eq!(
                Jws::split(&token).unwrap_err(),
                JwsError::Header,
                "{header}"
            );
        }
        for header in ["not json", r#"{"typ":"JWT"}"#, r#"{"alg":256}"#] {
            assert_eq!(peek_alg(&format!("{}.e30.c2ln", b64(header))), None);
        }
        // A repeated member reads as its last value when only peeking.
        let twice = format!("{}.e30.c2ln", b64(r#"{"alg":"none","alg":"HS256"}"#));
        assert_eq!(peek_alg(&twice).as_deref(), Some("HS256"));
    }

    #[test]
    fn a_key_id_is_read_only_as_a_string() {
        let with = |header: &str| format!("{}.e30.c2ln", b64(header));
        let none = with(r#"{"alg":"ES256"}"#);
        assert_eq!(Jws::split(&none).unwrap().kid(), Ok(None));
        let null = with(r#"{"alg":"ES256","kid":null}"#);
        assert_eq!(Jws::split(&null).unwrap().kid(), Ok(None));
        // A number or a repeated key id is no key id, but the header still
        // splits: a checker that ignores key ids (HS256) reads it as before.
        for header in [
            r#"{"alg":"ES256","kid":7}"#,
            r#"{"alg":"ES256","kid":"a","kid":"b"}"#,
        ] {
            let token = with(header);
            let jws = Jws::split(&token).unwrap();
            assert_eq!(jws.alg, "ES256");
            assert_eq!(jws.kid(), Err(JwsError::Header), "{header}");
        }
    }
}
