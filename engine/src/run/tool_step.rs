//! A tool step: input and loop values resolved, then one call through
//! `dragnet_walk::execute` (the loop layer agents use too), rendered with
//! its verdict under `_loop`. Failures are `StepError`s; timeouts and step
//! retries wrap the call.

use std::sync::Arc;

use dragnet_core::clock::Clock;
use dragnet_core::ports::journal::PageJournal;
use dragnet_core::progress::{ProgressEvent, ProgressSink};
use dragnet_core::{Limits, StopReason, Tool};
use dragnet_walk::cache::{CachePolicy, CacheScope};
use dragnet_walk::filter::{Clause, Filter};
use dragnet_walk::journal::Journal;
use dragnet_walk::options::{ForEachSpec, LoopOptions};
use dragnet_walk::{LoopResult, Runtime, ToolCall, Unshaped};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::runner::CallTarget;
use super::step_error::{InputError, StepError};
use super::template::resolve;
use super::{RunCache, RunObserver, ToolRunner};
use crate::refs::Scope;
use crate::workflow::model::ToolStep;

/// Forwards a step's progress to the run's observer.
struct StepProgress {
    observer: Arc<dyn RunObserver>,
    step: String,
}

impl ProgressSink for StepProgress {
    fn emit(&self, event: &ProgressEvent) {
        self.observer.step_progress(&self.step, event);
    }
}

/// Builds the call's arguments and options from the step and the scope.
pub fn prepare(
    step: &ToolStep,
    scope: &Scope,
    refresh: bool,
) -> Result<(serde_json::Map<String, Value>, LoopOptions), InputError> {
    let arguments = match resolve(&step.input, scope)? {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        got => return Err(InputError::NotAnObject { got }),
    };
    let spec = &step.looping;
    let for_each = match &spec.for_each {
        None => None,
        Some(fe) => match resolve(&fe.values, scope)? {
            Value::Array(values) if values.is_empty() => {
                return Err(InputError::EmptyForEach {
                    key: fe.key.clone(),
                })
            }
            Value::Array(values) => Some(ForEachSpec {
                key: fe.key.clone(),
                values,
                concurrency: fe.concurrency,
            }),
            got => return Err(InputError::ForEachNotAList { got }),
        },
    };
    let mut clauses = Vec::with_capacity(spec.filter.len());
    for c in &spec.filter {
        clauses.push(Clause {
            field: c.field.split('.').map(str::to_string).collect(),
            op: c.op,
            value: resolve(&c.value, scope)?,
        });
    }
    let options = LoopOptions {
        all_pages: spec.all_pages,
        fields: spec.fields.clone(),
        for_each,
        filter: Filter { clauses },
        items_path: spec.items_path.clone(),
        refresh,
    };
    Ok((arguments, options))
}

/// What every call of a run shares.
pub struct CallContext {
    pub limits: Limits,
    pub observer: Arc<dyn RunObserver>,
    pub cancel: CancellationToken,
    pub cache: Option<RunCache>,
    pub tools: Arc<dyn ToolRunner>,
    pub clock: Arc<dyn Clock>,
    pub journal: Option<Arc<dyn PageJournal>>,
}

impl CallContext {
    /// The cache policy of a step that opted in, when the run has a cache.
    pub fn cache_policy(&self, step: &ToolStep) -> Option<CachePolicy> {
        let opt_in = step.looping.cache?;
        let run = self.cache.as_ref()?;
        Some(CachePolicy {
            store: run.store.clone(),
            mode: run.mode,
            scope: CacheScope::Organisation {
                org: run.org.clone(),
            },
            ttl: opt_in.ttl,
            tool_id: format!("{}.{}", step.provider, step.tool.name()),
            read: !run.experiment,
            clock: self.clock.clone(),
        })
    }
}

/// Runs the call of `tool` (the step's, resolved) once.
pub async fn call(
    step: &ToolStep,
    tool: &Tool,
    step_id: &str,
    (arguments, options): (serde_json::Map<String, Value>, LoopOptions),
    upstream: CallTarget<'_>,
    ctx: &CallContext,
) -> Result<LoopResult, StepError> {
    let sink = StepProgress {
        observer: ctx.observer.clone(),
        step: step_id.to_string(),
    };
    let runtime = Runtime {
        progress: &sink,
        clock: ctx.clock.clone(),
        cancel: ctx.cancel.clone(),
        journal: ctx.journal.as_deref().map(|store| Journal {
            store,
            scope: step_id,
        }),
        // A cached or incremental step reads the items as fetched.
        unshaped: Unshaped::Kept,
    };
    let call = ToolCall {
        tool,
        arguments,
        options,
        limits: ctx.limits.clone(),
        cache: ctx.cache_policy(step),
    };
    Ok(ctx.tools.call(call, upstream, &runtime).await?)
}

/// Whether a result was cut short by cancellation.
pub fn was_cancelled(result: &LoopResult) -> bool {
    result.verdict.stopped_by == Some(StopReason::Cancelled)
}
