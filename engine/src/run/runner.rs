//! The seam between the executor and the loop layer: a tool step's call
//! goes through a `ToolRunner`. The one a run uses unless told otherwise is
//! `LoopLayer`, which is `dragnet_walk::execute`; a server or a test can
//! wrap it (to meter calls, or to make a step misbehave on purpose).

use std::future::Future;
use std::pin::Pin;

use dragnet_http::HttpUpstream;
use dragnet_walk::{LoopResult, Runtime, ToolCall};

/// What a `ToolRunner` returns: the call's future.
pub type CallFuture<'a> =
    Pin<Box<dyn Future<Output = Result<LoopResult, dragnet_core::Error>> + Send + 'a>>;

/// Makes one tool call of a step.
pub trait ToolRunner: Send + Sync {
    fn call<'a>(
        &'a self,
        call: ToolCall<'a>,
        upstream: &'a HttpUpstream,
        runtime: &'a Runtime<'a>,
    ) -> CallFuture<'a>;
}

/// The loop layer, as agents use it too.
pub struct LoopLayer;

impl ToolRunner for LoopLayer {
    fn call<'a>(
        &'a self,
        call: ToolCall<'a>,
        upstream: &'a HttpUpstream,
        runtime: &'a Runtime<'a>,
    ) -> CallFuture<'a> {
        Box::pin(dragnet_walk::execute(call, upstream, runtime))
    }
}
