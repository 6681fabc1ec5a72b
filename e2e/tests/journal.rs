//! The page journal over real HTTP: a walk keeps every page it fetches;
//! a later attempt with the same journal reads the kept pages back instead
//! of asking the shop, continues with the first page nobody kept, counts
//! the pages read back as requests (so the bounds hold across attempts),
//! returns the rows a fresh walk returns, and says it resumed. Pages kept
//! for one request never answer another (another page size, another
//! upstream).

use std::collections::HashMap;
use std::sync::Mutex;

use dragnet_core::ports::journal::{KeptPage, PageJournal};
use dragnet_core::ports::BoxFuture;
use dragnet_core::{Limits, StopReason};
use dragnet_e2e::{ids, test_limits, Harness};
use dragnet_walk::journal::Journal;
use dragnet_walk::{LoopResult, Runtime};
use serde_json::{json, Value};

/// Pages in memory, by scope and key, in the order they were kept.
#[derive(Default)]
struct Memory(Mutex<Vec<(String, String, KeptPage)>>);

impl Memory {
    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    /// Keeps only the first `n` pages kept (as if the attempt died then).
    fn truncate(&self, n: usize) {
        self.0.lock().unwrap().truncate(n);
    }
}

impl PageJournal for Memory {
    fn recall<'a>(&'a self, scope: &'a str, key: &'a str) -> BoxFuture<'a, Option<KeptPage>> {
        let found = self
            .0
            .lock()
            .unwrap()
            .iter()
            .find(|(s, k, _)| s == scope && k == key)
            .map(|(_, _, p)| p.clone());
        Box::pin(async move { found })
    }
    fn keep<'a>(&'a self, scope: &'a str, key: &'a str, page: &'a KeptPage) -> BoxFuture<'a, ()> {
        self.0
            .lock()
            .unwrap()
            .push((scope.into(), key.into(), page.clone()));
        Box::pin(async {})
    }
}

async fn walk(h: &Harness, memory: &Memory, per_page: u64, limits: Limits) -> LoopResult {
    let args = json!({"status": "open", "per_page": per_page, "_all_pages": true});
    walk_tool(h, memory, "listOrders", args, limits).await
}

async fn walk_tool(
    h: &Harness,
    memory: &Memory,
    tool: &str,
    args: Value,
    limits: Limits,
) -> LoopResult {
    let runtime = Runtime {
        journal: Some(Journal {
            store: memory,
            scope: "orders",
        }),
        ..Runtime::quiet()
    };
    h.call_through(tool, args, &h.upstream(""), limits, &runtime)
        .await
        .unwrap()
}

fn orders_requests(h: &Harness) -> usize {
    h.requests().iter().filter(|r| r.path == "/orders").count()
}

#[tokio::test]
async fn a_walk_resumes_from_the_pages_an_earlier_attempt_kept() {
    let h = Harness::start().await;
    let memory = Memory::default();
    let fresh = walk(&h, &memory, 100, test_limits()).await;
    assert!(fresh.verdict.complete, "{}", fresh.verdict.note);
    let pages = orders_requests(&h);
    assert!(pages >= 5, "a walk of {pages} pages");
    assert_eq!(memory.len(), pages, "every page fetched is kept");
    assert!(
        !fresh.verdict.note.contains("Resumed"),
        "{}",
        fresh.verdict.note
    );

    // The first attempt died after three pages: the next reads those back
    // and fetches the rest, once each.
    memory.truncate(3);
    let resumed = walk(&h, &memory, 100, test_limits()).await;
    assert_eq!(orders_requests(&h), pages + (pages - 3));
    assert_eq!(ids(&resumed), ids(&fresh), "the same rows, in order");
    assert!(resumed.verdict.complete);
    assert_eq!(resumed.verdict.requests, fresh.verdict.requests);
    assert!(
        resumed
            .verdict
            .note
            .contains("Resumed: 3 pages read back from an earlier attempt"),
        "{}",
        resumed.verdict.note
    );

    // Another page size is another walk: nothing kept answers it.
    let before = orders_requests(&h);
    let other = walk(&h, &memory, 90, test_limits()).await;
    assert!(
        !other.verdict.note.contains("Resumed"),
        "{}",
        other.verdict.note
    );
    assert_eq!(
        (orders_requests(&h) - before) as u32,
        other.verdict.requests,
        "every page of it fetched"
    );
}

#[tokio::test]
async fn pages_read_back_count_against_the_request_bound() {
    let h = Harness::start().await;
    let memory = Memory::default();
    let _ = walk(&h, &memory, 100, test_limits()).await;
    memory.truncate(3);
    let before = orders_requests(&h);
    let limits = Limits {
        max_requests: 4,
        ..test_limits()
    };
    let r = walk(&h, &memory, 100, limits).await;
    assert_eq!(r.verdict.stopped_by, Some(StopReason::Requests));
    assert_eq!(r.verdict.requests, 4);
    assert_eq!(
        orders_requests(&h),
        before + 1,
        "one page fetched after three read back"
    );
}

#[tokio::test]
async fn a_kept_page_never_answers_another_upstream() {
    // Two shops: the same request to another server is another request.
    let a = Harness::start().await;
    let b = Harness::start().await;
    let memory = Memory::default();
    let _ = walk(&a, &memory, 100, test_limits()).await;
    let r = walk(&b, &memory, 100, test_limits()).await;
    assert!(!r.verdict.note.contains("Resumed"), "{}", r.verdict.note);
    assert_eq!(orders_requests(&b), orders_requests(&a));
    let scopes: HashMap<String, usize> =
        memory
            .0
            .lock()
            .unwrap()
            .iter()
            .fold(HashMap::new(), |mut m, (s, _, _)| {
                *m.entry(s.clone()).or_default() += 1;
                m
            });
    assert_eq!(scopes.len(), 1);
}

#[tokio::test]
async fn walks_by_next_url_and_link_header_resume_along_the_kept_links() {
    let h = Harness::start().await;
    for (tool, path, args) in [
        (
            "listLinkedCustomers",
            "/github/customers",
            json!({"limit": 40, "_all_pages": true}),
        ),
        (
            "listTwilioCustomers",
            "/twilio/customers",
            json!({"PageSize": 40, "_all_pages": true}),
        ),
    ] {
        h.shop.clear_requests();
        let memory = Memory::default();
        let count = |h: &Harness| h.requests().iter().filter(|r| r.path == path).count();
        let fresh = walk_tool(&h, &memory, tool, args.clone(), test_limits()).await;
        assert!(fresh.verdict.complete, "{tool}: {}", fresh.verdict.note);
        let pages = count(&h);
        assert_eq!(memory.len(), pages, "{tool}");
        memory.truncate(4);
        let resumed = walk_tool(&h, &memory, tool, args, test_limits()).await;
        assert_eq!(
            count(&h),
            pages + (pages - 4),
            "{tool}: only the pages not kept"
        );
        assert_eq!(ids(&resumed), ids(&fresh), "{tool}");
        assert!(resumed.verdict.complete, "{tool}: {}", resumed.verdict.note);
        // The fifth page was asked for by the link page four kept.
        let fifth = &h.requests()[pages];
        assert!(
            fifth
                .query
                .iter()
                .any(|(k, _)| k == "after" || k == "PageToken"),
            "{tool}: {:?}",
            fifth.query
        );
    }
}
