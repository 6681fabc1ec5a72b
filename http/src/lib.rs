//! dragnet-http talks to upstreams: the [`Upstream`] seam the walk calls
//! through and its reqwest implementation for OpenAPI tools,
//! [`HttpUpstream`]. Its layout:
//!
//! - `client`: [`HttpUpstream`], redirects followed by hand (each hop
//!   checked) and byte-bounded bodies;
//! - `request`: a tool's arguments to method, URL, headers and body
//!   ([`build_parts`]); `credentials`: [`Credentials`] applied to a request;
//! - [`redact`]: credentials and secret-looking values kept out of errors
//!   and excerpts ([`Redactor`]);
//! - `retry`: [`send_with_retry`], within the call's budget and
//!   [`dragnet_core::RetryPolicy`];
//! - [`pacing`]: the pace every walk to one host shares ([`Pacing`]);
//! - [`hosts`]: which hosts may be upstreams ([`HostPolicy`]); [`link`]:
//!   which next-page links may be followed;
//! - [`seal`]: AES-256-GCM sealing of secrets at rest ([`Sealer`]);
//! - [`listen`]: the serving side's sockets, sending at once
//!   ([`listen::sending_at_once`], used by the API, the gateway and the shop).
#![forbid(unsafe_code)]

mod client;
mod credentials;
pub mod hosts;
pub mod link;
pub mod listen;
pub mod pacing;
pub mod redact;
mod request;
mod retry;
pub mod seal;

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Map, Value};

use dragnet_core::{Tool, UpstreamError};

pub use client::{canonical_base, HttpUpstream, MAX_REDIRECTS};
pub use credentials::{CredentialSpecError, Credentials};
pub use hosts::{HostPolicy, HostRefused};
pub use link::LinkRefused;
pub use pacing::{Pacing, RateLimit};
pub use redact::{RedactStream, Redactor};
pub use request::{build_parts, RequestParts};
pub use retry::{send_with_retry, send_with_retry_into, FetchError, Target};
pub use seal::{SealError, Sealer};

/// One answer from an upstream, any status.
#[derive(Debug, Clone)]
pub struct RawResponse {
    pub status: u16,
    /// `Retry-After`, already turned into a delay.
    pub retry_after: Option<Duration>,
    /// `X-RateLimit-Remaining` (with `X-RateLimit-Reset`), when sent.
    pub rate_limit: Option<RateLimit>,
    /// The `Link` header's `rel="next"` target, as sent (redacted).
    pub next_link: Option<String>,
    pub body: Bytes,
}

/// Where a 2xx answer's body goes while it arrives, instead of being kept
/// whole: a call that keeps only shaped rows splits and shapes each piece
/// as it comes (dragnet-walk's streamed page), so a large page is never
/// held in memory.
pub trait BodySink: Send {
    /// An attempt begins (a retry included): whatever the sink took
    /// before is void.
    fn begin(&mut self);
    /// The next piece of the body, already redacted. `Err` refuses the
    /// answer as malformed; no more of it is read.
    fn take(&mut self, piece: &[u8]) -> Result<(), SinkRefusal>;
    /// The body bytes taken since `begin` (they count against the
    /// call's byte bound as a kept body does).
    fn taken(&self) -> u64;
}

/// Why a sink refused an answer: what is wrong, and the text around it.
#[derive(Debug, Clone, PartialEq)]
pub struct SinkRefusal {
    pub message: String,
    pub excerpt: String,
}

impl SinkRefusal {
    /// The refusal as the upstream error of an answer with `status`.
    pub fn into_error(self, status: u16) -> UpstreamError {
        UpstreamError::Malformed {
            status,
            message: self.message,
            excerpt: self.excerpt,
        }
    }
}

/// Anything that can answer one request for a tool: the HTTP client for
/// OpenAPI tools, or a generated upstream in property tests.
pub trait Upstream: Send + Sync {
    /// Sends one request built from `arguments` (reserved ones already
    /// removed), reading at most `max_bytes` of body: a longer body is
    /// `UpstreamError::ByteBound` and is not read further. A connection
    /// failure is `UpstreamError::Connection`; every HTTP answer, error
    /// statuses included, is `Ok`.
    fn send(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        max_bytes: u64,
    ) -> impl Future<Output = Result<RawResponse, UpstreamError>> + Send;

    /// What makes this upstream's answers differ from another's with the
    /// same tool and arguments (for HTTP: the canonical base URL). Part of
    /// every cache key.
    fn identity(&self) -> String;

    /// Where a next-page link an answer gave (`link`, absolute or relative
    /// to the provider's base URL) leads, when it may be followed: only on
    /// the provider's own origin. Upstreams that cannot follow links (an
    /// MCP server) refuse every one.
    fn link_target(&self, link: &str) -> Result<String, LinkRefused> {
        let _ = link;
        Err(LinkRefused::Unusable)
    }

    /// Sends the tool's request to `url` (a target `link_target` gave)
    /// instead of its own path and query: the same method, header
    /// parameters, body and credentials.
    fn send_link(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        url: &str,
        max_bytes: u64,
    ) -> impl Future<Output = Result<RawResponse, UpstreamError>> + Send {
        let _ = (tool, arguments, url, max_bytes);
        async {
            Err(UpstreamError::Connection {
                message: "this upstream cannot follow next-page links".into(),
            })
        }
    }

    /// As [`Upstream::send`], with a 2xx answer's body handed to `sink`
    /// while it arrives; the answer returned then has an empty body. This
    /// default reads the answer whole and hands it over in one piece (an
    /// MCP server's answer comes whole anyway); the HTTP client streams.
    fn send_into(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        max_bytes: u64,
        sink: &mut dyn BodySink,
    ) -> impl Future<Output = Result<RawResponse, UpstreamError>> + Send {
        async move {
            let response = self.send(tool, arguments, max_bytes).await?;
            into_sink(response, sink)
        }
    }

    /// As [`Upstream::send_link`], with the body handed to `sink` as
    /// [`Upstream::send_into`] does.
    fn send_link_into(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        url: &str,
        max_bytes: u64,
        sink: &mut dyn BodySink,
    ) -> impl Future<Output = Result<RawResponse, UpstreamError>> + Send {
        async move {
            let response = self.send_link(tool, arguments, url, max_bytes).await?;
            into_sink(response, sink)
        }
    }

    /// The pacing every walk through this upstream shares; `None` lets
    /// each call pace on its own.
    fn pacing(&self) -> Option<&Pacing> {
        None
    }
}

/// A whole answer handed to `sink` in one piece, when it is a 2xx one.
fn into_sink(
    mut response: RawResponse,
    sink: &mut dyn BodySink,
) -> Result<RawResponse, UpstreamError> {
    if (200..300).contains(&response.status) {
        let body = std::mem::take(&mut response.body);
        sink.take(&body)
            .map_err(|refusal| refusal.into_error(response.status))?;
    }
    Ok(response)
}
