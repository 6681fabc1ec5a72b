//! The scheduler: cron triggers of every team's current workflows fire
//! runs. Each pass reads the time (the database's clock, or an injected
//! one in tests), works out every schedule's due ticks with the engine's
//! rules (`dragnet_engine::schedule`), and records each tick — fired with
//! its run in one transaction, skipped with the reason, queued, or missed —
//! so a tick is handled once even across restarts and racing schedulers.
//! Only runs a schedule fired count as its overlap.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use dragnet_engine::run::{self};
use dragnet_engine::schedule::{plan, CronTrigger, Disposition, Overlap};
use dragnet_engine::workflow::model::{Trigger, Workflow};
use dragnet_steps::clock::Clock;
use dragnet_store::{NewRun, RunOwner, ScheduleRow, ScheduleSpec, TickStatus, TickWrite};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::error::{ApiError, ApiResult};
use crate::launch::{self, Launch, RunRequest};
use crate::state::AppState;

/// Where a pass reads the time.
#[derive(Clone)]
pub enum TickClock {
    /// `now()` of the database: one clock for every server on it.
    Database,
    /// An injected clock (tests).
    Fixed(Arc<dyn Clock>),
}

/// How the scheduler runs.
#[derive(Clone)]
pub struct SchedulerConfig {
    /// Time between passes.
    pub every: Duration,
    /// A tick handled later than this after its time was missed.
    pub late_after: Duration,
    pub clock: TickClock,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            every: Duration::from_secs(1),
            late_after: Duration::from_secs(60),
            clock: TickClock::Database,
        }
    }
}

/// What one pass did, for tests and logs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PassReport {
    pub fired: Vec<String>,
    pub skipped: usize,
    pub missed: usize,
    pub queued: usize,
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
    let hex: String = h
        .finalize()
        .iter()
        .take(10)
        .map(|b| format!("{b:02x}"))
        .collect();
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
        });
    }
    out
}

/// Passes every `config.every` until the server stops taking work.
pub async fn run(state: AppState, config: SchedulerConfig) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(config.every) => {}
            () = state.stopping().cancelled() => return,
        }
        if let Err(error) = pass(&state, &config).await {
            tracing::error!(%error, "a scheduler pass failed");
        }
    }
}

pub async fn now(state: &AppState, clock: &TickClock) -> ApiResult<DateTime<Utc>> {
    match clock {
        TickClock::Database => Ok(state.db().db_now().await?),
        TickClock::Fixed(c) => Ok(c.now()),
    }
}

/// One pass over every active schedule.
pub async fn pass(state: &AppState, config: &SchedulerConfig) -> ApiResult<PassReport> {
    let mut report = PassReport::default();
    if state.stopping().is_cancelled() {
        return Ok(report);
    }
    let now = now(state, &config.clock).await?;
    for schedule in state.db().active_schedules().await? {
        if let Err(error) = one(state, config, &schedule, now, &mut report).await {
            tracing::error!(schedule = %schedule.schedule_id, %error, "a schedule's tick failed");
        }
    }
    Ok(report)
}

