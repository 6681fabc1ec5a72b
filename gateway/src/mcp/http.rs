//! The gateway over streamable HTTP at `/mcp`: rmcp's service (legacy
//! sessions kept in memory, 2026-07-28 requests served statelessly) behind
//! one axum layer that admits a request only with a valid token.
//!
//! The layer reads `Authorization: Bearer <jwt>` and checks it (HS256
//! under the configured secret, not expired, claims complete); the token's
//! organisation must be the one this gateway serves and its agent one the
//! configuration has. A request that fails any of this is answered 401
//! (no, forged or expired token) or 403 (another organisation, an unknown
//! agent) with a JSON-RPC error body that never repeats the token, and
//! reaches nothing. An admitted request goes on with its claims and the
//! runtime credentials it presented attached, and with the `Authorization`
//! and credential headers removed, so nothing downstream can log them.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use dragnet_steps::clock::Clock;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{take_runtime_credentials, McpAgent, Verified};
use crate::runtime::Gateway;
use crate::token::TokenKey;

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// What the HTTP endpoint needs besides the gateway.
pub struct HttpOptions {
    pub key: Arc<TokenKey>,
    pub clock: Arc<dyn Clock>,
    /// `Host` values accepted (DNS-rebinding protection); loopback names
    /// are always accepted.
    pub allowed_hosts: Vec<String>,
    /// Cancelled to end every session and stop accepting requests.
    pub shutdown: CancellationToken,
}

#[derive(Clone)]
struct Admission {
    gateway: Arc<Gateway>,
    key: Arc<TokenKey>,
    clock: Arc<dyn Clock>,
}

/// The router serving `gateway` at `/mcp`.
pub fn router(gateway: Arc<Gateway>, options: HttpOptions) -> Router {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
    hosts.extend(options.allowed_hosts);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(options.shutdown.clone());
    let factory_gateway = gateway.clone();
    let service = StreamableHttpService::new(
        move || Ok(McpAgent::per_request(factory_gateway.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let admission = Admission {
        gateway,
        key: options.key,
        clock: options.clock,
    };
    Router::new()
        .nest_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(admission, admit))
}

/// Serves `router` on `listener` until `signal` resolves (cancel the
/// options' `shutdown` token with it, so open streams end), then drains.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(signal)
    .await
}

async fn admit(State(admission): State<Admission>, mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .unwrap_or_default()
        .to_string();
    let now = admission.clock.now();
    let claims = match admission.key.verify(&presented, now) {
        Ok(claims) => claims,
        Err(error) => return refuse(401, &format!("refused: {error}")),
    };
    let organisation = &admission.gateway.config().organisation;
    if &claims.org != organisation {
        return refuse(
            403,
            &format!("refused: this gateway serves organisation `{organisation}`, not the token's"),
        );
    }
    if !admission.gateway.has_agent(&claims.agent) {
        return refuse(403, &format!("refused: no agent `{}` here", claims.agent));
    }
    let headers = request.headers_mut();
    headers.remove(::http::header::AUTHORIZATION);
    let runtime = take_runtime_credentials(&admission.gateway, headers);
    request
        .extensions_mut()
        .insert(Verified { claims, runtime });
    next.run(request).await
}

/// A refusal: the status, a `WWW-Authenticate` challenge on 401, and a
/// JSON-RPC error body.
fn refuse(status: u16, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": message},
    });
    let status = ::http::StatusCode::from_u16(status).unwrap_or(::http::StatusCode::UNAUTHORIZED);
    let mut response = (status, axum::Json(body)).into_response();
    if status == ::http::StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            ::http::header::WWW_AUTHENTICATE,
            ::http::HeaderValue::from_static("Bearer error=\"invalid_token\""),
        );
    }
    response
}
