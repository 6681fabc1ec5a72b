//! Redaction of secrets from what upstreams send back (SPEC §2). Every
//! byte an upstream answers enters dragnet through `HttpUpstream`, which
//! passes bodies and error texts through a `Redactor` first, so an upstream
//! that echoes a token cannot make it reach an error, a note, a step output,
//! a run record or a cache entry.
//!
//! What is redacted: every credential value (bearer token, API key,
//! password), the base64 form of basic credentials, and every configured or
//! `--header` header value; each also in its JSON-escaped spelling. Values
//! shorter than `MIN_SECRET_LEN` are not searched for: they cannot be
//! secrets worth the name, and replacing them would corrupt ordinary data.

use std::borrow::Cow;

use base64::Engine as _;
use bytes::Bytes;
use memchr::memmem;

use serde_json::{Map, Value};

use crate::credentials::Credentials;
use crate::{LinkRefused, Pacing, RawResponse, Upstream};
use dragnet_core::secret::Secret;
use dragnet_core::{Tool, UpstreamError};

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";
/// Values shorter than this are not searched for.
pub const MIN_SECRET_LEN: usize = 4;

/// The secrets of one upstream, ready to search for.
#[derive(Clone, Default)]
pub struct Redactor {
    /// One searcher per spelling of each secret, longest first, built once
    /// and used for every body.
    finders: Vec<memmem::Finder<'static>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} needles)", self.finders.len())
    }
}

impl Redactor {
    /// The secrets of `credentials` and of the configured header values.
    pub fn new(credentials: &Credentials, headers: &[(String, Secret)]) -> Self {
        let mut r = Redactor::default();
        match credentials {
            Credentials::None => {}
            Credentials::Bearer(token) => r.add(token.expose()),
            Credentials::ApiKeyHeader { key, .. } => r.add(key.expose()),
            Credentials::Basic { user, password } => {
                r.add(password.expose());
                let pair = format!("{user}:{}", password.expose());
                r.add(&base64::engine::general_purpose::STANDARD.encode(pair.as_bytes()));
            }
        }
        for (_, value) in headers {
            r.add(value.expose());
        }
        r
    }

    /// Adds one secret (and its JSON-escaped spelling).
    pub fn add(&mut self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        for form in [secret, escaped] {
            let known = self.finders.iter().any(|f| f.needle() == form.as_bytes());
            if !form.is_empty() && !known {
                self.finders
                    .push(memmem::Finder::new(form.as_bytes()).into_owned());
            }
        }
        // Longest first, so a secret containing another is replaced whole.
        self.finders
            .sort_by_key(|f| std::cmp::Reverse(f.needle().len()));
    }

    pub fn is_empty(&self) -> bool {
        self.finders.is_empty()
    }

    /// Adds every secret `other` knows.
    pub fn merge(&mut self, other: &Redactor) {
        for finder in &other.finders {
            let needle = finder.needle();
            if !self.finders.iter().any(|f| f.needle() == needle) {
                self.finders.push(finder.clone());
            }
        }
        self.finders
            .sort_by_key(|f| std::cmp::Reverse(f.needle().len()));
    }

    /// An answer with every secret replaced: its body and its next link.
    pub fn response(&self, mut response: RawResponse) -> RawResponse {
        if self.is_empty() {
            return response;
        }
        response.body = self.bytes(response.body);
        response.next_link = response.next_link.map(|l| self.text(l));
        response
    }

