//! The HTTP floor of `bench/gateway/run.py`: the least a server of MCP
//! calls over HTTP can cost its callers. `http_floor ANSWER_FILE` listens on
//! 127.0.0.1 (a free port, printed as `listening on http://ADDR/mcp`) and
//! answers every POST that holds a JSON-RPC request with the response in
//! ANSWER_FILE (one the gateway gave), its id set to the request's. Nothing
//! else: no tokens, no tools, no cache, no rmcp.
#![forbid(unsafe_code)]

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<()> {
    let path = std::env::args()
        .nth(1)
        .context("usage: http_floor ANSWER_FILE")?;
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    let answer: Arc<Value> = Arc::new(serde_json::from_str(&text).context("ANSWER_FILE")?);
    let app = axum::Router::new().fallback(move |body: Bytes| answer_to(answer.clone(), body));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

/// The stored answer under the request's id; 202 for a message with no id
/// (a notification), 400 for a body that is not JSON.
async fn answer_to(answer: Arc<Value>, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = request.get("id") else {
        return StatusCode::ACCEPTED.into_response();
    };
    let mut answer = Value::clone(&answer);
    answer["id"] = id.clone();
    Json(answer).into_response()
}
