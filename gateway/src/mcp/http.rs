//! The gateway over streamable HTTP at `/mcp`: rmcp's service (legacy
//! sessions kept in memory, 2026-07-28 requests served statelessly) behind
//! one axum layer that admits a request only with a valid token.
//!
//! The layer reads `Authorization: Bearer <jwt>` and checks it: an HS256
//! operator token under the configured secret, or, when `agent.yaml`
//! configures OAuth, an access token from a trusted issuer
//! ([`crate::oauth`]: signature, issuer, audience, times, scope). The
//! token's
//! organisation must be the one this gateway serves and its agent one the
//! configuration has. A request that fails any of this is answered 401
//! (no, forged or expired token) or 403 (another organisation, an unknown
//! agent) with a JSON-RPC error body that never repeats the token, and
//! reaches nothing. An admitted request goes on with its claims and the
//! runtime credentials it presented attached, and with the `Authorization`
//! and credential headers removed, so nothing downstream can log them.
//!
//! With OAuth configured, the protected-resource metadata (RFC 9728) is
//! served without a token at `/.well-known/oauth-protected-resource` and at
//! that path followed by the resource's path, and every 401 says where it
//! is: `WWW-Authenticate: Bearer resource_metadata="…"` (with
//! `error="invalid_token"` when a token came); a token without the scope is
//! a 403 with `error="insufficient_scope"` and the scope.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use dragnet_core::clock::Clock;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{take_runtime_credentials, McpAgent, Verified};
use crate::jws::peek_alg;
use crate::oauth::{metadata, OAuthError, ResourceServerConfig, Verifier};
use crate::runtime::Gateway;
use crate::token::{Claims, TokenKey};

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// What the HTTP endpoint needs besides the gateway.
pub struct HttpOptions {
    /// The HS256 secret of operator tokens, when configured.
    pub key: Option<Arc<TokenKey>>,
    /// The gateway as an OAuth resource server, when configured.
    pub oauth: Option<ResourceServerConfig>,
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
    key: Option<Arc<TokenKey>>,
    oauth: Option<Arc<OAuth>>,
    clock: Arc<dyn Clock>,
}

struct OAuth {
    config: ResourceServerConfig,
    verifier: Verifier,
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
    let oauth = options.oauth.map(|config| {
        let verifier = Verifier::new(&config, options.clock.clone());
        Arc::new(OAuth { config, verifier })
    });
    let admission = Admission {
        gateway,
        key: options.key,
        oauth: oauth.clone(),
        clock: options.clock,
    };
    let router = Router::new()
        .nest_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(admission, admit));
    match oauth {
        Some(oauth) => with_metadata(router, oauth),
        None => router,
    }
}

/// The metadata document's routes (no token needed to read them).
fn with_metadata(router: Router, oauth: Arc<OAuth>) -> Router {
    let document = axum::Json(metadata::document(&oauth.config));
    let mut paths = vec![metadata::WELL_KNOWN.to_string()];
    paths.extend(metadata::path_for(&oauth.config));
    paths.into_iter().fold(router, |router, path| {
        let document = document.clone();
        router.route(&path, axum::routing::get(move || async move { document }))
    })
}

/// Serves `router` on `listener` until `signal` resolves (cancel the
/// options' `shutdown` token with it, so open streams end), then drains.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        dragnet_http::listen::sending_at_once(listener),
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
    let claims = match verify(&admission, &presented).await {
        Ok(claims) => claims,
        Err(refusal) => return refusal,
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

/// The caller `presented` names: an operator token when its header says
/// HS256 and a secret is configured, else an access token of a trusted
/// issuer when OAuth is configured.
async fn verify(admission: &Admission, presented: &str) -> Result<Claims, Response> {
    let operator = admission
        .key
        .as_ref()
        .filter(|_| admission.oauth.is_none() || peek_alg(presented).as_deref() == Some("HS256"));
    if let Some(key) = operator {
        return key
            .verify(presented, admission.clock.now())
            .map_err(|error| refuse(401, &format!("refused: {error}")));
    }
    let Some(oauth) = &admission.oauth else {
        return Err(refuse(401, "refused: no bearer token"));
    };
    oauth.verifier.verify(presented).await.map_err(|error| {
        let config = &oauth.config;
        let (status, challenge) = match &error {
            OAuthError::Missing => (401, metadata::challenge(config, None, None)),
            OAuthError::Scope { required } => (
                403,
                metadata::challenge(config, Some("insufficient_scope"), Some(required)),
            ),
            _ => (
                401,
                metadata::challenge(config, Some("invalid_token"), None),
            ),
        };
        challenged(status, &format!("refused: {error}"), &challenge)
    })
}

/// A refusal with the given `WWW-Authenticate` challenge.
fn challenged(status: u16, message: &str, challenge: &str) -> Response {
    let mut response = refuse(status, message);
    if let Ok(value) = ::http::HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(::http::header::WWW_AUTHENTICATE, value);
    }
    response
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
