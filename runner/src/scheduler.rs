//! The scheduler: cron triggers of every team's current workflows fire
//! runs. Each pass reads the time (the database's clock, or an injected
//! one in tests), works out every schedule's due ticks with the engine's
//! rules (`dragnet_engine::schedule`), and records each tick — fired with
//! its run in one transaction, skipped with the reason, queued, or missed —
//! so a tick is handled once even across restarts and racing schedulers.
//! Only runs a schedule fired count as its overlap.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use dragnet_engine::run;
use dragnet_engine::schedule::{plan, CronTrigger, Disposition, Overlap, PauseAfter};
use dragnet_engine::workflow::model::{Trigger, Workflow};
use dragnet_store::{Pause, RunOwner, ScheduleRow, ScheduleSpec, TickStatus, TickWrite};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::compile;
pub use crate::config::{SchedulerConfig, TickClock};
use crate::error::{Error, Result};
use crate::launch::RunRequest;
use crate::launcher::Launcher;
use crate::submit::{Outcome, Submission, Write};
use crate::task::{self, TaskName};

/// What one pass did, for tests and logs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PassReport {
    pub fired: Vec<String>,
    pub skipped: usize,
    pub missed: usize,
    pub queued: usize,
    /// Schedules paused by their `pause_after`.
    pub paused: usize,
    /// Runs started by backfills.
    pub backfill_runs: Vec<String>,
}

/// The schedule id of a trigger: names the team, the workflow, the
/// expression and the zone (a new version keeping the trigger keeps it).
pub fn schedule_id(team_id: &str, workflow: &str, trigger: &CronTrigger) -> String {
    let mut h = Sha256::new();
    for part in [
        team_id,
        workflow,
        trigger.expression.as_str(),
        trigger.timezone.name(),
    ] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    let hex = dragnet_core::hex::lower(&h.finalize()[..10]);
    format!("sch_{hex}")
}

/// The schedules a compiled workflow declares.
pub fn specs(team_id: &str, wf: &Workflow) -> Vec<ScheduleSpec> {
    let mut out: Vec<ScheduleSpec> = Vec::new();
    for Trigger::Cron(t) in &wf.triggers {
        let id = schedule_id(team_id, &wf.name, t);
        if out.iter().any(|s| s.schedule_id == id) {
            continue;
        }
        out.push(ScheduleSpec {
            schedule_id: id,
            cron: t.expression.clone(),
            timezone: t.timezone.name().to_string(),
            catch_up: t.catch_up.as_str().to_string(),
            overlap: t.overlap.as_str().to_string(),
            pause_after_failed: t.pause_after.failed,
            pause_after_partial: t.pause_after.partial,
        });
    }
    out
}

/// Passes every `config.every` until `stop` is cancelled, as the tracked
/// task `scheduler`; it holds the launcher its ticks' runs start with.
pub fn spawn(
    launcher: Launcher,
    config: SchedulerConfig,
    stop: CancellationToken,
    tracker: &TaskTracker,
) {
    let task = async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(config.every) => {}
                () = stop.cancelled() => return,
            }
            if let Err(error) = pass(&launcher, &config).await {
                tracing::error!(%error, "a scheduler pass failed");
            }
        }
    };
    task::spawn(tracker, TaskName::of("scheduler"), task);
}

/// One pass over every active schedule.
pub async fn pass(launcher: &Launcher, config: &SchedulerConfig) -> Result<PassReport> {
    let mut report = PassReport::default();
    if launcher.stopping().is_cancelled() {
        return Ok(report);
    }
    let schedules = launcher.db().schedules();
    let now = config.clock.now(&schedules).await?;
    for schedule in schedules.active_schedules().await? {
        if let Err(error) = one(launcher, config, &schedule, now, &mut report).await {
            tracing::error!(schedule = %schedule.schedule_id, %error, "a schedule's tick failed");
        }
    }
    report.backfill_runs = crate::backfill::pass(launcher, now).await?;
    Ok(report)
}

