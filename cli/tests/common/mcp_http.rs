//! A running `dragnet mcp --http` for the tests that drive it with the
//! Python client: its agent configuration over the shop, its tokens, and
//! a plan runner.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use dragnet_gateway::token::{Claims, TokenKey};
use serde_json::{json, Value};

use super::{command, mcp_plan, scratch};

pub const SECRET: &str = "a test secret of at least thirty-two bytes";
pub const CONNECTIONS_KEY: &str = "the connections key of this test, 32+ bytes";

/// An agent configuration for organisation `org` over the shop at `base`.
pub fn config(org: &str, base: &str) -> std::path::PathBuf {
    let path = scratch("yaml");
    let doc = dragnet_shop::openapi_path();
    let doc = doc.display();
    std::fs::write(
        &path,
        format!(
            "organisation: {org}
token_secret_env: TEST_MCP_SECRET
size_budget_tokens: 2000
providers:
  shop:
    openapi: {doc}
    base_url: {base}
  own:
    openapi: {doc}
    base_url: {base}
    runtime_credentials_header: X-Shop-Token
  mailapp:
    app: {doc}
    base_url: {base}
agents:
  analyst:
    agentTools:
      - {{ tool_id: listOrders, provider_id: shop, loop_responses: true }}
      - {{ tool_id: getOrder, provider_id: shop, loop_responses: true }}
  clerk:
    agentTools:
      - {{ tool_id: listOrders, provider_id: shop, loop_responses: false }}
  mine:
    agentTools:
      - {{ tool_id: listCustomers, provider_id: own, loop_responses: true }}
  mailer:
    agentTools:
      - {{ tool_id: listCustomers, provider_id: mailapp }}
  scout:
    toolBudget: 2
    agentTools:
      - {{ tool_id: listOrders, provider_id: shop, loop_responses: true }}
      - {{ tool_id: listProperties, provider_id: mailapp }}
      - {{ tool_id: listPropertyOrders, provider_id: mailapp, loop_responses: true }}
      - {{ tool_id: listCustomers, provider_id: mailapp }}
"
        ),
    )
    .unwrap();
    path
}

/// A running `dragnet mcp --http`, killed when dropped.
pub struct Gateway {
    pub child: Child,
    pub url: String,
    pub log: std::path::PathBuf,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn gateway(config: &Path, db: &str) -> Gateway {
    let log = scratch("log");
    let mut child = command(db)
        .env("TEST_MCP_SECRET", SECRET)
        .env("DRAGNET_CONNECTIONS_KEY", CONNECTIONS_KEY)
        .env("DRAGNET_CACHE_MODE", "on")
        .env("DRAGNET_LOG", "debug")
        .args(["mcp", "--config"])
        .arg(config)
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("the gateway starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| {
            panic!(
                "no address in `{line}`: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        })
        .to_string();
    Gateway { child, url, log }
}

pub fn key() -> TokenKey {
    TokenKey::new(SECRET.as_bytes()).unwrap()
}

pub fn token(org: &str, user: &str, agent: &str) -> String {
    key().mint(&Claims {
        org: org.into(),
        sub: user.into(),
        agent: agent.into(),
        cache_scope: None,
        exp: chrono::Utc::now().timestamp() + 600,
    })
}

/// Runs a plan with the Python client; what each step saw.
pub fn plan(url: &str, headers: Value, mode: &str, steps: Value) -> Vec<Value> {
    mcp_plan(&json!({"url": url, "headers": headers, "mode": mode, "steps": steps}))
}

pub fn bearer(token: &str) -> Value {
    json!({"Authorization": format!("Bearer {token}")})
}