async fn one(
    state: &AppState,
    config: &SchedulerConfig,
    schedule: &ScheduleRow,
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> ApiResult<()> {
    let trigger = CronTrigger::from_parts(
        &schedule.cron,
        &schedule.timezone,
        &schedule.catch_up,
        &schedule.overlap,
    )
    .map_err(|message| ApiError::Conflict {
        kind: "bad_schedule",
        message,
    })?;
    let db = state.db();
    if trigger.overlap == Overlap::Queue && running(state, schedule).await?.is_none() {
        if let Some(at) = db.oldest_queued_tick(&schedule.schedule_id).await? {
            if let Some(run_id) = fire(state, schedule, at, now, true).await? {
                report.fired.push(run_id);
            }
        }
    }
    for due in plan(&trigger, schedule.last_tick_at, now, config.late_after) {
        let at = due.scheduled_for;
        if due.disposition == Disposition::Missed {
            let reason = format!(
                "missed: no scheduler was running at its time (catch_up: {})",
                trigger.catch_up.as_str()
            );
            record(state, schedule, at, TickStatus::Missed, reason, now).await?;
            report.missed += 1;
            continue;
        }
        let busy = match trigger.overlap {
            Overlap::Allow => None,
            Overlap::Skip | Overlap::Queue => running(state, schedule).await?,
        };
        match (busy, trigger.overlap) {
            (Some(run_id), Overlap::Queue) => {
                let reason = format!("queued: run {run_id} of this schedule is still running");
                record(state, schedule, at, TickStatus::Queued, reason, now).await?;
                report.queued += 1;
            }
            (Some(run_id), _) => {
                let reason = format!("overlap: run {run_id} of this schedule is still running");
                record(state, schedule, at, TickStatus::Skipped, reason, now).await?;
                report.skipped += 1;
            }
            (None, _) => {
                if let Some(run_id) = fire(state, schedule, at, now, false).await? {
                    report.fired.push(run_id);
                } else {
                    report.skipped += 1;
                }
            }
        }
    }
    Ok(())
}

/// The schedule's latest run when it is still running (or queued).
async fn running(state: &AppState, schedule: &ScheduleRow) -> ApiResult<Option<String>> {
    let latest = state
        .db()
        .latest_schedule_run(&schedule.schedule_id)
        .await?;
    Ok(latest.filter(|r| r.status == "running").map(|r| r.run_id))
}

async fn record(
    state: &AppState,
    schedule: &ScheduleRow,
    at: DateTime<Utc>,
    status: TickStatus,
    reason: String,
    now: DateTime<Utc>,
) -> ApiResult<bool> {
    let tick = TickWrite {
        schedule_id: &schedule.schedule_id,
        scheduled_for: at,
        status,
        reason: Some(reason),
        run: None,
    };
    Ok(state
        .db()
        .record_tick(&tick, &RunOwner::this_process(), now)
        .await?)
}

/// Fires tick `at`: the run's row and the tick in one transaction, then
/// the run. A tick whose workflow no longer compiles or whose inputs have
/// no defaults is recorded as skipped with the reason. `queued`: the tick
/// is recorded already and waited for the previous run.
async fn fire(
    state: &AppState,
    schedule: &ScheduleRow,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
    queued: bool,
) -> ApiResult<Option<String>> {
    let prepared = match launch::current(state, &schedule.team_id, &schedule.workflow).await {
        Ok((wf, version)) => run::resolve_inputs(&wf, &serde_json::Map::new())
            .map(|inputs| (wf, version, inputs))
            .map_err(|e| format!("skipped: the run cannot start: {e}")),
        Err(ApiError::InvalidWorkflow(d)) => Err(format!(
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
                    state
                        .db()
                        .skip_queued(&schedule.schedule_id, at, &reason)
                        .await?
                }
                false => {
                    record(state, schedule, at, TickStatus::Skipped, reason, now).await?;
                }
            }
            return Ok(None);
        }
    };
    let trigger = trigger_value(state, schedule, at, now).await?;
    let run_id = run::new_run_id(now);
    let source = wf.source.display().to_string();
    let launch_record = launch::LaunchRecord {
        trigger: trigger.clone(),
        ..launch::LaunchRecord::default()
    }
    .to_json();
    let new_run = NewRun {
        run_id: &run_id,
        team_id: &schedule.team_id,
        workflow: &wf.name,
        version,
        source: &source,
        inputs: &inputs,
        idempotency: None,
        launch: Some(&launch_record),
        claim: state.claim_on_submit(),
        trigger: dragnet_engine::run::RunTrigger::from_value(&trigger),
    };
    let lease = new_run.lease();
    let owner = RunOwner::this_process();
    let written = match queued {
        true => {
            state
                .db()
                .fire_queued(&schedule.schedule_id, at, &new_run, &owner, now)
                .await?
        }
        false => {
            let tick = TickWrite {
                schedule_id: &schedule.schedule_id,
                scheduled_for: at,
                status: TickStatus::Fired,
                reason: None,
                run: Some(new_run),
            };
            state.db().record_tick(&tick, &owner, now).await?
        }
    };
    if !written {
        // Another scheduler handled this tick.
        return Ok(None);
    }
    let Some(lease) = lease else {
        // No room here: anyone with room claims it.
        crate::claimer::announce(state).await;
        return Ok(Some(run_id));
    };
    let launch = Launch {
        team_id: &schedule.team_id,
        run_id: &run_id,
        trigger,
        reuse: std::collections::HashMap::new(),
        lease,
    };
    launch::spawn_run(state, launch, Arc::new(wf), RunRequest::default(), inputs);
    Ok(Some(run_id))
}

/// `$.trigger` of a scheduled run: the tick and the schedule's runs before.
async fn trigger_value(
    state: &AppState,
    schedule: &ScheduleRow,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> ApiResult<Value> {
    let (previous, complete) = state.db().schedule_runs(&schedule.schedule_id).await?;
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
