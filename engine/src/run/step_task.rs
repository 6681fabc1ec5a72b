//! One step's task: it waits for a permit, runs a tool step (timeouts and
//! retries of what may pass the second time), and reports its record
//! back; a branch is decided at once by the executor ([`decide_now`]). A panic in the step fails that step, named; a task that
//! ends abnormally anyway is named by the executor through its task id.

use dragnet_core::{Document, Payload};
use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use chrono::Utc;
use dragnet_core::clock::Clock;
use dragnet_core::progress::NoProgress;
use dragnet_http::redact::Redacting;
use dragnet_providers::McpCall;
use futures::FutureExt;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task;
use tokio::time::Instant;

use super::branch::{decide, Decision};
use super::incremental::{self, Shaping};
use super::record::{StepRecord, StepStatus, StepType, StepVerdict};
use super::runner::CallTarget;
use super::step_error::{ProviderError, StepError};
use super::tool_step::{self, CallContext};
use super::upstreams::{StepUpstream, Upstreams};
use crate::refs::Scope;
use crate::watermark::{WatermarkMove, WatermarkSource};
use crate::workflow::model::{BranchStep, Step, StepKind, StepTool, ToolStep, Workflow};

/// What a finished step task reports back.
pub(super) struct Finished {
    pub(super) index: usize,
    pub(super) record: StepRecord,
    pub(super) decision: Option<Decision>,
}

/// Everything step tasks share.
pub(super) struct Shared {
    pub(super) workflow: Arc<Workflow>,
    pub(super) run_id: String,
    /// Where incremental steps' watermarks are read.
    pub(super) watermarks: Option<Arc<dyn WatermarkSource>>,
    pub(super) upstreams: Upstreams,
    pub(super) calls: CallContext,
    pub(super) semaphore: Semaphore,
}

/// Runs step `index` once its permit comes, filling its pending `record`;
/// never panics.
pub(super) async fn run_step(
    shared: Arc<Shared>,
    index: usize,
    mut record: StepRecord,
    scope: Scope,
) -> Finished {
    let step = &shared.workflow.steps[index];
    let _permit = shared.semaphore.acquire().await;
    record.status = StepStatus::Running;
    let clock = shared.calls.clock.clone();
    record.started_at = Some(clock.now());
    let started = clock.instant();
    let mut decision = None;
    // A panic anywhere in the step fails this step, named, with what the
    // record held when it happened; the run goes on as for any failure.
    let body = AssertUnwindSafe(step_body(&shared, step, &scope, &mut record, &mut decision))
        .catch_unwind()
        .await;
    let ended = Ended {
        index,
        record,
        decision,
        body,
    };
    ended.finish(step.id.as_str(), clock.as_ref(), started)
}

/// A step's record when its body returned, or panicked (`body`).
struct Ended {
    index: usize,
    record: StepRecord,
    decision: Option<Decision>,
    body: Result<(), Box<dyn Any + Send>>,
}

impl Ended {
    /// The step's report: a panic fails it, named `id`, with what the
    /// record held when it happened; its time runs from `started`.
    fn finish(mut self, id: &str, clock: &dyn Clock, started: Instant) -> Finished {
        if let Err(payload) = self.body {
            self.decision = None;
            self.record.output = None;
            self.record.verdict = None;
            fail(&mut self.record, &panicked(id, payload.as_ref()));
        }
        self.record.finished_at = Some(clock.now());
        self.record.duration_ms = clock
            .instant()
            .saturating_duration_since(started)
            .as_millis() as u64;
        Finished {
            index: self.index,
            record: self.record,
            decision: self.decision,
        }
    }
}

async fn step_body(
    shared: &Shared,
    step: &Step,
    scope: &Scope,
    record: &mut StepRecord,
    decision: &mut Option<Decision>,
) {
    match &step.kind {
        StepKind::Branch(b) => branch_body(b, scope, record, decision),
        StepKind::Tool(t) => run_tool(shared, step, t, scope, record).await,
    }
}

