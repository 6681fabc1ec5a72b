//! Every secret the gateway holds is scrubbed from what an HTTP upstream
//! answers, not only the credentials that upstream's own calls carry: an
//! OpenAPI provider (a real axum server on 127.0.0.1:0) that answers the
//! token secret, the connections key, its own organisation token, another
//! provider's organisation token and the caller's runtime credentials for
//! another provider gets every one of them replaced before the agent reads
//! the answer.

use std::path::Path;
use std::sync::Arc;

use axum::routing::get;
use axum::Json;
use dragnet_core::clock::SystemClock;
use dragnet_core::progress::NoProgress;
use dragnet_core::secret::Secret;
use serde_json::{json, Map};
use tokio_util::sync::CancellationToken;

use crate::config;
use crate::memory::Memory;
use crate::runtime::{Gateway, Services};

const TOKEN_SECRET: &str = "gateway-token-secret-0f9e8d7c6b5a4f3e2d1c";
const CONNECTIONS_KEY: &str = "gateway-connections-key-a1b2c3d4e5f6a7b8c9d0";
const LEAKY_TOKEN: &str = "leaky-org-token-77e1";
const OTHER_TOKEN: &str = "other-org-token-93b4";
const RUNTIME: &str = "callers-own-token-5d2a";

const DOC: &str = r#"openapi: 3.0.3
info: {title: echo, version: "1"}
paths:
  /echo:
    get:
      operationId: getEcho
      responses:
        "200":
          description: What the server knows.
          content:
            application/json:
              schema: {type: object}
"#;

#[tokio::test]
async fn an_http_upstream_answering_any_secret_of_the_process_gets_it_redacted() {
    let app = axum::Router::new().route(
        "/echo",
        get(|| async {
            Json(json!({
                "token": TOKEN_SECRET,
                "key": CONNECTIONS_KEY,
                "own": LEAKY_TOKEN,
                "other": OTHER_TOKEN,
                "caller": RUNTIME,
                "plain": "nothing secret",
            }))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let doc = std::env::temp_dir().join(format!("dragnet-echo-{}.yaml", std::process::id()));
    std::fs::write(&doc, DOC).unwrap();
    let yaml = format!(
        "organisation: demo
providers:
  leaky:
    openapi: {doc}
    base_url: {base}
    credentials: {{ type: bearer, env: LEAKY_TOKEN }}
  other:
    openapi: {doc}
    base_url: {base}
    credentials: {{ type: bearer, env: OTHER_TOKEN }}
    runtime_credentials_header: X-Other-Token
agents:
  a:
    agentTools:
      - {{ tool_id: getEcho, provider_id: leaky, loop_responses: true }}
",
        doc = doc.display()
    );
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("agent.yaml");
    let cfg = config::load_str(&source, &yaml).unwrap_or_else(|d| panic!("{d}"));
    let env = |var: &str| {
        let value = match var {
            "DRAGNET_MCP_TOKEN_SECRET" => TOKEN_SECRET,
            "DRAGNET_CONNECTIONS_KEY" => CONNECTIONS_KEY,
            "LEAKY_TOKEN" => LEAKY_TOKEN,
            "OTHER_TOKEN" => OTHER_TOKEN,
            _ => return None,
        };
        Some(value.to_string())
    };
    let g = Gateway::start(
        cfg,
        Services {
            env: Arc::new(env),
            embedded: None,
            results: Arc::new(Memory::default()),
            cache: None,
            clock: Arc::new(SystemClock),
            connections: None,
        },
    )
    .await
    .unwrap();
    let mut caller = crate::testing::caller("a", "t1", false);
    caller.runtime.insert("other", Secret::new(RUNTIME));
    let answer = g
        .call(
            &caller,
            "getEcho",
            Map::new(),
            &NoProgress,
            CancellationToken::new(),
        )
        .await;
    let _ = std::fs::remove_file(&doc);
    assert!(!answer.is_error, "{}", answer.text);
    for secret in [
        TOKEN_SECRET,
        CONNECTIONS_KEY,
        LEAKY_TOKEN,
        OTHER_TOKEN,
        RUNTIME,
    ] {
        assert!(
            !answer.text.contains(secret),
            "`{secret}` reached the agent: {}",
            answer.text
        );
    }
    assert_eq!(
        answer.text.matches("[redacted]").count(),
        5,
        "{}",
        answer.text
    );
    assert!(answer.text.contains("nothing secret"), "{}", answer.text);
}
