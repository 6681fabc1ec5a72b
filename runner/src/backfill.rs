//! Backfills (issue 25 §2): the runs of every tick of a workflow's
//! schedules in a window `[from, to]`, oldest first or newest first, at
//! most `concurrency` at a time, recorded as one backfill that is listed,
//! followed and cancelled as a whole.
//!
//! - [`plan`]: the ticks of every cron trigger of the workflow in the
//!   window, by the schedules' own rules (a daylight-saving gap fires once
//!   after it, a repeated hour once), each with its schedule's id; at most
//!   [`MAX_TICKS`].
//! - [`create`] records the backfill and starts its first ticks; the
//!   scheduler's pass ([`pass`]) starts the next ones as runs end, and
//!   settles it when none is pending or running.
//! - A tick that already has a complete run of the workflow (from its
//!   schedule or an earlier backfill) is skipped, naming that run, unless
//!   the backfill asks to `rerun`.
//! - A pass holds the backfill's turn while it advances it (for
//!   [`TURN_HOLD`] at most), so two processes never advance one backfill
//!   at once; and each run is submitted with an idempotency key of the
//!   backfill and tick, so no tick runs twice.
//! - A backfill run's `$.trigger` is `{kind: "backfill", backfill_id,
//!   schedule_id, scheduled_for, fired_at, previous, previous_complete}`
//!   (the last two `null`-shaped: a backfill does not chain its ticks).

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use dragnet_engine::run;
use dragnet_engine::workflow::model::{Trigger, Workflow};
use dragnet_store::{BackfillRow, BackfillTick, NewBackfill};
use serde_json::{json, Value};

use crate::compile;
use crate::error::{Error, Result};
use crate::launch::RunRequest;
use crate::launcher::Launcher;
use crate::scheduler::schedule_id;
use crate::submit::{Outcome, Submission, Write};

/// The most ticks one backfill runs.
pub const MAX_TICKS: usize = 1_000;
/// The most runs of one backfill at a time.
pub const MAX_CONCURRENCY: u32 = 16;
/// How long a pass holds a backfill's turn at most (a pass that died
/// frees it then).
pub const TURN_HOLD: std::time::Duration = std::time::Duration::from_secs(60);

/// What a backfill asks for.
#[derive(Debug, Clone)]
pub struct BackfillRequest {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub newest_first: bool,
    pub concurrency: u32,
    pub rerun: bool,
}

/// One tick a backfill would run.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTick {
    pub scheduled_for: DateTime<Utc>,
    /// The same instant in its schedule's zone (RFC 3339 with its offset),
    /// which shows how a daylight-saving change fell.
    pub local: String,
    pub schedule_id: String,
    /// A run of the tick that succeeded, which the backfill skips unless
    /// it reruns.
    pub complete_run: Option<String>,
}

fn bad(message: impl Into<String>) -> Error {
    Error::BadBackfill {
        message: message.into(),
    }
}

/// The ticks of `wf`'s cron triggers in the request's window, in start
/// order, each with its schedule's id (the earliest trigger's when two
/// fall on one instant).
pub fn plan(
    team_id: &str,
    wf: &Workflow,
    request: &BackfillRequest,
) -> Result<Vec<(DateTime<Utc>, String)>> {
    Ok(plan_local(team_id, wf, request)?
        .into_iter()
        .map(|(at, id, _)| (at, id))
        .collect())
}

/// [`plan`], each tick also in its schedule's zone.
fn plan_local(
    team_id: &str,
    wf: &Workflow,
    request: &BackfillRequest,
) -> Result<Vec<(DateTime<Utc>, String, String)>> {
    if request.from > request.to {
        return Err(bad(format!(
            "`from` ({}) is after `to` ({})",
            request.from.to_rfc3339(),
            request.to.to_rfc3339()
        )));
    }
    if !(1..=MAX_CONCURRENCY).contains(&request.concurrency) {
        return Err(bad(format!(
            "`concurrency` is {}; it must be 1 to {MAX_CONCURRENCY}",
            request.concurrency
        )));
    }
    if wf.triggers.is_empty() {
        return Err(bad(format!(
            "workflow `{}` has no cron trigger: a backfill runs the ticks of its schedules",
            wf.name
        )));
    }
    let too_many = || {
        bad(format!(
            "the window holds more than {MAX_TICKS} ticks; narrow it or backfill it in parts"
        ))
    };
    let mut ticks: Vec<(DateTime<Utc>, String, String)> = Vec::new();
    for Trigger::Cron(trigger) in &wf.triggers {
        let id = schedule_id(team_id, &wf.name, trigger);
        let times = trigger
            .ticks_in(request.from, request.to, MAX_TICKS)
            .map_err(|_| too_many())?;
        for at in times {
            if !ticks.iter().any(|(t, _, _)| *t == at) {
                let local = at.with_timezone(&trigger.timezone).to_rfc3339();
                ticks.push((at, id.clone(), local));
            }
        }
    }
    if ticks.len() > MAX_TICKS {
        return Err(too_many());
    }
    ticks.sort_by_key(|(at, _, _)| *at);
    if request.newest_first {
        ticks.reverse();
    }
    Ok(ticks)
}

