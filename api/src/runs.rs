//! `/v1/workflows/{name}/runs` and `/v1/runs`: starting a run (inputs
//! typed, `Idempotency-Key` honoured for 24 hours), listing the team's runs
//! newest first with a cursor, reading one run, and cancelling it.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use chrono::DateTime;
use dragnet_engine::run::{RunRecord, RunStatus, TriggerKind};
use dragnet_store::RunFilter;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::auth::Caller;
use crate::bodies::{Cancelling, ErrorBody, RunCreated, RunItem, RunList, RunRecordBody};
use crate::error::{storable, storable_name, ApiError, ApiResult};
use crate::extract::{json_body, Query};
use crate::launch::{self, RunRequest};
use crate::state::AppState;

/// The longest page of a listing, and the default.
const LIMIT_MAX: u32 = 500;
const LIMIT_DEFAULT: u32 = 50;

/// `POST /v1/workflows/{name}/runs`: 201 with the new run, or 200 with the
/// run an earlier request with the same `Idempotency-Key` made.
#[utoipa::path(post, path = "/v1/workflows/{name}/runs", tag = "runs", security(("bearer" = [])),
    params(
        ("name" = String, Path),
        ("Idempotency-Key" = Option<String>, Header,
            description = "The same key and body within 24 hours answer with the first run."),
    ),
    request_body(content = Option<RunRequest>, content_type = "application/json"),
    responses(
        (status = 200, description = "The run an earlier request with this key made.", body = RunCreated),
        (status = 201, body = RunCreated),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "The key was used with another body.", body = ErrorBody),
        (status = 422, description = "Invalid inputs, or a version that no longer compiles.", body = ErrorBody),
        (status = 503, description = "The server is shutting down.", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let name = storable_name(name, "workflow")?;
    let request: RunRequest = json_body(&body)?;
    let key = match headers.get("idempotency-key") {
        None => None,
        Some(v) => match v.to_str() {
            Ok(k) if !k.is_empty() && k.len() <= 255 && storable(k) => Some(k.to_string()),
            _ => {
                return Err(ApiError::bad_request(
                    "Idempotency-Key",
                    "give 1 to 255 visible ASCII characters",
                ))
            }
        },
    };
    let body_hash = request_hash(&name, &body);
    let idempotency = key.as_deref().map(|k| (k, body_hash.as_str()));
    let started = launch::start(&state, &caller, &name, request, idempotency).await?;
    let status = match started.created {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    let run_status = match started.created {
        true => RunStatus::Queued,
        false => state
            .db()
            .runs()
            .get_run_with(&started.run_id, false)
            .await?
            .map_or(RunStatus::Queued, |r| r.status),
    };
    let body = RunCreated::new(
        started.run_id,
        name,
        started.version,
        run_status,
        started.created,
    );
    Ok((status, Json(body)).into_response())
}

/// What an idempotency key is checked against: the workflow and the body.
fn request_hash(name: &str, body: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([0]);
    h.update(body);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `GET /v1/runs` parameters.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Only this workflow's runs.
    pub workflow: Option<String>,
    /// Only runs with this status.
    #[param(value_type = Option<String>, pattern = "^(running|succeeded|partial|failed|cancelled|interrupted)$")]
    pub status: Option<RunStatus>,
    /// Only runs started this way (`cron` is `schedule`).
    #[param(value_type = Option<String>, pattern = "^(manual|api|schedule|cron|rerun)$")]
    pub trigger: Option<String>,
    /// Runs per page, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the page before.
    pub cursor: Option<String>,
}

/// `GET /v1/runs`: newest first; `next_cursor` reads the next page.
#[utoipa::path(get, path = "/v1/runs", tag = "runs", security(("bearer" = [])),
    params(ListParams),
    responses(
        (status = 200, body = RunList),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(params): Query<ListParams>,
) -> ApiResult<Response> {
    let limit = params.limit.unwrap_or(LIMIT_DEFAULT);
    if limit == 0 || limit > LIMIT_MAX {
        return Err(ApiError::bad_request(
            "limit",
            format!("give 1 to {LIMIT_MAX}, got {limit}"),
        ));
    }
    if !params.workflow.as_deref().is_none_or(storable) {
        return Err(ApiError::bad_request("workflow", "not a workflow name"));
    }
    let trigger = params
        .trigger
        .as_deref()
        .map(|t| TriggerKind::parse(t).ok_or_else(|| bad_trigger(t)))
        .transpose()?;
    let filter = RunFilter {
        team_id: Some(caller.team_id().to_string()),
        workflow: params.workflow,
        status: params.status,
        trigger,
        before: params.cursor.as_deref().map(decode_cursor).transpose()?,
        since: None,
    };
    let mut runs: Vec<RunItem> = state
        .db()
        .runs()
        .list_runs_where(&filter, limit + 1)
        .await?
        .into_iter()
        .map(|r| RunItem {
            run_id: r.run_id,
            workflow: r.workflow,
            trigger: r.trigger.map(|k| k.as_str().to_string()),
            status: r.status.as_str().to_string(),
            started_at: r.started_at,
            duration_ms: r.duration_ms,
            steps: r.steps,
            failed: r.failed,
            skipped: r.skipped,
        })
        .collect();
    let next_cursor = match runs.len() > limit as usize {
        true => {
            runs.truncate(limit as usize);
            runs.last()
                .map(|r| encode_cursor(r.started_at.timestamp_millis(), &r.run_id))
        }
        false => None,
    };
    Ok(Json(RunList { runs, next_cursor }).into_response())
}

/// `?trigger=` naming no kind.
pub(crate) fn bad_trigger(given: &str) -> ApiError {
    let kinds: Vec<&str> = TriggerKind::ALL.iter().map(|k| k.as_str()).collect();
    ApiError::bad_request(
        "trigger",
        format!(
            "`{}` is not a trigger kind; give one of {}",
            given.escape_default(),
            kinds.join(", ")
        ),
    )
}

pub(crate) fn encode_cursor(at_ms: i64, run_id: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{at_ms}:{run_id}"))
}

pub(crate) fn decode_cursor(cursor: &str) -> ApiResult<(DateTime<chrono::Utc>, String)> {
    let bad = || ApiError::bad_request("cursor", "not a cursor this server gave out");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| bad())?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (at, id) = text.split_once(':').ok_or_else(bad)?;
    if !storable(id) {
        return Err(bad());
    }
    let at = at
        .parse::<i64>()
        .ok()
        .and_then(DateTime::from_timestamp_millis)
        .ok_or_else(bad)?;
    Ok((at, id.to_string()))
}

