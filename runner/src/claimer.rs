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
//! run every `claim_every`, at once when PostgreSQL notifies that a run
//! was left for anyone to claim, and at once when a run of this process
//! ends and gives its slots back (a run left in the store because every
//! slot was taken starts then, not at the next tick), until the server
//! stops taking work.

use std::collections::HashMap;
use std::time::Duration;

use dragnet_engine::run::{RunStatus, StepStatus};
use dragnet_store::{Lease, Wakeups};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::compile;
use crate::error::Result;
use crate::launch::{end_unstarted, spawn_run, Launch, LaunchRecord, RunRequest};
use crate::launcher::Launcher;
use crate::task::{self, TaskName};

/// One pass: claims and starts runs while there is room; how many.
pub async fn pass(launcher: &Launcher) -> Result<usize> {
    let mut started = 0;
    while !launcher.stopping().is_cancelled() && launcher.can_claim() {
        let claimed = launcher
            .db()
            .leases()
            .claim_next(launcher.lease_owner(), launcher.config().lease)
            .await?;
        let Some(lease) = claimed else {
            break;
        };
        let run_id = lease.run_id.clone();
        match resume(launcher, lease.clone()).await {
            Ok(()) => started += 1,
            Err(error) => {
                tracing::error!(run_id = %run_id, %error, "a claimed run could not start");
                fail(launcher, &lease, &error.to_string()).await;
            }
        }
    }
    Ok(started)
}

/// Records claimed run `lease.run_id` failed when it cannot be started
/// here (its workflow version is gone or no longer compiles), so it is not
/// claimed again and again.
async fn fail(launcher: &Launcher, lease: &Lease, why: &str) {
    let reason = format!("the run could not be started: {why}");
    end_unstarted(launcher, lease, RunStatus::Failed, &reason).await;
}

/// Passes every `every`, and when woken, until `stop` is cancelled, as
/// the tracked task `claimer`; it holds the launcher it starts runs with.
pub fn spawn(launcher: Launcher, every: Duration, stop: CancellationToken, tracker: &TaskTracker) {
    let task = async move {
        let mut wakeups = match launcher.db().leases().wakeups().await {
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
                () = stop.cancelled() => return,
                _ = ticks.tick() => {}
                () = woken(&mut wakeups) => {}
                // A run here ended: its slots can take a queued run.
                () = launcher.slot_freed().notified() => {}
            }
            if let Err(error) = pass(&launcher).await {
                tracing::warn!(%error, "a claim pass failed");
            }
        }
    };
    task::spawn(tracker, TaskName::of("claimer"), task);
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

/// Starts claimed run `lease.run_id` from its row.
async fn resume(launcher: &Launcher, lease: Lease) -> Result<()> {
    let db = launcher.db();
    let Some(row) = db.runs().claimed_run(&lease.run_id).await? else {
        return Ok(());
    };
    let wf = compile::version(launcher, &row.team_id, &row.workflow, row.version).await?;
    let record = row
        .launch
        .as_ref()
        .map(LaunchRecord::from_json)
        .unwrap_or_default();
    let mut reuse = HashMap::new();
    if let Some(original) = &record.rerun_of {
        if let Some(earlier) = db.runs().get_run(original).await? {
            for id in &record.kept {
                if let Some(step) = earlier.step(id) {
                    reuse.insert(step.id.clone(), step.clone());
                }
            }
        }
    }
    // Taken over: the steps that had succeeded keep their records. A first
    // attempt is a queued run nobody held before (a run handed back or
    // whose lease expired is claimed with a later attempt): it has none.
    let mut resumed = 0;
    let own = match lease.attempt {
        1 => None,
        _ => db.runs().get_run(&lease.run_id).await?,
    };
    if let Some(own) = own {
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
    spawn_run(launcher, launch, wf, request, row.inputs);
    Ok(())
}
