//! The reqwest implementation of `Upstream` for OpenAPI tools: requests
//! built from a tool's arguments, redirects followed by hand (a few hops,
//! HTTP(S) only, nothing secret across origins), bodies read as a stream
//! against the byte bound, and every answer redacted before it goes on.
//! Under a host policy (a server's `upstream_hosts`), every hop's host is
//! checked before it is sent to and every address a name resolves to
//! before it is connected to.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, LINK, LOCATION, RETRY_AFTER};
use reqwest::{Method, StatusCode, Url};
use serde_json::{Map, Value};

use crate::credentials::Credentials;
use crate::hosts::{refusal_in, HostPolicy, HostRefused, PolicyResolver};
use crate::link::{next_of_link_header, resolve_on_origin, LinkRefused};
use crate::pacing::{Pacing, RateLimit};
use crate::redact::Redactor;
use crate::request::{build_parts, RequestParts};
use crate::{BodySink, RawResponse, SinkRefusal, Upstream};
use dragnet_core::secret::Secret;
use dragnet_core::tool::BodyEncoding;
use dragnet_core::{Tool, UpstreamError};

/// Redirects followed for one request before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// Sends tool requests to one provider's base URL.
#[derive(Debug, Clone)]
pub struct HttpUpstream {
    client: reqwest::Client,
    base_url: String,
    credentials: Credentials,
    /// Extra headers sent with every request; values may be secret.
    headers: Vec<(String, Secret)>,
    redactor: Redactor,
    /// The host's pacing, shared by every walk through this upstream and its clones.
    pacing: Arc<Pacing>,
    /// Where requests may go; `None` anywhere.
    hosts: Option<Arc<HostPolicy>>,
}