/// The team's workflow `name`, current version, compiled.
async fn current(launcher: &Launcher, team_id: &str, name: &str) -> Result<(Arc<Workflow>, i64)> {
    compile::current(launcher, team_id, name).await
}

/// The ticks a backfill of `name` would run, with the complete run each
/// already has (a dry run: nothing is recorded or started).
pub async fn dry_run(
    launcher: &Launcher,
    team_id: &str,
    name: &str,
    request: &BackfillRequest,
) -> Result<Vec<PlannedTick>> {
    let (wf, _) = current(launcher, team_id, name).await?;
    let mut planned = Vec::new();
    for (at, schedule_id, local) in plan_local(team_id, &wf, request)? {
        let complete_run = launcher
            .db()
            .backfills()
            .complete_run_of_tick(team_id, name, at)
            .await?;
        planned.push(PlannedTick {
            scheduled_for: at,
            local,
            schedule_id,
            complete_run,
        });
    }
    Ok(planned)
}

/// Records a backfill of `name` and starts its first ticks.
pub async fn create(
    launcher: &Launcher,
    team_id: &str,
    name: &str,
    request: &BackfillRequest,
    created_by: Option<&str>,
    now: DateTime<Utc>,
) -> Result<BackfillRow> {
    let (wf, _) = current(launcher, team_id, name).await?;
    let ticks = plan(team_id, &wf, request)?;
    let backfill_id = format!("bf_{:016x}", rand::random::<u64>());
    let new = NewBackfill {
        backfill_id: &backfill_id,
        team_id,
        workflow: name,
        from: request.from,
        to: request.to,
        newest_first: request.newest_first,
        concurrency: request.concurrency,
        rerun: request.rerun,
        created_by,
        created_at: now,
        ticks: &ticks,
    };
    let backfills = launcher.db().backfills();
    backfills.create_backfill(&new).await?;
    if let Some(row) = backfills.backfill(team_id, &backfill_id).await? {
        advance(launcher, &row, now).await?;
    }
    backfills
        .backfill(team_id, &backfill_id)
        .await?
        .ok_or_else(|| Error::not_found("backfill", backfill_id))
}

/// Advances every running backfill; the runs it started.
pub async fn pass(launcher: &Launcher, now: DateTime<Utc>) -> Result<Vec<String>> {
    let mut started = Vec::new();
    for row in launcher.db().backfills().running_backfills().await? {
        match advance(launcher, &row, now).await {
            Ok(runs) => started.extend(runs),
            Err(error) => {
                tracing::error!(backfill = %row.backfill_id, %error, "a backfill could not advance")
            }
        }
    }
    Ok(started)
}

/// Whether a tick's run is still going.
fn going(tick: &BackfillTick) -> bool {
    tick.state == "started"
        && tick
            .run_status
            .as_deref()
            .is_none_or(|s| s == "queued" || s == "running")
}

/// Starts the backfill's next pending ticks while fewer than its
/// concurrency run, and settles it when nothing is pending or running.
async fn advance(
    launcher: &Launcher,
    row: &BackfillRow,
    now: DateTime<Utc>,
) -> Result<Vec<String>> {
    let backfills = launcher.db().backfills();
    let until = now + chrono::Duration::from_std(TURN_HOLD).unwrap_or(chrono::Duration::MAX);
    if !backfills.take_turn(&row.backfill_id, now, until).await? {
        return Ok(Vec::new());
    }
    let advanced = advance_held(launcher, row, now).await;
    backfills.end_turn(&row.backfill_id).await?;
    advanced
}