/// `GET /v1/runs/{id}` parameters.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GetParams {
    /// Include each step's output (left out by default: it can be large).
    #[serde(default)]
    pub outputs: bool,
}

/// The caller's run `run_id` (its steps' outputs only when `outputs`)
/// with its workflow version, or 404.
pub async fn owned_run(
    state: &AppState,
    caller: &Caller,
    run_id: &str,
    outputs: bool,
) -> ApiResult<(RunRecord, Option<i64>)> {
    let version = check_owner(state, caller, run_id).await?;
    let record = state
        .db()
        .runs()
        .get_run_with(run_id, outputs)
        .await?
        .ok_or_else(|| ApiError::not_found("run", run_id))?;
    Ok((record, version))
}

/// 404 unless run `run_id` is the caller's; its workflow version.
pub async fn check_owner(
    state: &AppState,
    caller: &Caller,
    run_id: &str,
) -> ApiResult<Option<i64>> {
    let missing = || ApiError::not_found("run", run_id.escape_default().to_string());
    if !storable(run_id) {
        return Err(missing());
    }
    let (team, version) = state
        .db()
        .runs()
        .run_owner(run_id)
        .await?
        .ok_or_else(missing)?;
    match team.as_deref() == Some(caller.team_id()) {
        true => Ok(version),
        false => Err(missing()),
    }
}

/// `GET /v1/runs/{id}`.
#[utoipa::path(get, path = "/v1/runs/{id}", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path), GetParams),
    responses(
        (status = 200, body = RunRecordBody),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(run_id): Path<String>,
    Query(params): Query<GetParams>,
) -> ApiResult<Response> {
    let (record, version) = owned_run(&state, &caller, &run_id, params.outputs).await?;
    let mut body = serde_json::to_value(&record).unwrap_or(Value::Null);
    if let Some(obj) = body.as_object_mut() {
        obj.insert("workflow_version".into(), json!(version));
    }
    Ok(Json(body).into_response())
}

/// `POST /v1/runs/{id}/cancel`: 202 while it stops; 409 when it has ended.
#[utoipa::path(post, path = "/v1/runs/{id}/cancel", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 202, body = Cancelling),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "The run has ended.", body = ErrorBody),
    ))]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(run_id): Path<String>,
) -> ApiResult<Response> {
    let (record, _) = owned_run(&state, &caller, &run_id, false).await?;
    // A run whose record has ended may still be leaving the live registry.
    let ended = !matches!(record.status, RunStatus::Running | RunStatus::Queued);
    match !ended && launch::cancel(&state, &caller, &run_id).await? {
        true => Ok((
            StatusCode::ACCEPTED,
            Json(Cancelling {
                run_id,
                status: "cancelling".into(),
            }),
        )
            .into_response()),
        false => Err(ApiError::Conflict {
            kind: "run_ended",
            message: format!("run `{run_id}` has ended ({})", record.status),
        }),
    }
}

/// `POST /v1/runs/{id}/rerun`: what to run again.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RerunRequest {
    /// Run again from this step: finished steps it does not lead to keep
    /// their recorded outputs. Absent: every step runs again.
    pub from: Option<String>,
}

/// `POST /v1/runs/{id}/rerun`: a new run of the same version and inputs.
#[utoipa::path(post, path = "/v1/runs/{id}/rerun", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path)),
    request_body(content = Option<RerunRequest>, content_type = "application/json"),
    responses(
        (status = 201, body = RunCreated),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "The run has not ended yet.", body = ErrorBody),
        (status = 422, description = "`from` is not a step, or the version no longer compiles.", body = ErrorBody),
        (status = 503, description = "The server is shutting down.", body = ErrorBody),
    ))]
pub async fn rerun(
    State(state): State<AppState>,
    caller: Caller,
    Path(run_id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let request: RerunRequest = json_body(&body)?;
    let (original, version) = owned_run(&state, &caller, &run_id, true).await?;
    if matches!(original.status, RunStatus::Running | RunStatus::Queued) {
        return Err(ApiError::Conflict {
            kind: "run_not_ended",
            message: format!(
                "run `{run_id}` is {}; rerun it once it has ended",
                original.status
            ),
        });
    }
    let version = version.ok_or_else(|| ApiError::not_found("run", &run_id))?;
    let started =
        launch::rerun(&state, &caller, &original, version, request.from.as_deref()).await?;
    let body = RunCreated::new(
        started.run_id,
        original.workflow,
        version,
        RunStatus::Queued,
        true,
    );
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_and_strangers_are_refused() {
        let c = encode_cursor(1_700_000_000_123, "run_x");
        let (at, id) = decode_cursor(&c).expect("reads back");
        assert_eq!(at.timestamp_millis(), 1_700_000_000_123);
        assert_eq!(id, "run_x");
        assert!(decode_cursor("not base64!").is_err());
        assert!(decode_cursor("bm9jb2xvbg").is_err());
    }
}
