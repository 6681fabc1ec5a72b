//! Shared harness for the end-to-end tests (the suites are `tests/*.rs`):
//! the demo shop on a free port with its imported toolkit ([`Harness`]),
//! calls through the real HTTP upstream with a fault header and a per-test
//! session, the bounds tests use ([`test_limits`], [`sim_limits`]), walks
//! over any upstream or a router served on a free port ([`walk_with`],
//! [`walk_served`], [`walk_ids`], [`page_ids`]), and what tests read of a
//! result ([`items`], [`ids`], [`agent_view`]).
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use dragnet_core::secret::Secret;
use dragnet_core::{Error, Limits, RetryPolicy, Tool, Toolkit};
use dragnet_http::{Credentials, HttpUpstream, Upstream};
use dragnet_shop::{RecordedRequest, ShopHandle};
use dragnet_walk::{LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::Value;

/// A running shop and its toolkit.
pub struct Harness {
    pub shop: ShopHandle,
    pub toolkit: Toolkit,
}

static SESSION: AtomicU64 = AtomicU64::new(1);

/// Limits with quick retries, so fault tests do not sleep for long.
pub fn test_limits() -> Limits {
    Limits {
        retry: RetryPolicy {
            max_retries: 3,
            base_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(50),
        },
        ..Limits::default()
    }
}

impl Harness {
    pub async fn start() -> Harness {
        let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("the shop starts");
        let toolkit = dragnet_openapi::import_file(&dragnet_shop::openapi_path())
            .expect("the shop document imports");
        Harness { shop, toolkit }
    }

    pub fn tool(&self, name: &str) -> &Tool {
        self.toolkit
            .tool(name)
            .unwrap_or_else(|| panic!("the shop has no tool {name}"))
    }

    /// An upstream that sends `fault` (may be empty) in a fresh session.
    pub fn upstream(&self, fault: &str) -> HttpUpstream {
        let session = SESSION.fetch_add(1, Ordering::Relaxed);
        let mut up = HttpUpstream::new(self.shop.base_url(), Credentials::None)
            .expect("client")
            .with_header("X-Shop-Session", Secret::new(format!("s{session}")));
        if !fault.is_empty() {
            up = up.with_header("X-Shop-Fault", Secret::new(fault));
        }
        up
    }

    /// Calls `tool` the way an agent does: arguments with reserved ones.
    pub async fn call(&self, tool: &str, args: Value, fault: &str) -> Result<LoopResult, Error> {
        self.call_with(tool, args, fault, test_limits()).await
    }

    pub async fn call_with(
        &self,
        tool: &str,
        args: Value,
        fault: &str,
        limits: Limits,
    ) -> Result<LoopResult, Error> {
        let upstream = self.upstream(fault);
        self.call_through(tool, args, &upstream, limits, &Runtime::quiet())
            .await
    }

    /// Calls `tool` with `args` (reserved ones included) through
    /// `upstream`, with `limits` and `runtime`.
    pub async fn call_through<U: Upstream>(
        &self,
        tool: &str,
        args: Value,
        upstream: &U,
        limits: Limits,
        runtime: &Runtime<'_>,
    ) -> Result<LoopResult, Error> {
        let Value::Object(map) = args else {
            panic!("arguments are an object")
        };
        let (arguments, options) = LoopOptions::split_reserved(map)?;
        let call = ToolCall {
            tool: self.tool(tool),
            arguments,
            options,
            limits,
            cache: None,
        };
        dragnet_walk::execute(call, upstream, runtime).await
    }

    /// The requests the shop received, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shop.requests()
    }
}

/// The visible items of a result as JSON values.
pub fn items(result: &LoopResult) -> Vec<Value> {
    result
        .visible()
        .iter()
        .map(|row| serde_json::from_str(row).expect("rows are JSON"))
        .collect()
}

