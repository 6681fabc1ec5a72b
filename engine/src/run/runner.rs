//! The seam between the executor and the loop layer: a tool step's call
//! goes through a `ToolRunner`. The one a run uses unless told otherwise is
//! `LoopLayer`, which is `dragnet_walk::execute`; a server or a test can
//! wrap it (to meter calls, or to make a step misbehave on purpose).

use std::future::Future;
use std::pin::Pin;

use dragnet_http::redact::Redacting;
use dragnet_http::HttpUpstream;
use dragnet_providers::McpCall;
use dragnet_walk::{LoopResult, Runtime, ToolCall};

/// What a `ToolRunner` returns: the call's future.
pub type CallFuture<'a> =
    Pin<Box<dyn Future<Output = Result<LoopResult, dragnet_core::Error>> + Send + 'a>>;

/// Where one call of a step goes: the same two kinds of upstream an
/// agent's call reaches.
#[derive(Clone, Copy)]
pub enum CallTarget<'a> {
    /// An OpenAPI provider's HTTP client.
    Http(&'a HttpUpstream),
    /// An upstream MCP server, its answers scrubbed of the secrets read
    /// for it.
    Mcp(&'a Redacting<'a, McpCall<'a>>),
}

/// Makes one tool call of a step.
pub trait ToolRunner: Send + Sync {
    fn call<'a>(
        &'a self,
        call: ToolCall<'a>,
        upstream: CallTarget<'a>,
        runtime: &'a Runtime<'a>,
    ) -> CallFuture<'a>;
}

/// The loop layer, as agents use it too.
pub struct LoopLayer;

impl ToolRunner for LoopLayer {
    fn call<'a>(
        &'a self,
        call: ToolCall<'a>,
        upstream: CallTarget<'a>,
        runtime: &'a Runtime<'a>,
    ) -> CallFuture<'a> {
        match upstream {
            CallTarget::Http(http) => Box::pin(dragnet_walk::execute(call, http, runtime)),
            CallTarget::Mcp(mcp) => Box::pin(dragnet_walk::execute(call, mcp, runtime)),
        }
    }
}
