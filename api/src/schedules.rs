//! `GET /v1/schedules`: every schedule of the team with its next ticks, its
//! latest ticks and their outcome, and how late it is — the time since the
//! oldest tick that is due and not yet handled (0 when none is).
//! `POST /v1/schedules/{id}/pause` and `/resume` (issue 25 §3): a paused
//! schedule fires nothing and shows its pause (when, why, by whom); on
//! resume the ticks that fell meanwhile follow its `catch_up` rule, those
//! it does not fire recorded as `paused` (see
//! [`dragnet_engine::schedule::paused_ticks`]).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use dragnet_engine::schedule::{paused_ticks, CronTrigger};
use dragnet_store::{Pause, ScheduleRow};
use serde::Deserialize;

use crate::auth::Caller;
use crate::bodies::{ErrorBody, PauseBody, ScheduleBody, ScheduleList, TickBody};
use crate::error::{ApiError, ApiResult};
use crate::extract::json_body;
use crate::state::AppState;

/// How many next and latest ticks are shown.
const NEXT: usize = 3;
const LATEST: u32 = 5;

#[utoipa::path(get, path = "/v1/schedules", tag = "schedules", security(("bearer" = [])),
    responses(
        (status = 200, body = ScheduleList),
        (status = 401, body = ErrorBody),
    ))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let schedules = describe(&state, caller.team_id(), None).await?;
    Ok(Json(ScheduleList { schedules }).into_response())
}

/// The longest reason a pause may give.
const REASON_MAX: usize = 500;

/// `POST /v1/schedules/{id}/pause`: why.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    /// Why it is paused, shown with the schedule (1 to 500 characters).
    pub reason: String,
}

/// `POST /v1/schedules/{id}/pause`: the schedule fires nothing until it is
/// resumed.
#[utoipa::path(post, path = "/v1/schedules/{id}/pause", tag = "schedules", security(("bearer" = [])),
    params(("id" = String, Path)),
    request_body(content = PauseRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Paused.", body = ScheduleBody),
        (status = 400, description = "No reason, or one over 500 characters.", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "It is paused already, or its trigger was removed.", body = ErrorBody),
    ))]
pub async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Path(schedule_id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let request: PauseRequest = json_body(&body)?;
    let paused = pause_schedule(&state, &caller, &schedule_id, &request.reason).await?;
    one(&state, &caller, &paused).await
}

/// Pauses the caller's team's schedule with `reason` (the API's and the
/// UI's one way to); the schedule as it was found.
pub async fn pause_schedule(
    state: &AppState,
    caller: &Caller,
    schedule_id: &str,
    reason: &str,
) -> ApiResult<ScheduleRow> {
    let reason = reason.trim();
    if reason.is_empty() || reason.chars().count() > REASON_MAX {
        return Err(ApiError::BadRequest {
            what: "reason",
            message: format!(
                "give `reason`: why the schedule is paused, 1 to {REASON_MAX} characters"
            ),
        });
    }
    let schedules = state.db().schedules();
    let found = owned(state, caller, schedule_id).await?;
    let pause = Pause {
        at: state.tick_clock().now(&schedules).await?,
        reason: reason.to_string(),
        by: caller.started_by(),
    };
    if !schedules
        .pause_schedule(caller.team_id(), schedule_id, &pause)
        .await?
    {
        return Err(conflict(&found, "pause"));
    }
    Ok(found)
}

/// `POST /v1/schedules/{id}/resume`: the schedule fires again; the ticks
/// that fell while it was paused follow its `catch_up` rule.
#[utoipa::path(post, path = "/v1/schedules/{id}/resume", tag = "schedules", security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "Resumed.", body = ScheduleBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "It is not paused.", body = ErrorBody),
    ))]
pub async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Path(schedule_id): Path<String>,
) -> ApiResult<Response> {
    let resumed = resume_schedule(&state, &caller, &schedule_id).await?;
    one(&state, &caller, &resumed).await
}

