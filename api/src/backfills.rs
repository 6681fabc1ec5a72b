//! Backfills (issue 25 §2): `POST /v1/workflows/{name}/backfills` runs
//! every tick of the workflow's schedules in a window (or, with `dry_run`,
//! lists them), `GET /v1/backfills` and `GET /v1/backfills/{id}` follow
//! them, `POST /v1/backfills/{id}/cancel` stops one as a whole. The rules
//! are [`dragnet_runner::backfill`]'s.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use dragnet_runner::backfill::{self, BackfillRequest};
use dragnet_store::{BackfillRow, BackfillTick};
use serde::Deserialize;

use crate::auth::Caller;
use crate::bodies::{
    BackfillBody, BackfillCounts, BackfillList, BackfillTickBody, DryRunBody, ErrorBody,
    PlannedTickBody,
};
use crate::error::{storable_name, ApiError, ApiResult};
use crate::state::AppState;

/// `POST /v1/workflows/{name}/backfills`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackfillRequestBody {
    /// The window's first instant (its ticks from here on, inclusive).
    pub from: DateTime<Utc>,
    /// The window's last instant (inclusive).
    pub to: DateTime<Utc>,
    /// Runs at a time, 1 (the default) to 16.
    #[serde(default)]
    pub concurrency: Option<u32>,
    /// `oldest_first` (the default) or `newest_first`.
    #[serde(default)]
    pub order: Option<String>,
    /// Run ticks that already have a complete run too.
    #[serde(default)]
    pub rerun: bool,
    /// List the ticks only: nothing is recorded or run.
    #[serde(default)]
    pub dry_run: bool,
}

impl BackfillRequestBody {
    fn request(&self) -> ApiResult<BackfillRequest> {
        let newest_first = match self.order.as_deref() {
            None | Some("oldest_first") => false,
            Some("newest_first") => true,
            Some(other) => {
                return Err(ApiError::bad_request(
                    "order",
                    format!("`{other}` is not an order; give oldest_first or newest_first"),
                ))
            }
        };
        Ok(BackfillRequest {
            from: self.from,
            to: self.to,
            newest_first,
            concurrency: self.concurrency.unwrap_or(1),
            rerun: self.rerun,
        })
    }
}

#[utoipa::path(post, path = "/v1/workflows/{name}/backfills", tag = "backfills", security(("bearer" = [])),
    params(("name" = String, Path)),
    request_body(content = BackfillRequestBody, content_type = "application/json"),
    responses(
        (status = 200, description = "A dry run: the ticks it would run.", body = DryRunBody),
        (status = 201, description = "Recorded; its first runs started.", body = BackfillBody),
        (status = 400, description = "Malformed: not JSON, a time that is none, an unknown order.", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 422, description = "Refused (`invalid_backfill`): `from` after `to`, a concurrency out of 1 to 16, a workflow without cron triggers, more than 1,000 ticks; or its current version no longer compiles.", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let name = storable_name(name, "workflow")?;
    let asked: BackfillRequestBody =
        serde_json::from_slice(&body).map_err(|e| ApiError::bad_request("request body", e))?;
    let request = asked.request()?;
    let team = caller.team_id();
    if asked.dry_run {
        let ticks = backfill::dry_run(state.launcher(), team, &name, &request).await?;
        let ticks = ticks
            .into_iter()
            .map(|t| PlannedTickBody {
                scheduled_for: t.scheduled_for,
                local: t.local,
                schedule_id: t.schedule_id,
                complete_run: t.complete_run,
            })
            .collect();
        return Ok(Json(DryRunBody {
            workflow: name,
            ticks,
        })
        .into_response());
    }
    let by = caller.started_by();
    let now = state.clock().now();
    let row = backfill::create(state.launcher(), team, &name, &request, Some(&by), now).await?;
    let body = described(&state, row, true).await?;
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

#[utoipa::path(get, path = "/v1/backfills", tag = "backfills", security(("bearer" = [])),
    responses(
        (status = 200, description = "The team's backfills, newest first (100 at most).", body = BackfillList),
        (status = 401, body = ErrorBody),
    ))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let rows = state
        .db()
        .backfills()
        .team_backfills(caller.team_id(), 100)
        .await?;
    let mut backfills = Vec::with_capacity(rows.len());
    for row in rows {
        backfills.push(described(&state, row, false).await?);
    }
    Ok(Json(BackfillList { backfills }).into_response())
}