/// Decides branch step `index` now, on the calling task, filling its
/// pending `record` as `run_step` does (a panic fails the step, named);
/// never panics.
pub(super) fn decide_now(
    shared: &Shared,
    branch: &BranchStep,
    index: usize,
    mut record: StepRecord,
    scope: &Scope,
) -> Finished {
    let clock = shared.calls.clock.as_ref();
    record.status = StepStatus::Running;
    record.started_at = Some(clock.now());
    let started = clock.instant();
    let mut decision = None;
    let body = std::panic::catch_unwind(AssertUnwindSafe(|| {
        branch_body(branch, scope, &mut record, &mut decision)
    }));
    let ended = Ended {
        index,
        record,
        decision,
        body,
    };
    ended.finish(shared.workflow.steps[index].id.as_str(), clock, started)
}

fn branch_body(
    b: &BranchStep,
    scope: &Scope,
    record: &mut StepRecord,
    decision: &mut Option<Decision>,
) {
    record.attempts = 1;
    match decide(b, scope) {
        Ok((d, value)) => {
            record.output = raw(&d.output(&value));
            record.status = StepStatus::Succeeded;
            *decision = Some(d);
        }
        Err(e) => fail(record, &StepError::from(e)),
    }
}

/// The record of a step whose task ended without reporting back.
pub(super) fn abnormal_end(
    step: &Step,
    index: usize,
    e: task::JoinError,
    now: chrono::DateTime<Utc>,
) -> Finished {
    tracing::error!(step_id = %step.id.as_str(), error = %e, "a step task ended abnormally");
    let mut record = StepRecord::pending(step.id.as_str(), kind_name(step));
    let error = match e.try_into_panic() {
        Ok(payload) => panicked(step.id.as_str(), payload.as_ref()),
        Err(_) => StepError::Cancelled,
    };
    fail(&mut record, &error);
    if matches!(error, StepError::Cancelled) {
        record.status = StepStatus::Cancelled;
    }
    record.finished_at = Some(now);
    Finished {
        index,
        record,
        decision: None,
    }
}

/// A panic's payload as a step failure: its message when it has one.
fn panicked(step: &str, payload: &(dyn Any + Send)) -> StepError {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string());
    StepError::Panicked {
        step: step.to_string(),
        message,
    }
}

