//! The reqwest implementation of `Upstream` for OpenAPI tools.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde_json::{Map, Value};

use super::credentials::{Credentials, Secret};
use super::request::build_parts;
use super::{RawResponse, Upstream};
use crate::tool::BodyEncoding;
use crate::{Tool, UpstreamError};

/// Sends tool requests to one provider's base URL.
#[derive(Debug, Clone)]
pub struct HttpUpstream {
    client: reqwest::Client,
    base_url: String,
    credentials: Credentials,
    /// Extra headers sent with every request; values may be secret.
    headers: Vec<(String, Secret)>,
}

impl HttpUpstream {
    pub fn new(base_url: &str, credentials: Credentials) -> Result<Self, UpstreamError> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("dragnet/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| UpstreamError::Connection {
                message: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(HttpUpstream {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            credentials,
            headers: Vec::new(),
        })
    }

    /// Adds a header sent with every request (e.g. from `--header`).
    pub fn with_header(mut self, name: &str, value: Secret) -> Self {
        self.headers.push((name.to_string(), value));
        self
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }
}

impl Upstream for HttpUpstream {
    async fn send(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
    ) -> Result<RawResponse, UpstreamError> {
        let parts = build_parts(tool, arguments).map_err(|e| UpstreamError::Connection {
            message: e.to_string(),
        })?;
        let method = reqwest::Method::from_bytes(tool.method.as_upper().as_bytes())
            .unwrap_or(reqwest::Method::GET);
        let url = format!("{}{}", self.base_url, parts.path);
        let mut request = self.client.request(method, url).query(&parts.query);
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
        request = match parts.body {
            Some((BodyEncoding::Json, body)) => request.json(&body),
            Some((BodyEncoding::Form, body)) => request.form(&form_pairs(&body)),
            None => request,
        };
        let response = request.send().await.map_err(connection_error)?;
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let body = response.bytes().await.map_err(connection_error)?;
        Ok(RawResponse {
            status,
            retry_after,
            body,
        })
    }
}

/// A reqwest error without the URL (which may carry secrets in a query).
fn connection_error(e: reqwest::Error) -> UpstreamError {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the response body broke off"
    } else {
        "the request failed"
    };
    UpstreamError::Connection {
        message: format!("{kind}: {}", e.without_url()),
    }
}

fn form_pairs(body: &Value) -> Vec<(String, String)> {
    match body {
        Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), super::request::scalar_text(v)))
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
}
