//! The scheduling loop: start every step whose dependencies are settled
//! (tool steps as tasks, bounded by a semaphore; branches decided on the
//! loop's own task, since they only read what they were given), decide
//! skips and dependency failures with a reason, record each step as it
//! finishes, and drain cleanly on cancel.

use dragnet_core::Document;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::{self, JoinSet};

use super::branch::Decision;
use super::inputs::resolve_inputs;
use super::record::{RunRecord, RunStatus, StepRecord, StepStatus};
use super::step_task::{abnormal_end, decide_now, kind_name, run_step, Finished, Shared};
use super::tool_step::CallContext;
use super::upstreams::Upstreams;
use super::{RunObserver, RunOptions};
use crate::error::Error;
use crate::plan::{Edge, Plan};
use crate::refs::Scope;
use crate::workflow::model::{StepId, StepKind, Workflow};

/// Runs `workflow` to the end (or until cancelled) and returns its record.
pub async fn run(
    workflow: Arc<Workflow>,
    options: RunOptions,
    observer: Arc<dyn RunObserver>,
) -> Result<RunRecord, Error> {
    let plan = Plan::new(&workflow)?;
    let inputs = resolve_inputs(&workflow, &options.inputs)?;
    if let Some(name) = options
        .base_urls
        .keys()
        .find(|k| !workflow.providers.contains_key(*k))
    {
        return Err(Error::UnknownProvider {
            name: name.clone(),
            known: workflow
                .providers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let upstreams = Upstreams::open(&workflow, &options).await;
    let clock = options.clock.clone();
    let started = clock.instant();
    let mut record = RunRecord {
        run_id: options
            .run_id
            .clone()
            .unwrap_or_else(|| super::new_run_id(clock.now())),
        workflow: workflow.name.clone(),
        source: workflow.source.display().to_string(),
        status: RunStatus::Running,
        started_at: clock.now(),
        finished_at: None,
        duration_ms: 0,
        inputs: inputs.clone(),
        steps: workflow
            .steps
            .iter()
            .map(|s| StepRecord::pending(s.id.as_str(), kind_name(s)))
            .collect(),
        trigger: super::trigger::RunTrigger::from_value(&options.trigger),
    };
    let shared = Arc::new(Shared {
        workflow: workflow.clone(),
        run_id: record.run_id.clone(),
        watermarks: options.watermarks.clone(),
        upstreams,
        calls: CallContext {
            limits: options.limits.clone(),
            observer: observer.clone(),
            cancel: options.cancel.clone(),
            cache: options.cache.clone(),
            tools: options.tools.clone(),
            clock: options.clock.clone(),
            journal: options.journal.clone(),
        },
        semaphore: Semaphore::new(options.concurrency.max(1)),
    });
    observer.run_started(&record);
    let inputs = Arc::new(record.inputs.clone());
    let trigger = Arc::new(options.trigger.clone());
    // Each finished step's output, by step index.
    let mut outputs: Vec<Option<Document>> = vec![None; workflow.steps.len()];
    let mut decisions: HashMap<usize, Decision> = HashMap::new();
    let mut tasks: JoinSet<Finished> = JoinSet::new();
    // Which step each task runs, so a task that ends abnormally is named.
    let mut task_steps: HashMap<task::Id, usize> = HashMap::new();
    let mut cancelled = false;

    // Dependency counters: a step is ready when its count reaches zero.
    let n = workflow.steps.len();
    let deps: Vec<Vec<(usize, Edge)>> = (0..n).map(|i| plan.dependencies(i)).collect();
    let mut dependants: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, ds) in deps.iter().enumerate() {
        for (j, _) in ds {
            dependants[*j].push(i);
        }
    }
    // The steps each step reads through refs: id and index.
    let index_of: HashMap<&StepId, usize> = workflow
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| (&s.id, i))
        .collect();
    let reads: Vec<Vec<(StepId, usize)>> = workflow
        .steps
        .iter()
        .map(|s| {
            s.refs()
                .into_iter()
                .filter_map(|r| r.step())
                .filter_map(|id| index_of.get(id).map(|&j| (id.clone(), j)))
                .collect()
        })
        .collect();
    let mut remaining: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut ready: VecDeque<usize> = plan
        .order
        .iter()
        .copied()
        .filter(|&i| remaining[i] == 0)
        .collect();
    let mut settled = 0usize;
    // Branches decided on this task, waiting to be recorded.
    let mut decided: VecDeque<Finished> = VecDeque::new();
    while settled < n {
        while let Some(i) = ready.pop_front() {
            if let Some(kept) = reusable(&options, &workflow, i, cancelled) {
                outputs[i] = kept.output.clone();
                observer.step_finished(&kept);
                record.steps[i] = kept;
                settled += 1;
                release(i, &dependants, &mut remaining, &mut ready);
                continue;
            }
            match settle_before_start(&workflow, &record, &decisions, &deps[i], cancelled) {
                Some((status, reason)) => {
                    let step = &mut record.steps[i];
                    step.status = status;
                    step.reason = Some(reason);
                    observer.step_finished(step);
                    settled += 1;
                    release(i, &dependants, &mut remaining, &mut ready);
                }
                None => {
                    // The pending record moves into the task, which reports
                    // it back; meanwhile the run's copy is a running stub
                    // without its id (put back if the task never reports).
                    let stub = StepRecord::pending("", kind_name(&workflow.steps[i]));
                    let pending = std::mem::replace(&mut record.steps[i], stub);
                    record.steps[i].status = StepStatus::Running;
                    observer.step_started(workflow.steps[i].id.as_str());
                    // The step sees only the outputs it reads.
                    let scope = Scope {
                        inputs: inputs.clone(),
                        trigger: trigger.clone(),
                        steps: reads[i]
                            .iter()
                            .filter_map(|(id, j)| {
                                outputs[*j].as_ref().map(|o| (id.clone(), o.clone()))
                            })
                            .collect(),
                    };
                    // A branch reads what it was given and calls nothing:
                    // it is decided here, without a permit or a task.
                    let span = tracing::info_span!(
                        "step",
                        step_id = %workflow.steps[i].id.as_str(),
                    );
                    if let StepKind::Branch(branch) = &workflow.steps[i].kind {
                        let _in_step = span.enter();
                        decided.push_back(decide_now(&shared, branch, i, pending, &scope));
                        continue;
                    }
                    let shared = shared.clone();
                    let handle = tasks.spawn(tracing::Instrument::instrument(
                        async move { run_step(shared, i, pending, scope).await },
                        span,
                    ));
                    task_steps.insert(handle.id(), i);
                }
            }
        }
        let done = match decided.pop_front() {
            Some(done) => done,
            None if tasks.is_empty() => break,
            None => {
                // Nothing more to do here until a step ends.
                observer.waiting();
                tokio::select! {
                    joined = tasks.join_next_with_id() => match joined {
                        Some(Ok((id, done))) => {
                            task_steps.remove(&id);
                            done
                        }
                        // A step catches its own panics; this is what is left
                        // around its body. The step fails, named; the run goes on.
                        Some(Err(e)) => match task_steps.remove(&e.id()) {
                            Some(i) => abnormal_end(&workflow.steps[i], i, e, clock.now()),
                            None => continue,
                        },
                        None => continue,
                    },
                    _ = options.cancel.cancelled(), if !cancelled => {
                        cancelled = true;
                        continue;
                    }
                }
            }
        };
        if let Some(output) = &done.record.output {
            outputs[done.index] = Some(output.clone());
        }
        if let Some(d) = done.decision {
            decisions.insert(done.index, d);
        }
        observer.step_finished(&done.record);
        let i = done.index;
        record.steps[i] = done.record;
        settled += 1;
        release(i, &dependants, &mut remaining, &mut ready);
    }
    for (i, step) in record.steps.iter_mut().enumerate() {
        if step.is_finished() {
            continue;
        }
        if step.id.is_empty() {
            step.id = workflow.steps[i].id.as_str().to_string();
        }
        step.status = StepStatus::Failed;
        step.reason = Some("the step did not finish (its task ended abnormally)".into());
    }
    shared.upstreams.close().await;
    record.finished_at = Some(clock.now());
    record.duration_ms = clock
        .instant()
        .saturating_duration_since(started)
        .as_millis() as u64;
    record.settle(cancelled || options.cancel.is_cancelled());
    observer.run_finished(&record);
    Ok(record)
}

/// Step `i`'s record from an earlier run, when the options keep it: a
/// succeeded tool step with an output (branches are decided again).
fn reusable(
    options: &RunOptions,
    workflow: &Workflow,
    i: usize,
    cancelled: bool,
) -> Option<StepRecord> {
    let step = &workflow.steps[i];
    let kept = options.reuse.get(step.id.as_str())?;
    let usable = !cancelled
        && matches!(step.kind, StepKind::Tool(_))
        && kept.status == StepStatus::Succeeded
        && kept.output.is_some();
    usable.then(|| kept.clone())
}

/// Marks `i` settled for its dependants; those with nothing left to wait
/// for become ready.
fn release(
    i: usize,
    dependants: &[Vec<usize>],
    remaining: &mut [usize],
    ready: &mut VecDeque<usize>,
) {
    for &d in &dependants[i] {
        remaining[d] -= 1;
        if remaining[d] == 0 {
            ready.push_back(d);
        }
    }
}

/// A step that will not run: skipped or failed because of what came
/// before, with the reason. `None` means it runs.
fn settle_before_start(
    workflow: &Workflow,
    record: &RunRecord,
    decisions: &HashMap<usize, Decision>,
    deps: &[(usize, Edge)],
    cancelled: bool,
) -> Option<(StepStatus, String)> {
    let id = |j: usize| workflow.steps[j].id.as_str();
    for (j, edge) in deps {
        if let Edge::Gate { then } = edge {
            if let Some(d) = decisions.get(j) {
                if d.then != *then {
                    return Some((
                        StepStatus::Skipped,
                        format!(
                            "skipped: branch `{}` took {} because {}",
                            id(*j),
                            if d.then { "then" } else { "else" },
                            d.because
                        ),
                    ));
                }
            }
        }
    }
    if let Some((j, _)) = deps.iter().find(|(j, _)| {
        matches!(
            record.steps[*j].status,
            StepStatus::Failed | StepStatus::Cancelled
        )
    }) {
        return Some((
            StepStatus::Failed,
            format!(
                "dependency `{}` {}",
                id(*j),
                match record.steps[*j].status {
                    StepStatus::Cancelled => "was cancelled",
                    _ => "failed",
                }
            ),
        ));
    }
    if !deps.is_empty()
        && deps
            .iter()
            .all(|(j, _)| record.steps[*j].status == StepStatus::Skipped)
    {
        let names: Vec<String> = deps.iter().map(|(j, _)| format!("`{}`", id(*j))).collect();
        return Some((
            StepStatus::Skipped,
            format!(
                "skipped: it depends only on skipped steps ({})",
                names.join(", ")
            ),
        ));
    }
    if cancelled {
        return Some((
            StepStatus::Skipped,
            "skipped: the run was cancelled before it started".into(),
        ));
    }
    None
}
