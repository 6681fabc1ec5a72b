//! `/v1/validate` and `/v1/workflows`: a file checked with the same
//! located diagnostics as `dragnet validate`; workflows stored per team as
//! versions (unchanged content is no new version), listed, read with their
//! versions, and deleted (hidden; versions and runs kept).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use dragnet_store::NewVersion;
use serde::Deserialize;
use serde_json::json;

use crate::auth::Caller;
use crate::error::{diagnostics_json, ApiError, ApiResult};
use crate::extract::Query;
use crate::launch::compile;
use crate::state::AppState;
use crate::upload;

/// `?file=`: the file name diagnostics show.
#[derive(Debug, Default, Deserialize)]
pub struct FileParam {
    pub file: Option<String>,
}

/// `POST /v1/validate`: 200 with `valid` and, when invalid, the
/// diagnostics (a check that found problems has still answered).
pub async fn validate(
    State(state): State<AppState>,
    _caller: Caller,
    Query(param): Query<FileParam>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let up = upload::read(&headers, param.file, &body, "workflow.yaml")?;
    let answer = match compile(&state, &up.file_name, up.source, up.documents).await? {
        Ok(wf) => json!({"valid": true, "name": wf.name, "steps": wf.steps.len()}),
        Err(d) => json!({"valid": false, "diagnostics": diagnostics_json(&d)}),
    };
    Ok(Json(answer).into_response())
}

/// `PUT /v1/workflows/{name}`: 201 with a new version, 200 when the content
/// equals the current version, 422 with diagnostics when invalid.
pub async fn put(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    Query(param): Query<FileParam>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let up = upload::read(&headers, param.file, &body, &format!("{name}.yaml"))?;
    let hash = up.content_hash();
    let wf = compile(
        &state,
        &up.file_name,
        up.source.clone(),
        up.documents.clone(),
    )
    .await?
    .map_err(ApiError::InvalidWorkflow)?;
    if wf.name != name {
        return Err(ApiError::Rejected {
            kind: "name_mismatch",
            message: format!(
                "the file's `name` is `{}` but it is submitted as `{name}`; PUT it to \
                 /v1/workflows/{} or change its name",
                wf.name, wf.name
            ),
        });
    }
    let pushed = state
        .db()
        .push_workflow(
            NewVersion {
                team_id: caller.team_id(),
                name: &name,
                file_name: &up.file_name,
                source: &up.source,
                documents: &up.documents,
                content_hash: &hash,
            },
            state.clock().now(),
        )
        .await
        .map_err(|e| match e {
            dragnet_store::Error::Exists { .. } => ApiError::Conflict {
                kind: "concurrent_push",
                message: "another push of this workflow made the same version; send it again"
                    .into(),
            },
            other => ApiError::Store(other),
        })?;
    let specs = crate::scheduler::specs(caller.team_id(), &wf);
    state
        .db()
        .sync_schedules(caller.team_id(), &name, &specs, state.clock().now())
        .await?;
    let status = match pushed.created {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    let body = json!({
        "name": name,
        "version": pushed.version,
        "created": pushed.created,
        "content_hash": hash,
        "steps": wf.steps.len(),
        "schedules": specs.iter().map(|s| &s.schedule_id).collect::<Vec<_>>(),
    });
    Ok((status, Json(body)).into_response())
}

/// `GET /v1/workflows`.
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let workflows = state.db().list_workflows(caller.team_id()).await?;
    Ok(Json(json!({ "workflows": workflows })).into_response())
}

/// `GET /v1/workflows/{name}`: the current version's text and every
/// version.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    let db = state.db();
    let (summary, versions) = db
        .get_workflow(caller.team_id(), &name)
        .await?
        .ok_or_else(|| ApiError::not_found("workflow", &name))?;
    let current = db
        .workflow_version(caller.team_id(), &name, summary.current_version)
        .await?
        .ok_or_else(|| ApiError::not_found("workflow", &name))?;
    Ok(Json(json!({
        "name": summary.name,
        "current_version": summary.current_version,
        "created_at": summary.created_at,
        "updated_at": summary.updated_at,
        "file_name": current.info.file_name,
        "source": current.source,
        "documents": current.documents.keys().collect::<Vec<_>>(),
        "versions": versions,
        "schedules": crate::schedules::describe(&state, caller.team_id(), Some(&name)).await?,
    }))
    .into_response())
}

/// `DELETE /v1/workflows/{name}`: 204; its runs and versions are kept.
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    let now = state.clock().now();
    match state
        .db()
        .delete_workflow(caller.team_id(), &name, now)
        .await?
    {
        true => {
            state
                .db()
                .stop_schedules(caller.team_id(), &name, now)
                .await?;
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        false => Err(ApiError::not_found("workflow", name)),
    }
}
