//! `GET /v1/schedules`: every schedule of the team with its next ticks, its
//! latest ticks and their outcome, and how late it is — the time since the
//! oldest tick that is due and not yet handled (0 when none is).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use dragnet_engine::schedule::CronTrigger;

use crate::auth::Caller;
use crate::bodies::{ErrorBody, ScheduleBody, ScheduleList, TickBody};
use crate::error::ApiResult;
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
        let next = match (&trigger, s.active) {
            (Some(t), true) => t.next_ticks(now.max(s.last_tick_at), NEXT),
            _ => Vec::new(),
        };
        let due = match (&trigger, s.active) {
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
            next_ticks: next,
            last_ticks: ticks,
            lateness_ms,
            checked_at: now,
        });
    }
    Ok(out)
}