    /// An upstream error with every secret replaced in its texts.
    pub fn error(&self, error: UpstreamError) -> UpstreamError {
        if self.is_empty() {
            return error;
        }
        match error {
            UpstreamError::Status {
                status,
                excerpt,
                retry_after_ms,
            } => UpstreamError::Status {
                status,
                excerpt: self.text(excerpt),
                retry_after_ms,
            },
            UpstreamError::Connection { message } => UpstreamError::Connection {
                message: self.text(message),
            },
            UpstreamError::Malformed {
                status,
                message,
                excerpt,
            } => UpstreamError::Malformed {
                status,
                message: self.text(message),
                excerpt: self.text(excerpt),
            },
            UpstreamError::MissingCollection { page, path } => UpstreamError::MissingCollection {
                page,
                path: self.text(path),
            },
            UpstreamError::MalformedPage { page, message } => UpstreamError::MalformedPage {
                page,
                message: self.text(message),
            },
            UpstreamError::Redirect { message } => UpstreamError::Redirect {
                message: self.text(message),
            },
            UpstreamError::ByteBound { read } => UpstreamError::ByteBound { read },
            UpstreamError::HostRefused { host, rule } => UpstreamError::HostRefused {
                host: self.text(host),
                rule: self.text(rule),
            },
            UpstreamError::ToolError { message } => UpstreamError::ToolError {
                message: self.text(message),
            },
        }
    }

    /// `body` with every secret replaced; no copy when none occurs.
    pub fn bytes(&self, body: Bytes) -> Bytes {
        match self.replace(&body) {
            Cow::Borrowed(_) => body,
            Cow::Owned(v) => Bytes::from(v),
        }
    }

    /// `text` with every secret replaced.
    pub fn text(&self, text: String) -> String {
        self.replaced(&text).unwrap_or(text)
    }

    /// `text` with every secret replaced, or `None` when it holds none
    /// (so a caller keeps what it made the text from).
    pub fn replaced(&self, text: &str) -> Option<String> {
        match self.replace(text.as_bytes()) {
            Cow::Borrowed(_) => None,
            Cow::Owned(v) => Some(String::from_utf8_lossy(&v).into_owned()),
        }
    }

    fn replace<'a>(&self, haystack: &'a [u8]) -> Cow<'a, [u8]> {
        let mut current: Cow<'a, [u8]> = Cow::Borrowed(haystack);
        for finder in &self.finders {
            let needle = finder.needle();
            if finder.find(&current).is_none() {
                continue;
            }
            let mut out = Vec::with_capacity(current.len());
            let mut last = 0;
            for at in finder.find_iter(&current) {
                out.extend_from_slice(&current[last..at]);
                out.extend_from_slice(REDACTED.as_bytes());
                last = at + needle.len();
            }
            out.extend_from_slice(&current[last..]);
            current = Cow::Owned(out);
        }
        current
    }
}

/// A body redacted while it arrives (`Redactor::stream`). A secret may be
/// split between two pieces, so the bytes of a piece that could begin one
/// (one fewer than the longest secret) are held for the next.
pub struct RedactStream<'r> {
    redactor: &'r Redactor,
    held: Vec<u8>,
}

impl Redactor {
    /// A redaction of one body read piece by piece.
    pub fn stream(&self) -> RedactStream<'_> {
        RedactStream {
            redactor: self,
            held: Vec::new(),
        }
    }
}

impl RedactStream<'_> {
    /// Takes the next piece and hands `out` what is ready, redacted.
    pub fn push<E>(
        &mut self,
        piece: &[u8],
        out: &mut dyn FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(longest) = self.redactor.finders.first().map(|f| f.needle().len()) else {
            return out(piece);
        };
        self.held.extend_from_slice(piece);
        let mut cut = self.held.len().saturating_sub(longest - 1);
        // A secret that begins before the cut ends within what is held
        // (none is longer than `longest`): the cut moves past it, so no
        // secret is handed on in two parts.
        loop {
            let mut moved = false;
            for finder in &self.redactor.finders {
                let len = finder.needle().len();
                for at in finder.find_iter(&self.held) {
                    if at >= cut {
                        break;
                    }
                    if at + len > cut {
                        cut = at + len;
                        moved = true;
                    }
                }
            }
            if !moved {
                break;
            }
        }
        if cut == 0 {
            return Ok(());
        }
        out(&self.redactor.replace(&self.held[..cut]))?;
        self.held.drain(..cut);
        Ok(())
    }

    /// The body has ended: what was held, redacted.
    pub fn finish<E>(&mut self, out: &mut dyn FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        if self.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        out(&self.redactor.replace(&held))
    }
}

