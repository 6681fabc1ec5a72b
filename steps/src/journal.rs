//! The page journal (SPEC §9): where a walk keeps the pages it fetched, so
//! that a later attempt at the same work — a run taken over by another
//! process, or a step tried again — reads them back instead of asking the
//! upstream again. A page is kept under the key of the request that fetched
//! it (which upstream, which operation, the arguments with the page's
//! position in them), so a walk that replays its pages takes exactly the
//! path it took before and continues with the first request it never made.
//! The walk knows nothing of where pages live: the caller hands it a
//! `PageJournal` (the run store's, for server runs).

use bytes::Bytes;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::cache::key::canonical;
use crate::cache::BoxFuture;
use crate::http::Target;
use crate::Tool;

/// A page kept by an earlier attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptPage {
    pub status: u16,
    /// The answer's `Link` header's next target, for walks that follow it.
    pub next_link: Option<String>,
    pub body: Bytes,
}

/// Where pages are kept. Failures are the journal's to log: a page that
/// could not be kept is fetched again next time, one that cannot be read
/// back is fetched now.
pub trait PageJournal: Send + Sync {
    /// The page kept for request `key` in `scope`, if any.
    fn recall<'a>(&'a self, scope: &'a str, key: &'a str) -> BoxFuture<'a, Option<KeptPage>>;
    /// Keeps the page fetched for request `key` in `scope`.
    fn keep<'a>(&'a self, scope: &'a str, key: &'a str, page: &'a KeptPage) -> BoxFuture<'a, ()>;
}

/// A journal and the scope a call's pages are kept in (a step of a run).
#[derive(Clone, Copy)]
pub struct Journal<'a> {
    pub store: &'a dyn PageJournal,
    pub scope: &'a str,
}

/// The key of one request: the upstream that answers, the operation, and
/// the arguments (keys sorted), position included — or, for a page reached
/// by a next-page link, the link too.
pub fn request_key(upstream: &str, tool: &Tool, target: Target<'_>) -> String {
    let (arguments, link) = match target {
        Target::Arguments(arguments) => (arguments, None),
        Target::Link { arguments, url } => (arguments, Some(url)),
    };
    let mut material = json!({
        "upstream": upstream,
        "method": tool.method.as_upper(),
        "path": tool.path,
        "arguments": canonical(&Value::Object(arguments.clone())),
    });
    if let Some(link) = link {
        material["link"] = Value::String(link.to_string());
    }
    let digest = Sha256::digest(material.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