async fn run_tool(
    shared: &Shared,
    step: &Step,
    t: &ToolStep,
    scope: &Scope,
    record: &mut StepRecord,
) {
    let upstream = match shared.upstreams.get(&t.provider) {
        Ok(u) => u,
        Err(e) => return fail(record, &e.into()),
    };
    let tool = match (&t.tool, upstream) {
        (StepTool::OpenApi(tool), _) => tool.clone(),
        (StepTool::Mcp(name), StepUpstream::Mcp(mcp)) => match mcp.tool(&t.provider, name) {
            Ok(tool) => tool,
            Err(e) => return fail(record, &e.into()),
        },
        (StepTool::Mcp(name), StepUpstream::Http(_)) => {
            let unknown = ProviderError::UnknownTool {
                provider: t.provider.clone(),
                tool: name.clone(),
                tools: "(an OpenAPI provider)".into(),
            };
            return fail(record, &unknown.into());
        }
    };
    // An MCP server's call: its answers scrubbed of the secrets read for it.
    let (mcp_call, redacting);
    let target = match upstream {
        StepUpstream::Http(http) => CallTarget::Http(http),
        StepUpstream::Mcp(mcp) => {
            mcp_call = McpCall {
                upstream: &mcp.upstream,
                progress: &NoProgress,
                redactor: &mcp.secrets,
            };
            redacting = Redacting {
                inner: &mcp_call,
                redactor: &mcp.secrets,
            };
            CallTarget::Mcp(&redacting)
        }
    };
    let refresh = shared.calls.cache.as_ref().is_some_and(|c| c.refresh);
    let mut prepared = match tool_step::prepare(t, scope, refresh) {
        Ok(p) => p,
        Err(e) => return fail(record, &e.into()),
    };
    let window = match &t.looping.incremental {
        None => None,
        Some(spec) => {
            let source = shared.watermarks.as_deref();
            let workflow = &shared.workflow.name;
            match incremental::open(spec, source, workflow, step.id.as_str()).await {
                Ok(window) => {
                    window.pass(spec, &mut prepared.0);
                    Some(window)
                }
                Err(e) => return fail(record, &e.into()),
            }
        }
    };
    let shaping = (prepared.1.filter.clone(), prepared.1.fields.clone());
    let attempts = step.retry.map_or(1, |r| r.attempts.max(1));
    // Cloned only for attempts a retry may follow; the last one takes it.
    let mut prepared = Some(prepared);
    for attempt in 1..=attempts {
        record.attempts = attempt;
        let arguments = if attempt < attempts {
            prepared.clone()
        } else {
            prepared.take()
        };
        let Some(arguments) = arguments else {
            return;
        };
        let call = tool_step::call(t, &tool, step.id.as_str(), arguments, target, &shared.calls);
        let outcome = match step.timeout {
            Some(after) => tokio::time::timeout(after, call)
                .await
                .unwrap_or(Err(StepError::Timeout { after })),
            None => call.await,
        };
        match outcome {
            Ok(mut result) => {
                let cancelled = tool_step::was_cancelled(&result);
                let settled = match (&t.looping.incremental, &window) {
                    (Some(spec), Some(window)) => {
                        let shape = Shaping {
                            filter: &shaping.0,
                            fields: shaping.1.as_ref(),
                        };
                        let complete = result.verdict.complete && !cancelled;
                        let now = (shared.run_id.as_str(), shared.calls.clock.now());
                        match incremental::settle(spec, window, &mut result, shape, complete, now) {
                            Ok(settled) => Some(settled),
                            Err(e) => return fail(record, &e.into()),
                        }
                    }
                    _ => None,
                };
                let v = &result.verdict;
                record.verdict = Some(StepVerdict {
                    complete: v.complete,
                    requests: v.requests,
                    item_count: v.item_count,
                    stopped_by: v.stopped_by,
                    note: result
                        .note_with(dragnet_walk::result::WORKFLOW_REFRESH_ADVICE)
                        .into_owned(),
                    cache_hit: result.cache.as_ref().map(|c| c.hit),
                    pages: result.stats.pages,
                    upstream_errors: result.stats.upstream_errors,
                    throttled: result.stats.throttled,
                    no_collection: matches!(result.payload, Payload::Single(_)),
                    incremental: settled.as_ref().map(|s| s.report.clone()),
                });
                let in_loop = settled.as_ref().map(|s| report_json(&s.report));
                record.output = Some(result.workflow_document_with(in_loop.as_ref()));
                // An incremental step's rows are its window's, not the payload's.
                record.served_from = if settled.is_none() {
                    result.served_from(in_loop.as_ref())
                } else {
                    None
                };
                record.watermark = settled.and_then(|s| s.moved).map(|to| WatermarkMove {
                    workflow: shared.workflow.name.clone(),
                    step: step.id.as_str().to_string(),
                    to,
                });
                record.status = if cancelled {
                    StepStatus::Cancelled
                } else {
                    StepStatus::Succeeded
                };
                record.reason = None;
                return;
            }
            Err(e) => {
                fail(record, &e);
                if shared.calls.cancel.is_cancelled() || matches!(e, StepError::Cancelled) {
                    record.status = StepStatus::Cancelled;
                    return;
                }
                if !e.is_retryable() {
                    return;
                }
                if attempt < attempts {
                    if let Some(r) = step.retry {
                        tokio::select! {
                            _ = tokio::time::sleep(r.delay) => {}
                            _ = shared.calls.cancel.cancelled() => { record.status = StepStatus::Cancelled; return; }
                        }
                    }
                }
            }
        }
    }
}

/// `_loop.incremental` of a step's output.
fn report_json(report: &super::record::IncrementalReport) -> (&'static str, Value) {
    let value = serde_json::to_value(report).unwrap_or(Value::Null);
    ("incremental", value)
}

fn fail(record: &mut StepRecord, error: &StepError) {
    record.status = StepStatus::Failed;
    record.reason = Some(error.to_string());
}

fn raw(v: &Value) -> Option<Document> {
    Some(Document::from_value(v))
}

pub(super) fn kind_name(step: &Step) -> StepType {
    match step.kind {
        StepKind::Tool(_) => StepType::Tool,
        StepKind::Branch(_) => StepType::Branch,
    }
}
