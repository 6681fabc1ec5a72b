//! `/v1/state` (issue 25 §1): the team's incremental steps' watermarks.
//! `GET /v1/state` lists them, `GET /v1/state/{workflow}/{step}` reads
//! one, and `DELETE` of the same resets it: the step's next walk starts
//! from its `initial` again. A watermark exists once a complete walk moved
//! it; a step that never completed one has none (404).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use dragnet_store::{StoredWatermark, WatermarkKey};

use crate::auth::Caller;
use crate::bodies::{ErrorBody, WatermarkBody, WatermarkList};
use crate::error::{storable_name, ApiError, ApiResult};
use crate::state::AppState;

/// The body of one watermark.
pub fn body(workflow: String, step: String, w: StoredWatermark) -> WatermarkBody {
    WatermarkBody {
        workflow,
        step,
        value: w.value,
        scale: w.scale.name().to_string(),
        keys_at_value: w.row_keys.len(),
        run_id: w.run_id,
        updated_at: w.updated_at,
    }
}

#[utoipa::path(get, path = "/v1/state", tag = "state", security(("bearer" = [])),
    responses(
        (status = 200, description = "Every watermark of the team, by workflow and step.", body = WatermarkList),
        (status = 401, body = ErrorBody),
    ))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let watermarks = state
        .db()
        .watermarks()
        .team_watermarks(caller.team_id())
        .await?
        .into_iter()
        .map(|(workflow, step, w)| body(workflow, step, w))
        .collect();
    Ok(Json(WatermarkList { watermarks }).into_response())
}

#[utoipa::path(get, path = "/v1/state/{workflow}/{step}", tag = "state", security(("bearer" = [])),
    params(("workflow" = String, Path), ("step" = String, Path)),
    responses(
        (status = 200, body = WatermarkBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "No complete walk of the step has set one.", body = ErrorBody),
    ))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path((workflow, step)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (workflow, step) = named(workflow, step)?;
    let key = key(&caller, &workflow, &step);
    match state.db().watermarks().watermark(key).await? {
        Some(w) => Ok(Json(body(workflow, step, w)).into_response()),
        None => Err(not_found(&workflow, &step)),
    }
}

/// `DELETE /v1/state/{workflow}/{step}`: 204, or 404 when there is none.
#[utoipa::path(delete, path = "/v1/state/{workflow}/{step}", tag = "state", security(("bearer" = [])),
    params(("workflow" = String, Path), ("step" = String, Path)),
    responses(
        (status = 204, description = "Reset: the step's next walk starts from its `initial`."),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn reset(
    State(state): State<AppState>,
    caller: Caller,
    Path((workflow, step)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (workflow, step) = named(workflow, step)?;
    match state
        .db()
        .watermarks()
        .reset(key(&caller, &workflow, &step))
        .await?
    {
        true => Ok(StatusCode::NO_CONTENT.into_response()),
        false => Err(not_found(&workflow, &step)),
    }
}

/// A workflow and a step named in a path, each one the store could hold.
fn named(workflow: String, step: String) -> ApiResult<(String, String)> {
    Ok((
        storable_name(workflow, "workflow")?,
        storable_name(step, "step")?,
    ))
}

/// The caller's team's watermark of `workflow`'s `step`.
fn key<'a>(caller: &'a Caller, workflow: &'a str, step: &'a str) -> WatermarkKey<'a> {
    WatermarkKey {
        team_id: caller.team_id(),
        workflow,
        step,
    }
}

fn not_found(workflow: &str, step: &str) -> ApiError {
    ApiError::not_found("watermark", format!("{workflow}/{step}"))
}