/// The client: redirects by hand, and, under a policy, its resolver.
fn build_client(hosts: Option<&Arc<HostPolicy>>) -> Result<reqwest::Client, UpstreamError> {
    let mut builder = reqwest::Client::builder()
        .user_agent(concat!("dragnet/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none());
    if let Some(policy) = hosts {
        builder = builder.dns_resolver(Arc::new(PolicyResolver {
            policy: policy.clone(),
        }));
    }
    builder.build().map_err(|e| UpstreamError::Connection {
        message: format!("cannot build the HTTP client: {e}"),
    })
}

impl HttpUpstream {
    pub fn new(base_url: &str, credentials: Credentials) -> Result<Self, UpstreamError> {
        let client = build_client(None)?;
        let redactor = Redactor::new(&credentials, &[]);
        Ok(HttpUpstream {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            credentials,
            headers: Vec::new(),
            redactor,
            pacing: Arc::default(),
            hosts: None,
        })
    }

    /// The same upstream held to `policy`: every hop (redirects and
    /// next-page links too) to a refused host, or to a name resolving to a
    /// refused address, fails with `UpstreamError::HostRefused` unsent.
    pub fn with_hosts(mut self, policy: Arc<HostPolicy>) -> Result<Self, UpstreamError> {
        self.client = build_client(Some(&policy))?;
        self.hosts = Some(policy);
        Ok(self)
    }

    /// Adds a header sent with every request (e.g. from `--header`).
    pub fn with_header(mut self, name: &str, value: Secret) -> Self {
        self.headers.push((name.to_string(), value));
        self.redactor = Redactor::new(&self.credentials, &self.headers);
        self
    }

    /// The same upstream (client, headers, shared pacing) with other
    /// credentials: a caller's own, for one call. They are redacted from
    /// its answers like the provider's.
    pub fn with_credentials(&self, credentials: Credentials) -> Self {
        HttpUpstream {
            redactor: Redactor::new(&credentials, &self.headers),
            credentials,
            ..self.clone()
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The redactor of this upstream's secrets.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// One hop: the request to `url`, with secrets only when `trusted`
    /// (the provider's own origin).
    fn request(
        &self,
        method: Method,
        url: Url,
        parts: &RequestParts,
        with_body: bool,
        trusted: bool,
    ) -> reqwest::RequestBuilder {
        let mut request = self.client.request(method, url);
        if trusted {
            for (name, value) in &parts.headers {
                request = request.header(name.as_str(), value.as_str());
            }
            for (name, value) in &self.headers {
                request = request.header(name.as_str(), value.expose());
            }
            request = match &self.credentials {
                Credentials::None => request,
                Credentials::Bearer(token) => request.bearer_auth(token.expose()),
                Credentials::ApiKeyHeader { header, key } => {
                    request.header(header.as_str(), key.expose())
                }
                Credentials::Basic { user, password } => {
                    request.basic_auth(user, Some(password.expose()))
                }
            };
        }
        if !with_body {
            return request;
        }
        match &parts.body {
            Some((BodyEncoding::Json, body)) => request.json(body),
            Some((BodyEncoding::Form, body)) => request.form(&form_pairs(body)),
            None => request,
        }
    }

    fn refused(&self, message: String) -> UpstreamError {
        UpstreamError::Redirect {
            message: self.redactor.text(message),
        }
    }

    fn host_refused(&self, refused: HostRefused) -> UpstreamError {
        UpstreamError::HostRefused {
            host: self.redactor.text(refused.host),
            rule: self.redactor.text(refused.rule),
        }
    }

    /// A failed send: the policy's refusal when the resolver refused it.
    fn send_failed(&self, e: reqwest::Error) -> UpstreamError {
        match refusal_in(&e) {
            Some(refused) => self.host_refused(refused),
            None => self.failed(connection_message(e)),
        }
    }

    fn failed(&self, message: String) -> UpstreamError {
        UpstreamError::Connection {
            message: self.redactor.text(message),
        }
    }
}

impl HttpUpstream {
    /// One exchange: the request for `parts` sent to `url`, redirects
    /// followed by hand, the body read against `max_bytes` and redacted.
    async fn exchange(
        &self,
        tool: &Tool,
        parts: &RequestParts,
        mut url: Url,
        max_bytes: u64,
        sink: Option<&mut dyn BodySink>,
    ) -> Result<RawResponse, UpstreamError> {
        let mut method =
            Method::from_bytes(tool.method.as_upper().as_bytes()).unwrap_or(Method::GET);
        let origin = url.origin();
        let mut with_body = true;
        let mut hops = 0;
        let response = loop {
            if let Some(policy) = &self.hosts {
                policy.check_url(&url).map_err(|r| self.host_refused(r))?;
            }
            let trusted = url.origin() == origin;
            let request = self.request(method.clone(), url.clone(), parts, with_body, trusted);
            let response = request.send().await.map_err(|e| self.send_failed(e))?;
            let status = response.status();
            let Some(location) = status
                .is_redirection()
                .then(|| response.headers().get(LOCATION))
                .flatten()
            else {
                break response;
            };
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(self.refused(format!(
                    "more than {MAX_REDIRECTS} redirects; the last answer was HTTP {}",
                    status.as_u16()
                )));
            }
            let next = location
                .to_str()
                .ok()
                .and_then(|l| url.join(l).ok())
                .ok_or_else(|| self.refused("the Location header is not a usable URL".into()))?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(self.refused(format!(
                    "a redirect to a `{}:` URL (only HTTP and HTTPS are followed)",
                    next.scheme()
                )));
            }
            // 303 always, and 301/302 after a POST, continue as a GET without a body.
            let to_get = status == StatusCode::SEE_OTHER
                || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST);
            if to_get {
                method = Method::GET;
                with_body = false;
            }
            url = next;
        };
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let rate_limit = rate_limit(response.headers());
        let next_link = response
            .headers()
            .get_all(LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(next_of_link_header)
            .map(|l| self.redactor.text(l));
        let body_error = |e| match e {
            BodyError::Bound(read) => UpstreamError::ByteBound { read },
            BodyError::Broken(e) => self.failed(connection_message(e)),
            BodyError::Refused(refusal) => refusal.into_error(status),
        };
        let body = match sink {
            Some(sink) if (200..300).contains(&status) => {
                stream_body(response, max_bytes, &self.redactor, sink)
                    .await
                    .map_err(body_error)?;
                bytes::Bytes::new()
            }
            _ => {
                let body = read_body(response, max_bytes).await.map_err(body_error)?;
                self.redactor.bytes(body)
            }
        };
        Ok(RawResponse {
            status,
            retry_after,
            rate_limit,
            next_link,
            body,
        })
    }
}

impl HttpUpstream {
    /// The request parts and URL of the tool's own path and query.
    fn own_target(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
    ) -> Result<(RequestParts, Url), UpstreamError> {
        let parts = build_parts(tool, arguments).map_err(|e| self.failed(e.to_string()))?;
        let start = format!("{}{}", self.base_url, parts.path);
        let mut url = Url::parse(&start)
            .map_err(|e| self.failed(format!("`{}` is not a valid URL: {e}", self.base_url)))?;
        if !parts.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&parts.query);
        }
        Ok((parts, url))
    }

    /// The request parts of the tool, sent to a next-page link instead.
    fn link_target_of(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        url: &str,
    ) -> Result<(RequestParts, Url), UpstreamError> {
        let parts = build_parts(tool, arguments).map_err(|e| self.failed(e.to_string()))?;
        // Checked again here: nothing but the provider's origin is sent to.
        let url = resolve_on_origin(&self.base_url, url)
            .map_err(|refused| self.refused(refused.describe()))?;
        Ok((parts, url))
    }
}