/// Resumes the caller's team's paused schedule, recording the ticks of the
/// pause its `catch_up` does not fire (the API's and the UI's one way to);
/// the schedule as it was found.
pub async fn resume_schedule(
    state: &AppState,
    caller: &Caller,
    schedule_id: &str,
) -> ApiResult<ScheduleRow> {
    let schedules = state.db().schedules();
    let found = owned(state, caller, schedule_id).await?;
    let Some(pause) = &found.paused else {
        return Err(conflict(&found, "resume"));
    };
    let now = state.tick_clock().now(&schedules).await?;
    let trigger = CronTrigger::from_parts(
        &found.cron,
        &found.timezone,
        &found.catch_up,
        &found.overlap,
    );
    let paused = match &trigger {
        Ok(t) => paused_ticks(t, found.last_tick_at, now),
        Err(_) => Vec::new(),
    };
    let reason = format!(
        "paused: {} (catch_up: {} on resume)",
        pause.reason, found.catch_up
    );
    if !schedules
        .resume_schedule(caller.team_id(), schedule_id, &paused, &reason, now)
        .await?
    {
        return Err(conflict(&found, "resume"));
    }
    Ok(found)
}

/// The caller's team's schedule, or 404 (another team's too).
async fn owned(state: &AppState, caller: &Caller, schedule_id: &str) -> ApiResult<ScheduleRow> {
    state
        .db()
        .schedules()
        .team_schedule(caller.team_id(), schedule_id)
        .await?
        .ok_or_else(|| ApiError::not_found("schedule", schedule_id))
}

/// Why `action` cannot be done to `schedule`.
fn conflict(schedule: &ScheduleRow, action: &str) -> ApiError {
    let id = &schedule.schedule_id;
    let (kind, message) = match (schedule.active, &schedule.paused, action) {
        (false, _, _) => (
            "schedule_retired",
            format!("schedule `{id}` is retired: its trigger is no longer in the workflow"),
        ),
        (true, Some(p), "pause") => (
            "schedule_paused",
            format!(
                "schedule `{id}` is paused already, since {} by {}: {}",
                p.at, p.by, p.reason
            ),
        ),
        _ => (
            "schedule_not_paused",
            format!("schedule `{id}` is not paused"),
        ),
    };
    ApiError::Conflict { kind, message }
}

/// One schedule as the API shows it now (its workflow's are described).
async fn one(state: &AppState, caller: &Caller, schedule: &ScheduleRow) -> ApiResult<Response> {
    let of_workflow = describe(state, caller.team_id(), Some(&schedule.workflow)).await?;
    let id = &schedule.schedule_id;
    let found = of_workflow.into_iter().find(|s| &s.schedule_id == id);
    let found = found.ok_or_else(|| ApiError::not_found("schedule", id))?;
    Ok(Json(found).into_response())
}

/// The team's schedules (of one workflow, or all) as the API shows them.
pub async fn describe(
    state: &AppState,
    team_id: &str,
    workflow: Option<&str>,
) -> ApiResult<Vec<ScheduleBody>> {
    let db = state.db();
    let now = state.tick_clock().now(&db.schedules()).await?;
    let mut out = Vec::new();
    for s in db.schedules().team_schedules(team_id, workflow).await? {
        let trigger = CronTrigger::from_parts(&s.cron, &s.timezone, &s.catch_up, &s.overlap).ok();
        // A paused schedule has no next ticks and is never late.
        let running = s.active && s.paused.is_none();
        let next = match (&trigger, running) {
            (Some(t), true) => t.next_ticks(now.max(s.last_tick_at), NEXT),
            _ => Vec::new(),
        };
        let due = match (&trigger, running) {
            (Some(t), true) => t.ticks_between(s.last_tick_at, now).first().copied(),
            _ => None,
        };
        let lateness_ms = due.map_or(0, |d| (now - d).num_milliseconds().max(0));
        let ticks: Vec<TickBody> = db
            .schedules()
            .recent_ticks(&s.schedule_id, LATEST)
            .await?
            .into_iter()
            .map(|t| {
                let handled = t.fired_at.unwrap_or(t.handled_at);
                TickBody {
                    scheduled_for: t.scheduled_for,
                    status: t.status.as_str().to_string(),
                    reason: t.reason,
                    run_id: t.run_id,
                    handled_at: t.handled_at,
                    lateness_ms: (handled - t.scheduled_for).num_milliseconds().max(0),
                }
            })
            .collect();
        out.push(ScheduleBody {
            schedule_id: s.schedule_id,
            workflow: s.workflow,
            cron: s.cron,
            timezone: s.timezone,
            catch_up: s.catch_up,
            overlap: s.overlap,
            active: s.active,
            paused: s.paused.map(|p| PauseBody {
                at: p.at,
                reason: p.reason,
                by: p.by,
            }),
            next_ticks: next,
            last_ticks: ticks,
            lateness_ms,
            checked_at: now,
        });
    }
    Ok(out)
}