/// An upstream whose every answer (bodies, next links, error texts) is
/// scrubbed of the secrets `redactor` knows, besides whatever the upstream
/// redacts itself: how a caller holding more secrets than the upstream
/// (a gateway's token secret, another provider's credentials, a caller's
/// own) keeps them out of what it returns, stores, logs or caches.
pub struct Redacting<'a, U> {
    pub inner: &'a U,
    pub redactor: &'a Redactor,
}

impl<U: Upstream> Upstream for Redacting<'_, U> {
    async fn send(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        match self.inner.send(tool, arguments, max_bytes).await {
            Ok(response) => Ok(self.redactor.response(response)),
            Err(e) => Err(self.redactor.error(e)),
        }
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }

    fn link_target(&self, link: &str) -> Result<String, LinkRefused> {
        self.inner.link_target(link)
    }

    async fn send_link(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        url: &str,
        max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        match self.inner.send_link(tool, arguments, url, max_bytes).await {
            Ok(response) => Ok(self.redactor.response(response)),
            Err(e) => Err(self.redactor.error(e)),
        }
    }

    fn pacing(&self) -> Option<&Pacing> {
        self.inner.pacing()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_every_secret_is_replaced() {
        let creds = Credentials::Basic {
            user: "ada".into(),
            password: Secret::new("pa\"ss/word"),
        };
        let headers = vec![("X-Tenant".to_string(), Secret::new("tenant-42"))];
        let r = Redactor::new(&creds, &headers);
        let b64 = base64::engine::general_purpose::STANDARD.encode("ada:pa\"ss/word");
        let body = format!(
            r#"{{"auth":"Basic {b64}","echo":"pa\"ss/word","raw":"pa"ss/word","t":"tenant-42"}}"#
        );
        let out = r.text(body);
        assert!(!out.contains(&b64) && !out.contains("ss/word") && !out.contains("tenant-42"));
        assert_eq!(out.matches(REDACTED).count(), 4, "{out}");
    }

    /// `text` redacted in pieces of every size gives what the whole gives.
    fn streamed(r: &Redactor, text: &str, piece: usize) -> String {
        let mut out = Vec::new();
        let mut stream = r.stream();
        let mut keep = |p: &[u8]| -> Result<(), ()> {
            out.extend_from_slice(p);
            Ok(())
        };
        for chunk in text.as_bytes().chunks(piece) {
            stream.push(chunk, &mut keep).unwrap();
        }
        stream.finish(&mut keep).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_secret_split_between_pieces_is_still_replaced() {
        let mut r = Redactor::default();
        r.add("sekret-token-1234");
        r.add("token-12");
        r.add("abab-abab");
        let text =
            "x sekret-token-1234 y token-12 abab-abab-abab sekret-token-1234sekret-token-1234 z";
        let whole = r.text(text.to_string());
        assert!(!whole.contains("token-12") && !whole.contains("abab-abab"));
        for piece in 1..=text.len() {
            assert_eq!(streamed(&r, text, piece), whole, "pieces of {piece}");
        }
        let none = Redactor::default();
        assert_eq!(streamed(&none, text, 3), text);
    }

    #[test]
    fn no_copy_without_a_match_and_short_values_are_left() {
        let r = Redactor::new(&Credentials::Bearer(Secret::new("tok")), &[]);
        assert!(r.is_empty());
        let r = Redactor::new(&Credentials::Bearer(Secret::new("token-abc")), &[]);
        let body = Bytes::from_static(b"{\"a\":1}");
        let same = r.bytes(body.clone());
        assert_eq!(same.as_ptr(), body.as_ptr());
        assert_eq!(
            &r.bytes(Bytes::from_static(b"Bearer token-abc"))[..],
            b"Bearer [redacted]"
        );
        // `replaced` says whether there was anything to replace.
        assert_eq!(r.replaced("{\"a\":1}"), None);
        assert_eq!(
            r.replaced("{\"echo\":\"token-abc\"}").as_deref(),
            Some("{\"echo\":\"[redacted]\"}")
        );
    }
}