impl Upstream for HttpUpstream {
    async fn send(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        let (parts, url) = self.own_target(tool, arguments)?;
        self.exchange(tool, &parts, url, max_bytes, None).await
    }

    async fn send_into(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        max_bytes: u64,
        sink: &mut dyn BodySink,
    ) -> Result<RawResponse, UpstreamError> {
        let (parts, url) = self.own_target(tool, arguments)?;
        self.exchange(tool, &parts, url, max_bytes, Some(sink))
            .await
    }

    fn identity(&self) -> String {
        canonical_base(&self.base_url)
    }

    fn pacing(&self) -> Option<&Pacing> {
        Some(&self.pacing)
    }

    fn link_target(&self, link: &str) -> Result<String, LinkRefused> {
        resolve_on_origin(&self.base_url, link).map(String::from)
    }

    async fn send_link(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        url: &str,
        max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        let (parts, url) = self.link_target_of(tool, arguments, url)?;
        self.exchange(tool, &parts, url, max_bytes, None).await
    }

    async fn send_link_into(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        url: &str,
        max_bytes: u64,
        sink: &mut dyn BodySink,
    ) -> Result<RawResponse, UpstreamError> {
        let (parts, url) = self.link_target_of(tool, arguments, url)?;
        self.exchange(tool, &parts, url, max_bytes, Some(sink))
            .await
    }
}

enum BodyError {
    /// The body passed the bound after this many bytes.
    Bound(u64),
    Broken(reqwest::Error),
    /// The sink refused the body (`stream_body`).
    Refused(SinkRefusal),
}

/// Hands the body to `sink` chunk by chunk, redacted, under the same
/// bound as `read_body`; nothing of it is kept here.
async fn stream_body(
    mut response: reqwest::Response,
    max_bytes: u64,
    redactor: &Redactor,
    sink: &mut dyn BodySink,
) -> Result<(), BodyError> {
    if response
        .content_length()
        .is_some_and(|length| length > max_bytes)
    {
        return Err(BodyError::Bound(0));
    }
    let mut read = 0u64;
    let mut redacting = redactor.stream();
    let mut give = |piece: &[u8]| sink.take(piece);
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Broken)? {
        read += chunk.len() as u64;
        if read > max_bytes {
            return Err(BodyError::Bound(read));
        }
        redacting
            .push(&chunk, &mut give)
            .map_err(BodyError::Refused)?;
    }
    redacting.finish(&mut give).map_err(BodyError::Refused)
}

