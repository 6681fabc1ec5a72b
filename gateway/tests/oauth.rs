//! The gateway as an OAuth resource server, against a real authorization
//! server: `oidc-provider` from npm (pinned in .ci/node.sh), started by
//! each test with keys the test made, issuing JWT access tokens through
//! the client-credentials grant with a resource indicator. Tokens it would
//! never issue (expired, another audience, another key, `alg: none`, a
//! public key used as an HMAC secret) are signed by `tests/oauth/sign.mjs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use dragnet_core::clock::Clock;
use dragnet_gateway::oauth::keys::REFETCH_AFTER;
use dragnet_gateway::oauth::peer::{keys, signed, token_header, Issuer, SCOPE};
use dragnet_gateway::oauth::{
    ClaimNames, IssuerConfig, OAuthError, ResourceServerConfig, Verifier,
};
use serde_json::{json, Value};
use tokio::time::Instant;

/// A clock whose monotonic time the test moves.
struct TestClock(Mutex<Instant>);

impl Clock for TestClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn instant(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

fn verifier(resource: &str, issuer: &str, clock: Arc<TestClock>) -> Verifier {
    let config = ResourceServerConfig {
        resource: resource.into(),
        issuers: vec![IssuerConfig {
            issuer: issuer.into(),
            jwks_uri: None,
            scope: SCOPE.into(),
            claims: ClaimNames {
                user: "user".into(),
                ..ClaimNames::default()
            },
            organisation: None,
        }],
        leeway: Duration::from_secs(30),
    };
    Verifier::new(&config, clock)
}

fn clock() -> Arc<TestClock> {
    Arc::new(TestClock(Mutex::new(Instant::now())))
}

const RESOURCE: &str = "http://127.0.0.1:1/mcp";
const ELSEWHERE: &str = "http://127.0.0.1:2/mcp";

#[tokio::test]
async fn tokens_the_issuer_signs_for_this_resource_are_accepted_in_each_algorithm() {
    let keys = keys("all.json", &["k1:rsa", "e1:ec", "d1:ed"]);
    let issuer = Issuer::start(&keys, 0, &[RESOURCE]);
    let verifier = verifier(RESOURCE, &issuer.url, clock());
    for client in ["rs", "es", "ed"] {
        let token = issuer.token(client, RESOURCE, true).await;
        let alg = token_header(&token)["alg"].clone();
        let claims = verifier
            .verify(&token)
            .await
            .unwrap_or_else(|e| panic!("{client} ({alg}): {e}"));
        assert_eq!(
            (
                claims.org.as_str(),
                claims.sub.as_str(),
                claims.agent.as_str()
            ),
            ("acme", format!("user-of-{client}").as_str(), "support")
        );
        assert!(claims.exp > Utc::now().timestamp());
    }
}

#[tokio::test]
async fn forged_and_misdirected_tokens_are_refused() {
    let other_keys = keys("other.json", &["k1:rsa"]);
    let keys = keys("main.json", &["k1:rsa"]);
    let issuer = Issuer::start(&keys, 0, &[RESOURCE, ELSEWHERE]);
    let other = Issuer::start(&other_keys, 0, &[RESOURCE]);
    let verifier = verifier(RESOURCE, &issuer.url, clock());
    let good = issuer.token("rs", RESOURCE, true).await;
    assert!(verifier.verify(&good).await.is_ok());

    // A token the issuer made for another resource.
    let misdirected = issuer.token("rs", ELSEWHERE, true).await;
    assert!(matches!(
        verifier.verify(&misdirected).await,
        Err(OAuthError::Audience { .. })
    ));
    // A token of another issuer, for this resource.
    let foreign = other.token("rs", RESOURCE, true).await;
    assert!(matches!(
        verifier.verify(&foreign).await,
        Err(OAuthError::UnknownIssuer(_))
    ));
    // A token without the scope is valid but not enough.
    let unscoped = issuer.token("rs", RESOURCE, false).await;
    let e = verifier.verify(&unscoped).await.unwrap_err();
    assert!(
        matches!(e, OAuthError::Scope { .. }) && e.is_insufficient(),
        "{e}"
    );

    let now = Utc::now().timestamp();
    let claims = |iat: i64, exp: i64| {
        json!({"iss": issuer.url, "aud": RESOURCE, "iat": iat, "exp": exp, "scope": SCOPE,
               "org": "acme", "user": "mallory", "agent": "support"})
    };
    let rs = json!({"alg": "RS256", "kid": "k1", "typ": "at+jwt"});
    // Signed by the right key: accepted; expired past the leeway, or not yet valid: refused.
    assert!(verifier
        .verify(&signed(&keys, "k1", rs.clone(), claims(now, now + 60)))
        .await
        .is_ok());
    let expired = signed(&keys, "k1", rs.clone(), claims(now - 600, now - 120));
    assert!(matches!(
        verifier.verify(&expired).await,
        Err(OAuthError::Expired(_))
    ));
    let mut early = claims(now, now + 600);
    early["nbf"] = json!(now + 300);
    let early = signed(&keys, "k1", rs.clone(), early);
    assert!(matches!(
        verifier.verify(&early).await,
        Err(OAuthError::NotYetValid(_))
    ));
    // The right issuer and kid, signed by another key.
    let forged = signed(&other_keys, "k1", rs.clone(), claims(now, now + 60));
    assert_eq!(
        verifier.verify(&forged).await.unwrap_err(),
        OAuthError::Signature
    );
    // A genuine token with its claims changed.
    let parts: Vec<&str> = good.split('.').collect();
    let mut body = decode(parts[1]);
    body["user"] = json!("mallory");
    let tampered = format!("{}.{}.{}", parts[0], encode(&body), parts[2]);
    assert_eq!(
        verifier.verify(&tampered).await.unwrap_err(),
        OAuthError::Signature
    );
    // alg none, and the issuer's public key used as an HMAC secret.
    let none = signed(&keys, "k1", json!({"alg": "none"}), claims(now, now + 60));
    assert!(matches!(
        verifier.verify(&none).await,
        Err(OAuthError::Algorithm(_))
    ));
    let confused = signed(
        &keys,
        "k1",
        json!({"alg": "HS256", "kid": "k1"}),
        claims(now, now + 60),
    );
    assert!(matches!(
        verifier.verify(&confused).await,
        Err(OAuthError::Algorithm(_))
    ));
    // No error repeats the token.
    for token in [&misdirected, &forged, &tampered] {
        let e = verifier.verify(token).await.unwrap_err().to_string();
        assert!(!e.contains(token.split('.').nth(2).unwrap()), "{e}");
    }
}

fn decode(part: &str) -> Value {
    use base64::Engine as _;
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap(),
    )
    .unwrap()
}

