//! Claiming runs this process did not start (SPEC §9): queued runs nobody
//! claimed, and runs whose lease expired because their process died or
//! stalled. A pass claims while this process has room (`max_running_runs`
//! less the runs it is running), one short statement per claim, and starts
//! each claimed run from its row: the workflow version it was submitted
//! with, its typed inputs, its `$.trigger` and cache flags, the steps of
//! an earlier run it keeps (a rerun), and its own steps that had already
//! succeeded — a run taken over resumes after its last finished step
//! rather than starting again. A claimed run that cannot be started here
//! (its workflow version is gone, or no longer compiles) is recorded
//! failed, saying why, rather than claimed again at every expiry. Passes
//! run every `claim_every`, and at once when PostgreSQL notifies that a run
//! was left for anyone to claim, until the server stops taking work.

use std::collections::HashMap;
use std::sync::Arc;

use dragnet_engine::run::{RunStatus, StepStatus};
use dragnet_store::{Lease, RunOwner, Wakeups};
use serde_json::{Map, Value};

use crate::error::ApiResult;
use crate::launch::{self, Launch, LaunchRecord, RunRequest};
use crate::state::AppState;

/// One pass: claims and starts runs while there is room; how many.
pub async fn pass(state: &AppState) -> ApiResult<usize> {
    let mut started = 0;
    while !state.stopping().is_cancelled() && state.can_claim() {
        let claimed = state
            .db()
            .claim_next(state.lease_owner(), state.config().lease)
            .await?;
        let Some(lease) = claimed else {
            break;
        };
        let run_id = lease.run_id.clone();
        match resume(state, lease.clone()).await {
            Ok(()) => started += 1,
            Err(error) => {
                tracing::error!(run_id = %run_id, %error, "a claimed run could not start");
                fail(state, &lease, &error.to_string()).await;
            }
        }
    }
    Ok(started)
}

/// Records claimed run `lease.run_id` failed when it cannot be started
/// here (its workflow version is gone or no longer compiles), so it is not
/// claimed again and again.
async fn fail(state: &AppState, lease: &Lease, why: &str) {
    let reason = format!("the run could not be started: {why}");
    end_unstarted(state, lease, RunStatus::Failed, &reason).await;
}

/// Ends claimed run `lease.run_id` without running it: the run `status`
/// (failed, or cancelled), each unfinished step too, saying `reason`.
pub(crate) async fn end_unstarted(
    state: &AppState,
    lease: &Lease,
    status: RunStatus,
    reason: &str,
) {
    let db = state.db();
    let Ok(Some(mut record)) = db.get_run(&lease.run_id).await else {
        return;
    };
    let now = state.clock().now();
    record.status = status;
    record.finished_at = Some(now);
    let step_status = match status {
        RunStatus::Cancelled => StepStatus::Cancelled,
        _ => StepStatus::Failed,
    };
    for step in &mut record.steps {
        if !step.is_finished() {
            step.status = step_status;
            step.reason = Some(reason.to_string());
        }
    }
    let written = db
        .write_run_fenced(&record, &RunOwner::this_process(), now, Some(lease))
        .await;
    match written {
        Ok(()) => {
            if let Err(error) = db.forget_pages(&lease.run_id).await {
                tracing::warn!(run_id = %lease.run_id, %error, "the run's kept pages could not be deleted");
            }
        }
        Err(error) => {
            tracing::warn!(run_id = %lease.run_id, %error, "recording a run that ended unstarted")
        }
    }
}

/// Passes every `claim_every` until the server stops taking work, as a
/// tracked task.
pub fn spawn(state: &AppState) {
    let Some(every) = state.config().claim_every else {
        return;
    };
    let state = state.clone();
    let tracker = state.tracker().clone();
    tracker.spawn(async move {
        let mut wakeups = match state.db().wakeups().await {
            Ok(w) => w,
            Err(error) => {
                tracing::warn!(%error, "not listening for runs to claim: polling only");
                None
            }
        };
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = state.stopping().cancelled() => return,
                _ = ticks.tick() => {}
                () = woken(&mut wakeups) => {}
            }
            if let Err(error) = pass(&state).await {
                tracing::warn!(%error, "a claim pass failed");
            }
        }
    });
}

/// Until a notification says a run can be claimed (never without a
/// listener). A listener that fails waits a second, then makes a pass.
async fn woken(wakeups: &mut Option<Wakeups>) {
    match wakeups {
        Some(w) => {
            if let Err(error) = w.next().await {
                tracing::debug!(%error, "listening for runs to claim");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        }
        None => std::future::pending().await,
    }
}

/// Tells every claimer listening that a run can be claimed now.
pub async fn announce(state: &AppState) {
    if let Err(error) = state.db().notify_claimable().await {
        tracing::debug!(%error, "telling claimers about a run");
    }
}

/// Starts claimed run `lease.run_id` from its row.
async fn resume(state: &AppState, lease: Lease) -> ApiResult<()> {
    let db = state.db();
    let Some(row) = db.claimed_run(&lease.run_id).await? else {
        return Ok(());
    };
    let text = db
        .workflow_version(&row.team_id, &row.workflow, row.version)
        .await?
        .ok_or_else(|| crate::error::ApiError::not_found("workflow", &row.workflow))?;
    let wf = launch::compile(state, &text.info.file_name, text.source, text.documents)
        .await?
        .map_err(crate::error::ApiError::InvalidWorkflow)?;
    let record = row
        .launch
        .as_ref()
        .map(LaunchRecord::from_json)
        .unwrap_or_default();
    let mut reuse = HashMap::new();
    if let Some(original) = &record.rerun_of {
        if let Some(earlier) = db.get_run(original).await? {
            for id in &record.kept {
                if let Some(step) = earlier.step(id) {
                    reuse.insert(step.id.clone(), step.clone());
                }
            }
        }
    }
    // Taken over: the steps that had succeeded keep their records.
    let mut resumed = 0;
    if let Some(own) = db.get_run(&lease.run_id).await? {
        for step in own.steps {
            if step.status == StepStatus::Succeeded {
                resumed += 1;
                reuse.insert(step.id.clone(), step);
            }
        }
    }
    if lease.attempt > 1 {
        tracing::info!(run_id = %lease.run_id, attempt = lease.attempt, resumed, "resuming a run taken over");
    }
    let inputs: Map<String, Value> = match &row.inputs {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let request = RunRequest {
        inputs,
        experiment: record.experiment,
        refresh: record.refresh,
    };
    let trigger = match record.trigger {
        Value::Null => dragnet_engine::run::trigger_value("api", None),
        other => other,
    };
    let run_id = lease.run_id.clone();
    let launch = Launch {
        team_id: &row.team_id,
        run_id: &run_id,
        trigger,
        reuse,
        lease,
    };
    launch::spawn_run(state, launch, Arc::new(wf), request, row.inputs);
    Ok(())
}