/// Reads the body chunk by chunk, stopping (and dropping the connection)
/// as soon as it would pass `max_bytes`.
async fn read_body(
    mut response: reqwest::Response,
    max_bytes: u64,
) -> Result<bytes::Bytes, BodyError> {
    if let Some(length) = response.content_length() {
        if length > max_bytes {
            return Err(BodyError::Bound(0));
        }
    }
    let capacity = response.content_length().unwrap_or(8 * 1024).min(max_bytes);
    let mut body = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Broken)? {
        let read = body.len() as u64 + chunk.len() as u64;
        if read > max_bytes {
            return Err(BodyError::Bound(read));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(bytes::Bytes::from(body))
}

/// The base URL as an identity: scheme and host lower-cased, default port
/// dropped, no trailing slash.
pub fn canonical_base(base_url: &str) -> String {
    match Url::parse(base_url) {
        Ok(url) => url.as_str().trim_end_matches('/').to_string(),
        Err(_) => base_url.trim_end_matches('/').to_string(),
    }
}

/// A reqwest error without the URL (which may carry secrets in a query).
fn connection_message(e: reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the response body broke off"
    } else {
        "the request failed"
    };
    format!("{kind}: {}", e.without_url())
}

fn form_pairs(body: &Value) -> Vec<(String, String)> {
    match body {
        Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), crate::request::scalar_text(v)))
            .collect(),
        _ => Vec::new(),
    }
}

/// `Retry-After` as seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(text).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Resets at or above this are Unix times; below, seconds to wait.
const UNIX_RESET_FROM: u64 = 1_000_000_000;

/// `X-RateLimit-Remaining` with `X-RateLimit-Reset`. The reset is read as
/// seconds to wait when below 10⁹ (as most APIs send it), else as a Unix
/// time in seconds (as GitHub sends it).
pub(crate) fn rate_limit(headers: &HeaderMap) -> Option<RateLimit> {
    let number = |name: &str| -> Option<f64> {
        let n: f64 = headers.get(name)?.to_str().ok()?.trim().parse().ok()?;
        (n.is_finite() && n >= 0.0).then_some(n)
    };
    let remaining = number("x-ratelimit-remaining")? as u64;
    let reset = number("x-ratelimit-reset").map(|n| {
        if n >= UNIX_RESET_FROM as f64 {
            let at = UNIX_EPOCH + Duration::from_secs(n as u64);
            at.duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO)
        } else {
            // At most a day: a bigger delta is not a wait anyone means.
            Duration::from_secs_f64(n.min(86_400.0))
        }
    });
    Some(RateLimit { remaining, reset })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        let future = SystemTime::now() + Duration::from_secs(30);
        let date = httpdate::fmt_http_date(future);
        h.insert(RETRY_AFTER, HeaderValue::from_str(&date).unwrap());
        let d = retry_after(&h).unwrap();
        assert!(
            d > Duration::from_secs(27) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn rate_limit_resets_as_seconds_or_unix_times() {
        let mut h = HeaderMap::new();
        assert_eq!(rate_limit(&h), None);
        h.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        h.insert("x-ratelimit-reset", HeaderValue::from_static("2"));
        assert_eq!(
            rate_limit(&h),
            Some(RateLimit {
                remaining: 0,
                reset: Some(Duration::from_secs(2))
            })
        );
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 30;
        h.insert(
            "x-ratelimit-reset",
            HeaderValue::from_str(&at.to_string()).unwrap(),
        );
        let reset = rate_limit(&h).unwrap().reset.unwrap();
        assert!(
            reset > Duration::from_secs(27) && reset <= Duration::from_secs(30),
            "{reset:?}"
        );
        h.insert("x-ratelimit-reset", HeaderValue::from_static("soon"));
        assert_eq!(rate_limit(&h).unwrap().reset, None);
        h.insert("x-ratelimit-remaining", HeaderValue::from_static("-1"));
        assert_eq!(rate_limit(&h), None);
    }

    #[test]
    fn base_urls_are_canonical() {
        assert_eq!(
            canonical_base("HTTP://Shop.Example:80/"),
            "http://shop.example"
        );
        assert_eq!(canonical_base("https://h:8443/api/"), "https://h:8443/api");
        assert_ne!(
            canonical_base("http://127.0.0.1:1"),
            canonical_base("http://127.0.0.1:2")
        );
    }
}