/// The `id` of every visible item.
pub fn ids(result: &LoopResult) -> Vec<i64> {
    items(result)
        .iter()
        .map(|i| {
            i.get("id")
                .and_then(Value::as_i64)
                .expect("items have integer ids")
        })
        .collect()
}

/// The agent rendering parsed back.
pub fn agent_view(result: &LoopResult) -> Value {
    serde_json::from_str(&dragnet_gateway::render::render(result)).expect("the rendering is JSON")
}

/// Serves `router` on a free local port; the base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("a free local port");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

/// The tool `name` of an OpenAPI document given as text.
pub fn tool_from_doc(doc: &str, name: &str) -> Tool {
    let dir = std::env::temp_dir().join(format!(
        "dragnet-e2e-doc-{}-{}",
        std::process::id(),
        SESSION.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("openapi.json");
    std::fs::write(&file, doc).expect("the document is written");
    let toolkit = dragnet_openapi::import_file(&file).expect("the document imports");
    let tool = toolkit.tool(name).expect("the tool exists").clone();
    let _ = std::fs::remove_dir_all(&dir);
    tool
}

/// Walks every page of `tool` through `upstream` with `limits` (one call
/// when the tool cannot be walked).
pub async fn walk_with<U: Upstream>(
    tool: &Tool,
    upstream: &U,
    limits: Limits,
) -> Result<LoopResult, Error> {
    let call = ToolCall {
        tool,
        arguments: Default::default(),
        options: LoopOptions {
            all_pages: tool.can_walk(),
            ..LoopOptions::default()
        },
        limits,
        cache: None,
    };
    dragnet_walk::execute(call, upstream, &Runtime::quiet()).await
}

/// Serves `router` on a free port and walks its operation `name` of
/// `doc` there with the test limits: the tool, and the walk's result.
pub async fn walk_served(router: axum::Router, doc: &str, name: &str) -> (Tool, LoopResult) {
    let base = serve(router).await;
    let tool = tool_from_doc(doc, name);
    let upstream = HttpUpstream::new(&base, Credentials::None).expect("a client");
    let result = walk_with(&tool, &upstream, test_limits())
        .await
        .expect("the walk answers");
    (tool, result)
}

/// Walks every page of `tool` through a generated `upstream` on a paused
/// single-thread runtime (so retries' sleeps cost nothing): the verdict's
/// completeness and the rows' `id`s, or `None` when the call failed.
pub fn walk_ids<U: Upstream>(
    tool: &Tool,
    upstream: &U,
    limits: Limits,
) -> Option<(bool, Vec<i64>)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let result = rt.block_on(walk_with(tool, upstream, limits)).ok()?;
    Some((result.verdict.complete, ids(&result)))
}

/// Calls `tool` once through a generated `upstream` with `arguments` and
/// no walk (one page), on a paused single-thread runtime: the verdict's
/// completeness and the rows' `id`s, or `None` when the call failed.
pub fn page_ids<U: Upstream>(
    tool: &Tool,
    upstream: &U,
    arguments: serde_json::Map<String, Value>,
    limits: Limits,
) -> Option<(bool, Vec<i64>)> {
    let call = ToolCall {
        tool,
        arguments,
        options: LoopOptions::default(),
        limits,
        cache: None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let result = rt
        .block_on(dragnet_walk::execute(call, upstream, &Runtime::quiet()))
        .ok()?;
    Some((result.verdict.complete, ids(&result)))
}

/// Limits for generated upstreams: `pages`, `items` and `requests`, with
/// quick retries.
pub fn sim_limits(pages: u32, items: usize, requests: u32) -> Limits {
    Limits {
        max_pages: pages,
        max_items: items,
        max_requests: requests,
        retry: RetryPolicy {
            max_retries: 2,
            base_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
        },
        ..Limits::default()
    }
}

/// How many of the shop's orders are open.
pub fn open_count() -> usize {
    dragnet_shop::dataset()
        .orders()
        .iter()
        .filter(|o| o.status == dragnet_shop::OrderStatus::Open)
        .count()
}
