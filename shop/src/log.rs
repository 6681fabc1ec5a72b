//! The request log: a middleware that records every non-admin request and its outcome.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::ShopError;
use crate::params::QueryParams;
use crate::state::{lock, Shared};

/// Largest request body the shop reads.
pub(crate) const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// One request as the shop received it, with the status it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// Order of arrival, from 1.
    pub seq: u64,
    pub method: String,
    /// The path without the query string.
    pub path: String,
    /// Decoded query pairs, in the order sent.
    pub query: Vec<(String, String)>,
    /// Header pairs with lower-case names, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body as JSON; a JSON string of the raw text when it is not JSON; `None` when empty.
    pub body: Option<Value>,
    pub status: u16,
    /// Milliseconds since the server started, when the request arrived.
    pub started_ms: u64,
    /// Milliseconds since the server started, when the response was ready.
    pub finished_ms: u64,
}

/// The recorded requests of one server.
#[derive(Debug)]
pub(crate) struct RequestLog {
    started: Instant,
    next_seq: AtomicU64,
    entries: Mutex<Vec<RecordedRequest>>,
}

impl Default for RequestLog {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            next_seq: AtomicU64::new(1),
            entries: Mutex::new(Vec::new()),
        }
    }
}

impl RequestLog {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Every recorded request, in order of arrival.
    pub(crate) fn snapshot(&self) -> Vec<RecordedRequest> {
        let mut entries = lock(&self.entries).clone();
        entries.sort_by_key(|r| r.seq);
        entries
    }

    /// Forgets every recorded request; returns how many there were.
    pub(crate) fn clear(&self) -> usize {
        std::mem::take(&mut *lock(&self.entries)).len()
    }

    fn push(&self, entry: RecordedRequest) {
        lock(&self.entries).push(entry);
    }
}

/// Middleware: buffers the body, runs the request, records it (paths under `/_admin` are not
/// recorded).
pub(crate) async fn record(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path().starts_with("/_admin") {
        return next.run(request).await;
    }
    let log = &shared.log;
    let started_ms = log.now_ms();
    let seq = log.next_seq.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let mut entry = RecordedRequest {
        seq,
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: QueryParams::from_uri(&parts.uri)
            .map(QueryParams::into_pairs)
            .unwrap_or_default(),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_string(), value)
            })
            .collect(),
        body: None,
        status: 0,
        started_ms,
        finished_ms: 0,
    };
    let response = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => {
            entry.body = body_value(&bytes);
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(_) => ShopError::TooLarge(MAX_BODY_BYTES).into_response(),
    };
    entry.status = response.status().as_u16();
    entry.finished_ms = log.now_ms();
    log.push(entry);
    response
}

fn body_value(bytes: &Bytes) -> Option<Value> {
    if bytes.is_empty() {
        return None;
    }
    Some(
        serde_json::from_slice(bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned())),
    )
}
