//! `dragnet mcp --http` as an OAuth 2.1 resource server, with a real
//! authorization server (`oidc-provider` from npm, see
//! `dragnet_gateway::oauth::peer`) and the Python `mcp` client: the
//! protected-resource metadata (RFC 9728) and the 401/403 challenges
//! checked byte for byte; a token the issuer made for this gateway lists
//! and calls tools in both protocol modes; a token for another resource,
//! without the scope, or forged is refused and reaches nothing.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::mcp_http::{bearer, plan};
use common::{command, fresh_db, scratch, shop};
use dragnet_gateway::oauth::peer::{keys, signed, Issuer, SCOPE};
use serde_json::{json, Value};

/// A free port on the loopback interface.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// `dragnet mcp --http` on `port`, trusting `issuer`, with no operator
/// secret anywhere.
struct Gateway(std::process::Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn gateway(port: u16, issuer: &str, shop: &str) -> Gateway {
    let config = scratch("yaml");
    let doc = dragnet_shop::openapi_path();
    std::fs::write(
        &config,
        format!(
            "organisation: acme
oauth:
  resource: http://127.0.0.1:{port}/mcp
  leeway_seconds: 5
  issuers:
    - issuer: {issuer}
      scope: {SCOPE}
      claims: {{user: user}}
providers:
  shop:
    openapi: {doc}
    base_url: {shop}
agents:
  support:
    agentTools:
      - {{ tool_id: listOrders, provider_id: shop, loop_responses: true }}
",
            doc = doc.display()
        ),
    )
    .unwrap();
    let mut child = command(&fresh_db())
        .env_remove("DRAGNET_MCP_TOKEN_SECRET")
        .args(["mcp", "--config"])
        .arg(&config)
        .args(["--http", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the gateway starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains(&format!("127.0.0.1:{port}/mcp")), "{line}");
    Gateway(child)
}

/// POSTs an `initialize` with `authorization`: the status, the
/// `WWW-Authenticate` header and the body.
async fn initialize(url: &str, authorization: Option<&str>) -> (u16, String, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "1"}}
        }));
    if let Some(a) = authorization {
        request = request.header("authorization", a);
    }
    let response = request.send().await.unwrap();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (
        response.status().as_u16(),
        challenge,
        response.text().await.unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oauth_token_from_the_issuer_calls_tools_and_nothing_else_gets_in() {
    let shop = shop().await;
    let key_file = keys("gateway.json", &["k1:rsa"]);
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let elsewhere = "http://127.0.0.1:9/mcp";
    let issuer = Issuer::start(&key_file, 0, &[&resource, elsewhere]);
    let _gw = gateway(port, &issuer.url, shop.base_url());
    let base = format!("http://127.0.0.1:{port}");

    // The metadata, at the resource's path and at the root, no token needed.
    let expected = json!({
        "resource": resource,
        "authorization_servers": [issuer.url],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "dragnet gateway",
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.json::<Value>().await.unwrap(), expected, "{path}");
    }

    // No token: 401 naming the metadata, without an error code (RFC 6750 §3.1).
    let metadata = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let (status, challenge, body) = initialize(&resource, None).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata}\"")
    );

    // A token for another resource, and a forged one: 401 invalid_token.
    let misdirected = issuer.token("rs", elsewhere, true).await;
    let other_keys = keys("forger.json", &["k1:rsa"]);
    let now = chrono::Utc::now().timestamp();
    let forged = signed(
        &other_keys,
        "k1",
        json!({"alg": "RS256", "kid": "k1"}),
        json!({"iss": issuer.url, "aud": resource, "exp": now + 300, "scope": SCOPE,
               "org": "acme", "user": "mallory", "agent": "support"}),
    );
    for token in [&misdirected, &forged] {
        let (status, challenge, body) =
            initialize(&resource, Some(&format!("Bearer {token}"))).await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(
            challenge,
            format!("Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\"")
        );
        assert!(!body.contains(token.as_str()));
    }
    // A valid token without the scope: 403 insufficient_scope with the scope.
    let unscoped = issuer.token("rs", &resource, false).await;
    let (status, challenge, _) = initialize(&resource, Some(&format!("Bearer {unscoped}"))).await;
    assert_eq!(status, 403);
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{metadata}\", error=\"insufficient_scope\", scope=\"{SCOPE}\""
        )
    );

    // The issuer's token for this gateway lists and calls tools, in both
    // protocol modes, as its agent.
    let good = issuer.token("rs", &resource, true).await;
    for mode in ["legacy", "2026-07-28"] {
        let seen = plan(
            &resource,
            bearer(&good),
            mode,
            json!([
                {"list": true},
                {"call": "listOrders", "args": {"status": "cancelled", "per_page": 50, "_all_pages": true, "_fields": ["id"]}},
            ]),
        );
        let tools = seen[0]["tools"].as_object().unwrap();
        assert!(tools.contains_key("listOrders"), "{mode}: {}", seen[0]);
        assert_eq!(seen[1]["error"], false, "{mode}: {}", seen[1]);
        assert_eq!(
            seen[1]["json"]["_pagingComplete"], true,
            "{mode}: {}",
            seen[1]
        );
    }
}