#[utoipa::path(get, path = "/v1/backfills/{id}", tag = "backfills", security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "The backfill with every tick and its run.", body = BackfillBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(backfill_id): Path<String>,
) -> ApiResult<Response> {
    let row = owned(&state, &caller, &backfill_id).await?;
    Ok(Json(described(&state, row, true).await?).into_response())
}

#[utoipa::path(post, path = "/v1/backfills/{id}/cancel", tag = "backfills", security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "Cancelled: no tick starts any more, its runs going are cancelled.", body = BackfillBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "It has ended.", body = ErrorBody),
    ))]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(backfill_id): Path<String>,
) -> ApiResult<Response> {
    let row = cancel_backfill(&state, &caller, &backfill_id).await?;
    Ok(Json(described(&state, row, true).await?).into_response())
}

/// Cancels the caller's team's backfill (the API's and the UI's one way).
pub async fn cancel_backfill(
    state: &AppState,
    caller: &Caller,
    backfill_id: &str,
) -> ApiResult<BackfillRow> {
    let row = owned(state, caller, backfill_id).await?;
    let now = state.clock().now();
    match backfill::cancel(state.launcher(), caller.team_id(), backfill_id, now).await? {
        Some(row) => Ok(row),
        None => Err(ApiError::Conflict {
            kind: "backfill_ended",
            message: format!("backfill {backfill_id} has ended ({})", row.status),
        }),
    }
}

/// The caller's team's backfill `backfill_id`, or 404.
pub async fn owned(state: &AppState, caller: &Caller, backfill_id: &str) -> ApiResult<BackfillRow> {
    let backfill_id = storable_name(backfill_id.to_string(), "backfill")?;
    let backfill_id = backfill_id.as_str();
    state
        .db()
        .backfills()
        .backfill(caller.team_id(), backfill_id)
        .await?
        .ok_or_else(|| ApiError::not_found("backfill", backfill_id))
}

/// A backfill as the API writes it, its ticks too when `ticks`.
pub async fn described(state: &AppState, row: BackfillRow, ticks: bool) -> ApiResult<BackfillBody> {
    let all = state
        .db()
        .backfills()
        .backfill_ticks(&row.backfill_id)
        .await?;
    Ok(BackfillBody {
        counts: counts(&all),
        ticks: ticks.then(|| all.into_iter().map(tick_body).collect()),
        backfill_id: row.backfill_id,
        workflow: row.workflow,
        from: row.from,
        to: row.to,
        order: match row.newest_first {
            true => "newest_first",
            false => "oldest_first",
        }
        .into(),
        concurrency: row.concurrency,
        rerun: row.rerun,
        status: row.status,
        created_by: row.created_by,
        created_at: row.created_at,
        finished_at: row.finished_at,
    })
}

fn tick_body(t: BackfillTick) -> BackfillTickBody {
    BackfillTickBody {
        scheduled_for: t.scheduled_for,
        schedule_id: t.schedule_id,
        state: t.state,
        run_id: t.run_id,
        run_status: t.run_status,
        reason: t.reason,
    }
}

/// How a backfill's ticks stand: each by its state, a started one by its
/// run's status.
fn counts(ticks: &[BackfillTick]) -> BackfillCounts {
    let mut c = BackfillCounts {
        ticks: ticks.len(),
        ..BackfillCounts::default()
    };
    for t in ticks {
        match (t.state.as_str(), t.run_status.as_deref()) {
            ("pending", _) => c.pending += 1,
            ("skipped", _) => c.skipped += 1,
            ("cancelled", _) => c.cancelled += 1,
            (_, Some("succeeded")) => c.succeeded += 1,
            (_, Some("partial")) => c.partial += 1,
            (_, Some("queued" | "running") | None) => c.running += 1,
            (_, Some("cancelled")) => c.cancelled += 1,
            (_, Some(_)) => c.failed += 1,
        }
    }
    c
}
