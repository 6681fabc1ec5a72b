#![forbid(unsafe_code)]
//! `dragnet-shop` owns the demo shop API: a real HTTP server over deterministic seeded data
//! (30 properties, 400 customers, 6000 orders, 500 events) that serves every paging style
//! dragnet walks — page/per_page, offset/limit, OData `$top`/`$skip`, paging inside a POST
//! body, Django REST framework's count/next/previous/results (`/drf/…`), an opaque
//! cursor (`/events`), and customers as Stripe, GitHub and Twilio page them
//! (`/stripe/…`: `starting_after` with `has_more`; `/github/…`: a `Link` header;
//! `/twilio/…`: a relative `next_page_uri`), and Jira's `startAt`/`maxResults`
//! (`/jira/customers`, walked only with its paging roles named) — together with its OpenAPI 3.1 document, per-request fault
//! modes chosen by the `X-Shop-Fault` header, and a request log. It is both the demo
//! upstream and the upstream of the project's tests.
//!
//! Fault header grammar (`X-Shop-Fault`, comma-separated tokens, each `name` or
//! `name=field[:field…]`): `ignore-page`, `cap=N`, `short-page=N`, `total=N`,
//! `total-first-page-only`, `no-total`,
//! `status=N:CODE[:always][:retry-after=S][:retry-after-date=S]`, `malformed=N`,
//! `slow=N:MS`, `latency=MS` (every page), `huge=N:BYTES`, `missing-collection=N`,
//! `rate=N:MS[:headers]`, and on the cursor-style customers `repeat-cursor=N` (page N
//! points onward with the cursor or URL that reached it) and `foreign-next=N` (page N's
//! next URL names the other loopback host). An unknown or malformed token is a 400 naming it.
//! `rate` is a fixed-window limit counted per server across every session: the first
//! counted request opens a window of MS milliseconds that admits N requests; later ones get
//! a 429 with `Retry-After` (whole seconds to the window's end, at least 1). With `headers`
//! every answer also carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
//! `X-RateLimit-Reset` (seconds to the window's end, with millisecond decimals). "Page N" is the `page` (or `paging.page`) value on page-number endpoints,
//! `offset / size + 1` on offset endpoints (size after clamping and `cap`), and the position
//! in the cursor chain on `/events`, `/github/customers` and `/twilio/customers` (first
//! call = 1), `offset / limit + 1` on `/stripe/customers`. "Once" faults are remembered per
//! (`X-Shop-Session` value, token, page).
//!
//! Sizes above a documented maximum are clamped to it; values under a minimum, or of the
//! wrong type, are a 400 `{"error": "..."}`. `/tickets` changes while the shop runs
//! (`PUT /tickets/{id}`; see the `tickets` module), the upstream of incremental walks. `GET /_admin/requests` returns the request log
//! and `DELETE /_admin/requests` clears it; neither is in the OpenAPI document or the log.

mod cursors;
mod data;
mod drf;
mod error;
mod faults;
mod log;
mod pages;
mod params;
mod rate;
mod resources;
mod routes;
mod state;
mod tickets;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use data::{dataset, Customer, Dataset, Event, Order, OrderLine, OrderStatus, Property};
pub use log::RecordedRequest;
pub use routes::encode_cursor as chain_cursor;

use state::Shared;

/// The shop's OpenAPI 3.1 document.
pub const OPENAPI_YAML: &str = include_str!("../openapi.yaml");

/// Where the OpenAPI document lives on disk.
pub fn openapi_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml")
}

/// A running shop started by [`start`]. Dropping it also stops the server (without waiting).
#[derive(Debug)]
pub struct ShopHandle {
    base_url: String,
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl ShopHandle {
    /// `http://HOST:PORT`, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request recorded so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.log.snapshot()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        self.shared.log.clear();
    }

    /// Stops accepting connections, lets open ones finish, and waits for the server task.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("shop server ended with an error: {e}"),
            Err(e) => tracing::warn!("shop server task failed: {e}"),
        }
    }
}

/// Binds `addr` (port 0 picks a free port) and serves the shop on a spawned task.
pub async fn start(addr: SocketAddr) -> std::io::Result<ShopHandle> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let shared = Shared::new();
    let app = routes::router(shared.clone());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(dragnet_http::listen::sending_at_once(listener), app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    Ok(ShopHandle {
        base_url: format!("http://{addr}"),
        addr,
        shared,
        stop,
        task,
    })
}

/// The shop's routes with a fresh state (own request log, "once" faults, reports, alerts).
pub fn router() -> axum::Router {
    routes::router(Shared::new())
}

/// Serves the shop on `listener` until `shutdown` resolves, then finishes open requests.
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(dragnet_http::listen::sending_at_once(listener), router())
        .with_graceful_shutdown(shutdown)
        .await
}
