//! An upstream MCP tool's answer passed to the agent as the server said it
//! (issue 24): on a binding without looping, a call is one request and its
//! answer is not a walk's, so every content block (text, images, audio,
//! resource links, embedded resources, with their annotations and `_meta`),
//! `structuredContent` and `isError` reach the agent unchanged — scrubbed of
//! every secret the call holds, and held to the size budget, binary blocks
//! counted by their encoded length. An answer over the budget goes the way
//! of any answer: cut, stored and said so (see [`crate::guard`]).

use std::sync::{Arc, Mutex};

use dragnet_core::budget::Budget;
use dragnet_core::clock::Clock;
use dragnet_core::{Limits, Tool, UpstreamError};
use dragnet_http::{send_with_retry, FetchError, Pacing, RawResponse, Redactor, Target, Upstream};
use dragnet_providers::mcp_tools::response_of;
use dragnet_providers::{McpUpstream, UpstreamProgressSink};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use super::Answer;
use crate::guard::{estimate_tokens, SizeBudget};

/// What a passed-through call came to.
pub(super) enum Passed {
    /// The answer, whole, within the budget.
    Whole(Answer),
    /// The answer, scrubbed, too large to pass whole: the guard cuts it.
    TooLarge(Answered),
}

/// Calls `tool` (retrying a dropped connection as any call does, within
/// `limits`) and keeps its answer as it was said. An error is the text the
/// agent reads.
#[allow(clippy::too_many_arguments)]
pub(super) async fn call(
    mcp: &McpUpstream,
    tool: &Tool,
    arguments: &Map<String, Value>,
    progress: &dyn UpstreamProgressSink,
    secrets: &Redactor,
    budget: SizeBudget,
    limits: Limits,
    clock: Arc<dyn Clock>,
) -> Result<Passed, String> {
    let capture = Capture {
        mcp,
        progress,
        kept: Mutex::new(None),
    };
    let bounds = Budget::new(limits, clock);
    let sent = send_with_retry(
        &capture,
        tool,
        Target::Arguments(arguments),
        &bounds,
        &Pacing::default(),
    )
    .await;
    let result = match (sent, capture.taken()) {
        (Ok(_), Some(result)) => result,
        (Ok(_), None) => return Err("the upstream MCP server gave no answer".into()),
        (Err(FetchError::Upstream(e)), _) => return Err(secrets.error(e).to_string()),
        (Err(FetchError::Stopped(reason)), _) => {
            return Err(format!(
                "the call stopped before an answer came: {}",
                reason.as_str()
            ))
        }
    };
    let text = serde_json::to_string(&result).unwrap_or_default();
    let scrubbed = secrets.text(text);
    // A secret is replaced inside the strings it sits in, so the JSON still
    // reads; if it ever did not, nothing passes whole.
    let Ok(result) = serde_json::from_str::<CallToolResult>(&scrubbed) else {
        return Err("the upstream's answer could not be read back after scrubbing".into());
    };
    if estimate_tokens(&scrubbed) <= budget.tokens {
        let whole = serde_json::from_str::<Value>(&scrubbed).ok();
        return Ok(Passed::Whole(Answer {
            text: String::new(),
            is_error: result.is_error == Some(true),
            whole,
        }));
    }
    Ok(Passed::TooLarge(Answered {
        result,
        identity: mcp.identity().to_string(),
    }))
}

/// One request's answer kept whole while the retry loop sees only that it
/// came.
struct Capture<'a> {
    mcp: &'a McpUpstream,
    progress: &'a dyn UpstreamProgressSink,
    kept: Mutex<Option<CallToolResult>>,
}

impl Capture<'_> {
    fn taken(&self) -> Option<CallToolResult> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Upstream for Capture<'_> {
    async fn send(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        _max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        let result = self.mcp.call_whole(tool, arguments, self.progress).await?;
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
        Ok(RawResponse {
            status: 200,
            retry_after: None,
            rate_limit: None,
            next_link: None,
            body: Default::default(),
        })
    }

    fn identity(&self) -> String {
        self.mcp.identity().to_string()
    }
}

/// An answer already received, as the loop layer's upstream: the one
/// request of a call that is not walked reads it (so a too-large answer is
/// cut and stored by the guard without asking the server twice).
pub(super) struct Answered {
    result: CallToolResult,
    identity: String,
}

impl Upstream for Answered {
    async fn send(
        &self,
        _tool: &Tool,
        _arguments: &Map<String, Value>,
        max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        response_of(&self.result, max_bytes)
    }

    fn identity(&self) -> String {
        self.identity.clone()
    }
}