/// [`advance`], its turn held.
async fn advance_held(
    launcher: &Launcher,
    row: &BackfillRow,
    now: DateTime<Utc>,
) -> Result<Vec<String>> {
    let backfills = launcher.db().backfills();
    let ticks = backfills.backfill_ticks(&row.backfill_id).await?;
    let running = ticks.iter().filter(|t| going(t)).count();
    let mut free = (row.concurrency as usize).saturating_sub(running);
    let mut started = Vec::new();
    let mut workflow: Option<(Arc<Workflow>, i64)> = None;
    let pending: Vec<BackfillTick> = ticks.into_iter().filter(|t| t.state == "pending").collect();
    let mut next = 0;
    while free > 0 && next < pending.len() {
        let tick = &pending[next];
        next += 1;
        if !row.rerun {
            let complete = backfills
                .complete_run_of_tick(&row.team_id, &row.workflow, tick.scheduled_for)
                .await?;
            if let Some(run_id) = complete {
                let reason =
                    format!("run {run_id} of this tick is complete (rerun to run it again)");
                backfills
                    .mark_tick(&row.backfill_id, tick.idx, "skipped", None, Some(&reason))
                    .await?;
                continue;
            }
        }
        let (wf, version) = match &workflow {
            Some(w) => w.clone(),
            None => match current(launcher, &row.team_id, &row.workflow).await {
                Ok((wf, version)) => {
                    let w = (wf, version);
                    workflow = Some(w.clone());
                    w
                }
                Err(Error::InvalidWorkflow(_)) | Err(Error::NotFound { .. }) => {
                    let reason =
                        "the workflow's current version no longer compiles, or was deleted";
                    backfills
                        .mark_tick(&row.backfill_id, tick.idx, "skipped", None, Some(reason))
                        .await?;
                    continue;
                }
                Err(other) => return Err(other),
            },
        };
        let run_id = start(launcher, row, tick, wf, version, now).await?;
        backfills
            .mark_tick(&row.backfill_id, tick.idx, "started", Some(&run_id), None)
            .await?;
        started.push(run_id);
        free -= 1;
    }
    let left = next < pending.len() || running > 0 || !started.is_empty();
    if !left {
        let ticks = backfills.backfill_ticks(&row.backfill_id).await?;
        if !ticks.iter().any(|t| t.state == "pending" || going(t)) {
            backfills
                .finish_backfill(&row.backfill_id, outcome(&ticks), now)
                .await?;
        }
    }
    Ok(started)
}

/// A finished backfill's status from its ticks' runs: `failed` when a run
/// failed or did not end on its own, `partial` when a walk was cut short,
/// else `succeeded` (skipped ticks had complete runs).
fn outcome(ticks: &[BackfillTick]) -> &'static str {
    let statuses: Vec<&str> = ticks
        .iter()
        .filter_map(|t| t.run_status.as_deref())
        .collect();
    if statuses
        .iter()
        .any(|s| !matches!(*s, "succeeded" | "partial"))
    {
        "failed"
    } else if statuses.contains(&"partial") {
        "partial"
    } else {
        "succeeded"
    }
}

/// Submits the run of `tick`; its id (the same one if another process
/// submitted it first).
async fn start(
    launcher: &Launcher,
    row: &BackfillRow,
    tick: &BackfillTick,
    wf: Arc<Workflow>,
    version: i64,
    now: DateTime<Utc>,
) -> Result<String> {
    let inputs = run::resolve_inputs(&wf, &serde_json::Map::new())
        .map_err(|e| bad(format!("a backfill run has no inputs to give, and: {e}")))?;
    let none = || json!({"run_id": null, "status": null, "complete": false, "started_at": null});
    let trigger: Value = json!({
        "kind": "backfill",
        "backfill_id": row.backfill_id,
        "schedule_id": tick.schedule_id,
        "scheduled_for": tick.scheduled_for,
        "fired_at": now,
        "previous": none(),
        "previous_complete": none(),
    });
    let submission = Submission {
        team_id: row.team_id.clone(),
        workflow: wf,
        version,
        request: RunRequest::default(),
        inputs,
        trigger,
        started_by: row.created_by.clone(),
        reuse: HashMap::new(),
        rerun_of: None,
    };
    let key = format!("backfill:{}:{}", row.backfill_id, tick.idx);
    let write = Write::Request {
        idempotency: Some((&key, &key)),
    };
    match launcher.submit(submission, write, now).await? {
        Outcome::Created { run_id } | Outcome::Existing { run_id } => Ok(run_id),
        Outcome::NotWritten => Err(Error::not_found("run", "(not written)")),
    }
}

/// Cancels the team's running backfill: its pending ticks are not
/// started and its runs still going are cancelled. `None` when it is not
/// the team's or has ended.
pub async fn cancel(
    launcher: &Launcher,
    team_id: &str,
    backfill_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<BackfillRow>> {
    let backfills = launcher.db().backfills();
    let Some(going) = backfills.cancel_backfill(team_id, backfill_id, now).await? else {
        return Ok(None);
    };
    for run_id in going {
        crate::requests::cancel(launcher, team_id, &run_id).await?;
    }
    backfills
        .backfill(team_id, backfill_id)
        .await
        .map_err(Error::from)
}
