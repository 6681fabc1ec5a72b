//! The page journal (SPEC §9): where a walk keeps the pages it fetched, so
//! that a later attempt at the same work — a run taken over by another
//! process, or a step tried again — reads them back instead of asking the
//! upstream again. A page is kept under the key of the request that fetched
//! it (which upstream, which operation, the arguments with the page's
//! position in them), so a walk that replays its pages takes exactly the
//! path it took before and continues with the first request it never made.
//! The walk knows nothing of where pages live: the caller hands it a
//! `PageJournal` (the run store's, for server runs). The keys and the
//! journal a call walks with are dragnet-walk's (`journal`).

use bytes::Bytes;

use super::BoxFuture;

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
