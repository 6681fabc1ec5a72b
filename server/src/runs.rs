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
use dragnet_engine::run::{RunRecord, RunStatus};
use dragnet_store::RunFilter;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{json_body, Query};
use crate::launch::{self, RunRequest};
use crate::state::AppState;

/// The longest page of a listing, and the default.
const LIMIT_MAX: u32 = 500;
const LIMIT_DEFAULT: u32 = 50;

/// `POST /v1/workflows/{name}/runs`: 201 with the new run, or 200 with the
/// run an earlier request with the same `Idempotency-Key` made.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let request: RunRequest = json_body(&body)?;
    let key = match headers.get("idempotency-key") {
        None => None,
        Some(v) => match v.to_str() {
            Ok(k) if !k.is_empty() && k.len() <= 255 => Some(k.to_string()),
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
        true => RunStatus::Running,
        false => state
            .db()
            .get_run(&started.run_id)
            .await?
            .map_or(RunStatus::Running, |r| r.status),
    };
    let body = json!({
        "run_id": started.run_id,
        "workflow": name,
        "version": started.version,
        "status": run_status,
        "created": started.created,
        "links": {
            "self": format!("/v1/runs/{}", started.run_id),
            "events": format!("/v1/runs/{}/events", started.run_id),
        },
    });
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
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    pub workflow: Option<String>,
    pub status: Option<RunStatus>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// `GET /v1/runs`: newest first; `next_cursor` reads the next page.
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
    let filter = RunFilter {
        team_id: Some(caller.team_id().to_string()),
        workflow: params.workflow,
        status: params.status,
        before: params.cursor.as_deref().map(decode_cursor).transpose()?,
    };
    let mut runs = state.db().list_runs_where(&filter, limit + 1).await?;
    let next_cursor = match runs.len() > limit as usize {
        true => {
            runs.truncate(limit as usize);
            runs.last()
                .map(|r| encode_cursor(r.started_at.timestamp_millis(), &r.run_id))
        }
        false => None,
    };
    Ok(Json(json!({ "runs": runs, "next_cursor": next_cursor })).into_response())
}

fn encode_cursor(at_ms: i64, run_id: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{at_ms}:{run_id}"))
}

fn decode_cursor(cursor: &str) -> ApiResult<(DateTime<chrono::Utc>, String)> {
    let bad = || ApiError::bad_request("cursor", "not a cursor this server gave out");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| bad())?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (at, id) = text.split_once(':').ok_or_else(bad)?;
    let at = at
        .parse::<i64>()
        .ok()
        .and_then(DateTime::from_timestamp_millis)
        .ok_or_else(bad)?;
    Ok((at, id.to_string()))
}

/// `GET /v1/runs/{id}` parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// Include each step's output (left out by default: it can be large).
    #[serde(default)]
    pub outputs: bool,
}

/// The caller's run `run_id` with its workflow version, or 404.
pub async fn owned_run(
    state: &AppState,
    caller: &Caller,
    run_id: &str,
) -> ApiResult<(RunRecord, Option<i64>)> {
    let missing = || ApiError::not_found("run", run_id);
    let (team, version) = state.db().run_owner(run_id).await?.ok_or_else(missing)?;
    if team.as_deref() != Some(caller.team_id()) {
        return Err(missing());
    }
    let record = state.db().get_run(run_id).await?.ok_or_else(missing)?;
    Ok((record, version))
}

/// `GET /v1/runs/{id}`.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(run_id): Path<String>,
    Query(params): Query<GetParams>,
) -> ApiResult<Response> {
    let (mut record, version) = owned_run(&state, &caller, &run_id).await?;
    if !params.outputs {
        record.steps.iter_mut().for_each(|s| s.output = None);
    }
    let mut body = serde_json::to_value(&record).unwrap_or(Value::Null);
    if let Some(obj) = body.as_object_mut() {
        obj.insert("workflow_version".into(), json!(version));
    }
    Ok(Json(body).into_response())
}

/// `POST /v1/runs/{id}/cancel`: 202 while it stops; 409 when it has ended.
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(run_id): Path<String>,
) -> ApiResult<Response> {
    let (record, _) = owned_run(&state, &caller, &run_id).await?;
    match launch::cancel(&state, &caller, &run_id) {
        Some(_) => Ok((
            StatusCode::ACCEPTED,
            Json(json!({"run_id": run_id, "status": "cancelling"})),
        )
            .into_response()),
        None => Err(ApiError::Conflict {
            kind: "run_ended",
            message: format!("run `{run_id}` has ended ({})", record.status),
        }),
    }
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
