//! An upstream MCP tool's answer passed to the agent as the server said it
//! (issue 24): on a binding without looping, a call is one request and its
//! answer is not a walk's, so every content block (text, images, audio,
//! resource links, embedded resources, with their annotations and `_meta`),
//! `structuredContent` and `isError` reach the agent unchanged — scrubbed of
//! every secret the call holds, and held to the size budget, binary blocks
//! counted by their encoded length. A binary block (an image, audio, an
//! embedded resource) that alone is over the budget is stored like a cut
//! answer and replaced by a note and a `resource_link` to it
//! (`dragnet://results/<id>`); the thread is not held to the retrieval rule
//! for it, since no collection was cut. An answer still over the budget
//! goes the way of any answer: cut, stored and said so (see
//! [`crate::guard`]).

use std::sync::{Arc, Mutex};

use dragnet_core::budget::Budget;
use dragnet_core::clock::Clock;
use dragnet_core::{Form, Limits, Payload, ResultScope, ResultStore, Tool, UpstreamError};
use dragnet_http::{send_with_retry, FetchError, Pacing, RawResponse, Redactor, Target, Upstream};
use dragnet_providers::mcp_tools::response_of;
use dragnet_providers::{McpUpstream, UpstreamProgressSink};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value};

use super::Answer;
use crate::guard::{estimate_tokens, SizeBudget};
use crate::results::{keep, ResultLink, StoredResult};

/// What a passed-through call came to.
pub(super) enum Passed {
    /// The answer, whole, within the budget.
    Whole(Answer),
    /// The answer, scrubbed, too large to pass whole: the guard cuts it.
    TooLarge(Answered),
}

/// What an answer passed through is held to, and where what is too large
/// goes.
pub(super) struct Guarding<'a> {
    /// Every secret the call holds.
    pub secrets: &'a Redactor,
    pub budget: SizeBudget,
    pub results: &'a dyn ResultStore<Payload>,
    pub scope: &'a ResultScope,
    pub clock: Arc<dyn Clock>,
}

/// Calls `tool` (retrying a dropped connection as any call does, within
/// `limits`) and keeps its answer as it was said. An error is the text the
/// agent reads.
pub(super) async fn call(
    mcp: &McpUpstream,
    tool: &Tool,
    arguments: &Map<String, Value>,
    progress: &dyn UpstreamProgressSink,
    limits: Limits,
    guarding: &Guarding<'_>,
) -> Result<Passed, String> {
    let secrets = guarding.secrets;
    let capture = Capture {
        mcp,
        progress,
        kept: Mutex::new(None),
    };
    let bounds = Budget::new(limits, guarding.clock.clone());
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
    // A secret is replaced inside the strings it sits in, so the JSON still
    // reads; if it ever did not, nothing passes whole. An answer that held
    // no secret is kept as it was read.
    let (mut result, text, exact) = match secrets.replaced(&text) {
        None => (result, text, true),
        Some(scrubbed) => match serde_json::from_str::<CallToolResult>(&scrubbed) {
            Ok(result) => (result, scrubbed, false),
            Err(_) => {
                return Err("the upstream's answer could not be read back after scrubbing".into())
            }
        },
    };
    // When `text` is `result` as written, each block's text is part of it:
    // an answer within the budget has no block over it alone.
    let within = exact && text.len() <= guarding.budget.chars();
    let linked = !within && link_large_blocks(&mut result, guarding).await?;
    let said = match linked {
        true => serde_json::to_string(&result).unwrap_or_default(),
        false => text,
    };
    if estimate_tokens(&said) <= guarding.budget.tokens {
        return Ok(Passed::Whole(Answer {
            is_error: result.is_error == Some(true),
            whole: Some(Box::new(result)),
            ..Answer::said("")
        }));
    }
    Ok(Passed::TooLarge(Answered {
        result,
        identity: mcp.identity().to_string(),
    }))
}

