//! Retries (SPEC §2): 429 and 503 honour `Retry-After` within what is left
//! of the wall clock; other 5xx and connection errors back off
//! exponentially with jitter. Every attempt is a request against the budget
//! and waits first for the host's pacing (`pacing.rs`), which learns from
//! every answer.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::pacing::Pacing;
use crate::{BodySink, RawResponse, Upstream};
use dragnet_core::budget::{Budget, RetryPolicy};
use dragnet_core::error::excerpt;
use dragnet_core::verdict::StopReason;
use dragnet_core::{Tool, UpstreamError};

/// Why no successful answer came back.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchError {
    /// The upstream failed (after retries, when retryable).
    Upstream(UpstreamError),
    /// A bound of the budget forbade another attempt.
    Stopped(StopReason),
}

/// Where one request goes.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// The tool's own path and query, built from the arguments.
    Arguments(&'a Map<String, Value>),
    /// A next-page link the upstream accepted (`Upstream::link_target`),
    /// with the arguments' header parameters and body.
    Link {
        arguments: &'a Map<String, Value>,
        url: &'a str,
    },
}

impl<'a> Target<'a> {
    async fn send<U: Upstream>(
        self,
        upstream: &U,
        tool: &Tool,
        room: u64,
        sink: Option<&mut (dyn BodySink + '_)>,
    ) -> Result<RawResponse, UpstreamError> {
        match (self, sink) {
            (Target::Arguments(args), None) => upstream.send(tool, args, room).await,
            (Target::Arguments(args), Some(sink)) => {
                upstream.send_into(tool, args, room, sink).await
            }
            (Target::Link { arguments, url }, None) => {
                upstream.send_link(tool, arguments, url, room).await
            }
            (Target::Link { arguments, url }, Some(sink)) => {
                upstream
                    .send_link_into(tool, arguments, url, room, sink)
                    .await
            }
        }
    }
}

/// Sends one request, retrying as SPEC §2 says, and returns a 2xx answer.
pub async fn send_with_retry<U: Upstream>(
    upstream: &U,
    tool: &Tool,
    target: Target<'_>,
    budget: &Budget,
    pacing: &Pacing,
) -> Result<RawResponse, FetchError> {
    attempts(upstream, tool, target, budget, pacing, None).await
}

/// As [`send_with_retry`], with a 2xx answer's body handed to `sink` while
/// it arrives (the answer returned has an empty body). Every attempt
/// begins the sink again.
pub async fn send_with_retry_into<U: Upstream>(
    upstream: &U,
    tool: &Tool,
    target: Target<'_>,
    budget: &Budget,
    pacing: &Pacing,
    sink: &mut dyn BodySink,
) -> Result<RawResponse, FetchError> {
    attempts(upstream, tool, target, budget, pacing, Some(sink)).await
}

async fn attempts<U: Upstream>(
    upstream: &U,
    tool: &Tool,
    target: Target<'_>,
    budget: &Budget,
    pacing: &Pacing,
    mut sink: Option<&mut dyn BodySink>,
) -> Result<RawResponse, FetchError> {
    let mut retries = 0u32;
    loop {
        let ticket = pacing.admit(budget).await.map_err(FetchError::Stopped)?;
        budget.take_request().map_err(FetchError::Stopped)?;
        let room = budget.limits.max_bytes.saturating_sub(budget.bytes());
        if let Some(sink) = sink.as_deref_mut() {
            sink.begin();
        }
        let send = target.send(upstream, tool, room, sink.as_deref_mut());
        let answer = tokio::time::timeout_at(budget.deadline(), send)
            .await
            .map_err(|_| FetchError::Stopped(StopReason::WallClock))?;
        let error = match answer {
            Err(UpstreamError::ByteBound { read }) => {
                budget.add_bytes(read.max(room));
                return Err(FetchError::Stopped(StopReason::Bytes));
            }
            Ok(response) => {
                ticket.answered(&response);
                let streamed = sink.as_deref().map_or(0, |s| s.taken());
                budget.add_bytes(response.body.len() as u64 + streamed);
                budget.count_answer(Some(response.status));
                if (200..300).contains(&response.status) {
                    return Ok(response);
                }
                UpstreamError::Status {
                    status: response.status,
                    excerpt: excerpt(&response.body),
                    retry_after_ms: response.retry_after.map(|d| d.as_millis() as u64),
                }
            }
            Err(error) => {
                drop(ticket);
                budget.count_answer(None);
                error
            }
        };
        if !error.is_retryable() || retries >= budget.limits.retry.max_retries {
            return Err(FetchError::Upstream(error));
        }
        let delay = delay_for(&error, retries, &budget.limits.retry);
        if delay >= budget.remaining() {
            // Waiting as long as asked would outlast the call.
            return Err(FetchError::Stopped(StopReason::WallClock));
        }
        tracing::debug!(
            tool = %tool.name,
            retry = retries + 1,
            delay_ms = delay.as_millis() as u64,
            "retrying upstream request"
        );
        tokio::time::sleep(delay).await;
        retries += 1;
    }
}

/// How long to wait before retry number `retries + 1`.
fn delay_for(error: &UpstreamError, retries: u32, policy: &RetryPolicy) -> Duration {
    if let UpstreamError::Status {
        status: 429 | 503,
        retry_after_ms: Some(ms),
        ..
    } = error
    {
        return Duration::from_millis(*ms);
    }
    let exp = policy
        .base_backoff
        .saturating_mul(2u32.saturating_pow(retries))
        .min(policy.max_backoff);
    let jitter: f64 = rand::random_range(0.5..1.5);
    exp.mul_f64(jitter).min(policy.max_backoff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_wins_for_429_and_503() {
        let policy = RetryPolicy::default();
        let e = UpstreamError::Status {
            status: 429,
            excerpt: String::new(),
            retry_after_ms: Some(1500),
        };
        assert_eq!(delay_for(&e, 0, &policy), Duration::from_millis(1500));
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 10,
            base_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
        };
        let e = UpstreamError::Status {
            status: 500,
            excerpt: String::new(),
            retry_after_ms: None,
        };
        let first = delay_for(&e, 0, &policy);
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(150));
        let later = delay_for(&e, 8, &policy);
        assert!(later <= Duration::from_secs(1));
    }
}