fn encode(value: &Value) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

#[tokio::test]
async fn a_key_rotation_at_the_issuer_is_picked_up() {
    let before = keys("before.json", &["k1:rsa"]);
    let after = keys("after.json", &["k2:rsa"]);
    let issuer = Issuer::start(&before, 0, &[RESOURCE]);
    let clock = clock();
    let verifier = verifier(RESOURCE, &issuer.url, clock.clone());
    let old = issuer.token("rs", RESOURCE, true).await;
    assert!(verifier.verify(&old).await.is_ok());
    // The issuer restarts on its address with a new key.
    let (url, port) = (issuer.url.clone(), issuer.port);
    drop(issuer);
    let issuer = Issuer::start(&after, port, &[RESOURCE]);
    assert_eq!(issuer.url, url);
    let new = issuer.token("rs", RESOURCE, true).await;
    assert_eq!(token_header(&new)["kid"], "k2");
    // Keys were read a moment ago: an unknown key does not refetch yet
    // (made-up kids cannot make the gateway hammer the issuer)…
    assert!(matches!(
        verifier.verify(&new).await,
        Err(OAuthError::UnknownKey { .. })
    ));
    // …and does once the refetch interval has passed.
    *clock.0.lock().unwrap() += REFETCH_AFTER;
    let claims = verifier.verify(&new).await.expect("the new key is fetched");
    assert_eq!(claims.sub, "user-of-rs");
}