async fn one(
    launcher: &Launcher,
    config: &SchedulerConfig,
    schedule: &ScheduleRow,
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<()> {
    let trigger = CronTrigger::from_parts(
        &schedule.cron,
        &schedule.timezone,
        &schedule.catch_up,
        &schedule.overlap,
    )
    .map_err(|message| Error::BadSchedule {
        schedule_id: schedule.schedule_id.clone(),
        message,
    })?;
    let db = launcher.db();
    let due = plan(&trigger, schedule.last_tick_at, now, config.late_after);
    let waiting = trigger.overlap == Overlap::Queue;
    if (!due.is_empty() || waiting) && pause_after(launcher, schedule, now).await? {
        report.paused += 1;
        return Ok(());
    }
    if waiting && running(launcher, schedule).await?.is_none() {
        if let Some(at) = db
            .schedules()
            .oldest_queued_tick(&schedule.schedule_id)
            .await?
        {
            if let Some(run_id) = fire(launcher, schedule, at, now, true).await? {
                report.fired.push(run_id);
            }
        }
    }
    for due in due {
        let at = due.scheduled_for;
        if due.disposition == Disposition::Missed {
            let reason = format!(
                "missed: no scheduler was running at its time (catch_up: {})",
                trigger.catch_up.as_str()
            );
            record(launcher, schedule, at, TickStatus::Missed, reason, now).await?;
            report.missed += 1;
            continue;
        }
        let busy = match trigger.overlap {
            Overlap::Allow => None,
            Overlap::Skip | Overlap::Queue => running(launcher, schedule).await?,
        };
        match (busy, trigger.overlap) {
            (Some(run_id), Overlap::Queue) => {
                let reason = format!("queued: run {run_id} of this schedule is still running");
                record(launcher, schedule, at, TickStatus::Queued, reason, now).await?;
                report.queued += 1;
            }
            (Some(run_id), _) => {
                let reason = format!("overlap: run {run_id} of this schedule is still running");
                record(launcher, schedule, at, TickStatus::Skipped, reason, now).await?;
                report.skipped += 1;
            }
            (None, _) => {
                if let Some(run_id) = fire(launcher, schedule, at, now, false).await? {
                    report.fired.push(run_id);
                } else {
                    report.skipped += 1;
                }
            }
        }
    }
    Ok(())
}

/// Pauses the schedule when its latest ended runs since it was resumed
/// reach its `pause_after` limit; true when it did.
async fn pause_after(
    launcher: &Launcher,
    schedule: &ScheduleRow,
    now: DateTime<Utc>,
) -> Result<bool> {
    let limits = PauseAfter {
        failed: schedule.pause_after_failed,
        partial: schedule.pause_after_partial,
    };
    let Some(window) = limits.window() else {
        return Ok(false);
    };
    let schedules = launcher.db().schedules();
    let since = schedule.resumed_at.unwrap_or(DateTime::UNIX_EPOCH);
    let statuses = schedules
        .ended_run_statuses(&schedule.schedule_id, since, window)
        .await?;
    let Some(reason) = limits.reason(statuses.iter().map(String::as_str)) else {
        return Ok(false);
    };
    let pause = Pause {
        at: now,
        reason,
        by: "pause_after".into(),
    };
    let paused = schedules
        .pause_schedule(&schedule.team_id, &schedule.schedule_id, &pause)
        .await?;
    if paused {
        tracing::warn!(schedule = %schedule.schedule_id, reason = %pause.reason, "a schedule paused itself");
    }
    Ok(paused)
}

/// The schedule's latest run when it is still running (or queued).
async fn running(launcher: &Launcher, schedule: &ScheduleRow) -> Result<Option<String>> {
    let latest = launcher
        .db()
        .schedules()
        .latest_schedule_run(&schedule.schedule_id)
        .await?;
    Ok(latest.filter(|r| r.status == "running").map(|r| r.run_id))
}

async fn record(
    launcher: &Launcher,
    schedule: &ScheduleRow,
    at: DateTime<Utc>,
    status: TickStatus,
    reason: String,
    now: DateTime<Utc>,
) -> Result<bool> {
    let tick = TickWrite {
        schedule_id: &schedule.schedule_id,
        scheduled_for: at,
        status,
        reason: Some(reason),
        run: None,
    };
    Ok(launcher
        .db()
        .schedules()
        .record_tick(&tick, &RunOwner::this_process(), now)
        .await?)
}

/// Fires tick `at`: the run's row and the tick in one transaction, then
/// the run. A tick whose workflow no longer compiles or whose inputs have
/// no defaults is recorded as skipped with the reason. `queued`: the tick
/// is recorded already and waited for the previous run.
async fn fire(
    launcher: &Launcher,
    schedule: &ScheduleRow,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
    queued: bool,
) -> Result<Option<String>> {
    let current = compile::current(launcher, &schedule.team_id, &schedule.workflow);
    let prepared = match current.await {
        Ok((wf, version)) => run::resolve_inputs(&wf, &serde_json::Map::new())
            .map(|inputs| (wf, version, inputs))
            .map_err(|e| format!("skipped: the run cannot start: {e}")),
        Err(Error::InvalidWorkflow(d)) => Err(format!(
            "skipped: the workflow's current version no longer compiles: {}",
            d.iter().next().map(ToString::to_string).unwrap_or_default()
        )),
        Err(other) => return Err(other),
    };
    let (wf, version, inputs) = match prepared {
        Ok(p) => p,
        Err(reason) => {
            match queued {
                true => {
                    launcher
                        .db()
                        .schedules()
                        .skip_queued(&schedule.schedule_id, at, &reason)
                        .await?
                }
                false => {
                    record(launcher, schedule, at, TickStatus::Skipped, reason, now).await?;
                }
            }
            return Ok(None);
        }
    };
    let trigger = trigger_value(launcher, schedule, at, now).await?;
    let submission = Submission {
        team_id: schedule.team_id.clone(),
        workflow: wf,
        version,
        request: RunRequest::default(),
        inputs,
        trigger,
        started_by: None,
        reuse: HashMap::new(),
        rerun_of: None,
    };
    let schedule_id = schedule.schedule_id.as_str();
    let write = match queued {
        true => Write::QueuedTick { schedule_id, at },
        false => Write::Tick { schedule_id, at },
    };
    match launcher.submit(submission, write, now).await? {
        Outcome::Created { run_id } | Outcome::Existing { run_id } => Ok(Some(run_id)),
        // Another scheduler handled this tick.
        Outcome::NotWritten => Ok(None),
    }
}

/// `$.trigger` of a scheduled run: the tick and the schedule's runs before.
async fn trigger_value(
    launcher: &Launcher,
    schedule: &ScheduleRow,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Value> {
    let (previous, complete) = launcher
        .db()
        .schedules()
        .schedule_runs(&schedule.schedule_id)
        .await?;
    let shown = |r: Option<dragnet_store::ScheduleRun>| match r {
        None => json!({"run_id": null, "status": null, "complete": false, "started_at": null}),
        Some(r) => json!({
            "run_id": r.run_id,
            "status": r.status,
            "complete": r.status == "succeeded",
            "started_at": r.started_at,
        }),
    };
    Ok(json!({
        "kind": "cron",
        "schedule_id": schedule.schedule_id,
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "scheduled_for": at,
        "fired_at": now,
        "previous": shown(previous),
        "previous_complete": shown(complete),
    }))
}