/// Stores each binary block of `result` that alone is over the budget and
/// puts a note and a link to it in its place; true when any was.
async fn link_large_blocks(
    result: &mut CallToolResult,
    guarding: &Guarding<'_>,
) -> Result<bool, String> {
    let mut linked = false;
    let mut content = Vec::with_capacity(result.content.len());
    for block in std::mem::take(&mut result.content) {
        let size = serde_json::to_string(&block).map_or(0, |t| t.len());
        let binary = match (&block, size > guarding.budget.chars()) {
            (_, false) => None,
            (ContentBlock::Image(image), true) => {
                Some(("image", base64(&image.data, &image.mime_type)))
            }
            (ContentBlock::Audio(audio), true) => {
                Some(("audio", base64(&audio.data, &audio.mime_type)))
            }
            (ContentBlock::Resource(embedded), true) => {
                of_resource(&embedded.resource).map(|kept| ("embedded resource", kept))
            }
            (_, true) => None,
        };
        let Some((kind, stored)) = binary else {
            content.push(block);
            continue;
        };
        let now = guarding.clock.now();
        let id = keep(guarding.results, guarding.scope, &stored, now)
            .await
            .map_err(|e| guarding.secrets.text(e.to_string()))?;
        let link = ResultLink::to(&id, &stored);
        content.push(ContentBlock::text(format!(
            "[The {kind} ({}, {} bytes) is larger than the size budget on its own, so it was \
             stored as {id} for 15 minutes: read the resource {} to get it.]",
            link.media_type,
            link.bytes,
            link.uri()
        )));
        content.push(crate::mcp::resources::link(&link));
        linked = true;
    }
    result.content = content;
    Ok(linked)
}

/// A binary block kept as its base64.
fn base64(data: &str, media_type: &str) -> StoredResult {
    StoredResult {
        text: data.to_string(),
        form: Form::Base64 {
            media_type: media_type.to_string(),
        },
        payload: no_rows(),
    }
}

/// An embedded resource kept as it was: its text, or its blob's base64
/// (`None` for contents of a kind this version does not know, which pass).
fn of_resource(resource: &ResourceContents) -> Option<StoredResult> {
    let (text, form) = match resource {
        ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => (
            text.clone(),
            Form::Text {
                media_type: mime_type.clone().unwrap_or_else(|| "text/plain".into()),
            },
        ),
        ResourceContents::BlobResourceContents {
            blob, mime_type, ..
        } => (
            blob.clone(),
            Form::Base64 {
                media_type: mime_type
                    .clone()
                    .unwrap_or_else(|| "application/octet-stream".into()),
            },
        ),
        _ => return None,
    };
    Some(StoredResult {
        text,
        form,
        payload: no_rows(),
    })
}

/// What queries of a stored block find: no rows.
fn no_rows() -> Payload {
    Payload::Single(dragnet_core::json::to_raw("null".to_string()))
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

#[cfg(test)]
mod tests {
    use dragnet_core::clock::SystemClock;
    use serde_json::json;

    use super::*;
    use crate::memory::Memory;
    use crate::results::find;

    #[tokio::test]
    async fn binary_blocks_over_the_budget_alone_are_stored_and_linked() {
        let big = "A".repeat(6_000);
        let mut result: CallToolResult = serde_json::from_value(json!({"content": [
            {"type": "text", "text": "Here it is:", "_meta": {"k": 1}},
            {"type": "audio", "data": big, "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "t://1", "mimeType": "text/csv", "text": big}},
            {"type": "resource", "resource": {"uri": "t://2", "blob": big}},
            {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
            {"type": "text", "text": big},
        ]}))
        .unwrap();
        let (store, secrets) = (Memory::default(), Redactor::default());
        let scope = ResultScope {
            org: "acme".into(),
            thread: "t1".into(),
        };
        let guarding = Guarding {
            secrets: &secrets,
            budget: SizeBudget { tokens: 1000 },
            results: &store,
            scope: &scope,
            clock: Arc::new(SystemClock),
        };
        assert!(link_large_blocks(&mut result, &guarding).await.unwrap());
        let blocks = serde_json::to_value(&result.content).unwrap();
        let kinds: Vec<&str> = blocks
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        // Text stays (the guard cuts it), a small image stays; each large
        // binary block became a note and a link, in its place.
        assert_eq!(
            kinds,
            [
                "text",
                "text",
                "resource_link",
                "text",
                "resource_link",
                "text",
                "resource_link",
                "image",
                "text"
            ]
        );
        assert_eq!(blocks[0]["_meta"], json!({"k": 1}));
        let expected = [
            (
                2,
                Form::Base64 {
                    media_type: "audio/wav".into(),
                },
            ),
            (
                4,
                Form::Text {
                    media_type: "text/csv".into(),
                },
            ),
            (
                6,
                Form::Base64 {
                    media_type: "application/octet-stream".into(),
                },
            ),
        ];
        for (at, form) in expected {
            let link = &blocks[at];
            assert_eq!(link["mimeType"], form.media_type(), "{link}");
            assert_eq!(link["size"], big.len(), "{link}");
            let uri = link["uri"].as_str().unwrap();
            assert!(blocks[at - 1]["text"].as_str().unwrap().contains(uri));
            let id = uri.strip_prefix(crate::results::RESOURCE_PREFIX).unwrap();
            let kept = find(&store, &scope, id, guarding.clock.now())
                .await
                .unwrap();
            assert_eq!((kept.text, kept.form), (big.clone(), form));
        }
    }
}
