//! `/v1/validate` and `/v1/workflows`: a file checked with the same
//! located diagnostics as `dragnet validate`; workflows stored per team as
//! versions (unchanged content is no new version), listed, read with their
//! versions, and deleted (hidden; versions and runs kept).

use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use dragnet_store::NewVersion;
use serde::Deserialize;

use crate::auth::Caller;
use crate::bodies::{
    ErrorBody, PushedBody, Validation, VersionBody, WorkflowDetail, WorkflowItem, WorkflowList,
};
use crate::error::{diagnostic_bodies, storable_name, ApiError, ApiResult};
use crate::extract::Query;
use crate::launch::compile;
use crate::state::AppState;
use crate::upload;

/// `?file=`: the file name diagnostics show.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FileParam {
    /// The file name diagnostics show (else `X-Dragnet-File`, the bundle's
    /// `file_name`, or `<name>.yaml`).
    pub file: Option<String>,
}

/// A multipart upload: the file as the part `workflow`, each document as
/// a part named by its path.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct MultipartUpload {
    /// The workflow file.
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    workflow: String,
}

/// The workflow file (YAML or JSON), or a JSON bundle
/// `{workflow, documents?, file_name?}`.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct Bundle {
    /// The workflow file's text.
    workflow: String,
    /// OpenAPI documents by the path the file names them by.
    documents: Option<std::collections::BTreeMap<String, String>>,
    file_name: Option<String>,
}

/// `POST /v1/validate`: 200 with `valid` and, when invalid, the
/// diagnostics (a check that found problems has still answered).
#[utoipa::path(post, path = "/v1/validate", tag = "workflows", security(("bearer" = [])),
    params(FileParam),
    request_body(content(
        (Bundle = "application/json"),
        (String = "application/yaml"),
        (String = "text/plain"),
        (MultipartUpload = "multipart/form-data"),
    )),
    responses(
        (status = 200, body = Validation),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts.", body = ErrorBody),
    ))]
pub async fn validate(
    State(state): State<AppState>,
    _caller: Caller,
    Query(param): Query<FileParam>,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<Response> {
    let up = read_upload(&state, &headers, param.file, request, "workflow.yaml").await?;
    let compiled = compile(&state, &up.file_name, up.source.clone(), up.documents).await?;
    // Held to the server's provider rules as a push is.
    let compiled = compiled.and_then(|wf| {
        let runner = &state.config().runner;
        crate::provider_rules::check(
            &runner.upstream_hosts,
            &runner.mcp_servers,
            &up.file_name,
            &up.source,
            &wf,
        )
        .map(|()| wf)
    });
    let answer = match compiled {
        Ok(wf) => Validation {
            valid: true,
            name: Some(wf.name),
            steps: Some(wf.steps.len()),
            diagnostics: None,
        },
        Err(d) => Validation {
            valid: false,
            name: None,
            steps: None,
            diagnostics: Some(diagnostic_bodies(&d)),
        },
    };
    Ok(Json(answer).into_response())
}

/// The upload in `request`: multipart, or a body read within the limit.
async fn read_upload(
    state: &AppState,
    headers: &HeaderMap,
    file: Option<String>,
    request: Request,
    fallback: &str,
) -> ApiResult<upload::Upload> {
    let limit = state.config().body_limit;
    if upload::is_multipart(headers) {
        let form = Multipart::from_request(request, state)
            .await
            .map_err(|e| ApiError::bad_request("multipart body", e.body_text()))?;
        // Parts are read within the body limit too.
        return upload::read_multipart(headers, file, form, fallback, limit).await;
    }
    let body = Bytes::from_request(request, state).await.map_err(|e| {
        match e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            true => ApiError::TooLarge { limit },
            false => ApiError::bad_request("request body", e.body_text()),
        }
    })?;
    upload::read(headers, file, &body, fallback)
}

/// `PUT /v1/workflows/{name}`: 201 with a new version, 200 when the content
/// equals the current version, 422 with diagnostics when invalid.
#[utoipa::path(put, path = "/v1/workflows/{name}", tag = "workflows", security(("bearer" = [])),
    params(("name" = String, Path, description = "The workflow's name (its file's `name`)."), FileParam),
    request_body(content(
        (Bundle = "application/json"),
        (String = "application/yaml"),
        (String = "text/plain"),
        (MultipartUpload = "multipart/form-data"),
    )),
    responses(
        (status = 200, description = "Unchanged: the current version has this content.", body = PushedBody),
        (status = 201, description = "Stored as a new version.", body = PushedBody),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts.", body = ErrorBody),
        (status = 422, description = "Invalid: located diagnostics, or a `name` that is not the URL's.", body = ErrorBody),
    ))]
pub async fn put(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    Query(param): Query<FileParam>,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<Response> {
    let up = read_upload(
        &state,
        &headers,
        param.file,
        request,
        &format!("{name}.yaml"),
    )
    .await?;
    let body = push(&state, &caller, &name, up).await?;
    let status = match body.created {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    Ok((status, Json(body)).into_response())
}

/// Pushes `up` as workflow `name` of the caller's team: compiled (located
/// diagnostics when invalid), its name checked, stored as a new version
/// unless the current one has this content, its schedules synced. The API
/// and the UI's editor both push through here.
pub(crate) async fn push(
    state: &AppState,
    caller: &Caller,
    name: &str,
    up: upload::Upload,
) -> ApiResult<PushedBody> {
    let name = name.to_string();
    let hash = up.content_hash();
    let wf = compile(
        state,
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
    crate::provider_rules::check(
        &state.config().runner.upstream_hosts,
        &state.config().runner.mcp_servers,
        &up.file_name,
        &up.source,
        &wf,
    )
    .map_err(ApiError::InvalidWorkflow)?;
    // Credentials name the team's secrets: each must be set.
    crate::secrets::check_push(state, caller.team_id(), &up.file_name, &up.source, &wf).await?;
    let pushed = state
        .db()
        .workflows()
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
    let specs = dragnet_runner::scheduler::specs(caller.team_id(), &wf);
    state
        .db()
        .schedules()
        .sync_schedules(caller.team_id(), &name, &specs, state.clock().now())
        .await?;
    Ok(PushedBody {
        name,
        version: pushed.version,
        created: pushed.created,
        content_hash: hash,
        steps: wf.steps.len(),
        schedules: specs.into_iter().map(|s| s.schedule_id).collect(),
    })
}

/// `GET /v1/workflows`.
#[utoipa::path(get, path = "/v1/workflows", tag = "workflows", security(("bearer" = [])),
    responses((status = 200, body = WorkflowList), (status = 401, body = ErrorBody)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let workflows = state
        .db()
        .workflows()
        .list_workflows(caller.team_id())
        .await?
        .into_iter()
        .map(|w| WorkflowItem {
            name: w.name,
            current_version: w.current_version,
            created_at: w.created_at,
            updated_at: w.updated_at,
        })
        .collect();
    Ok(Json(WorkflowList { workflows }).into_response())
}

/// `GET /v1/workflows/{name}`: the current version's text and every
/// version.
#[utoipa::path(get, path = "/v1/workflows/{name}", tag = "workflows", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses(
        (status = 200, body = WorkflowDetail),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    let name = storable_name(name, "workflow")?;
    let db = state.db();
    let (summary, versions) = db
        .workflows()
        .get_workflow(caller.team_id(), &name)
        .await?
        .ok_or_else(|| ApiError::not_found("workflow", &name))?;
    let current = db
        .workflows()
        .workflow_version(caller.team_id(), &name, summary.current_version)
        .await?
        .ok_or_else(|| ApiError::not_found("workflow", &name))?;
    Ok(Json(WorkflowDetail {
        schedules: crate::schedules::describe(&state, caller.team_id(), Some(&name)).await?,
        name: summary.name,
        current_version: summary.current_version,
        created_at: summary.created_at,
        updated_at: summary.updated_at,
        file_name: current.info.file_name,
        source: current.source,
        documents: current.documents.into_keys().collect(),
        versions: versions
            .into_iter()
            .map(|v| VersionBody {
                version: v.version,
                content_hash: v.content_hash,
                file_name: v.file_name,
                created_at: v.created_at,
            })
            .collect(),
    })
    .into_response())
}

/// `DELETE /v1/workflows/{name}`: 204; its runs and versions are kept.
#[utoipa::path(delete, path = "/v1/workflows/{name}", tag = "workflows", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses(
        (status = 204, description = "Deleted; its schedules stop."),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    let name = storable_name(name, "workflow")?;
    let now = state.clock().now();
    match state
        .db()
        .workflows()
        .delete_workflow(caller.team_id(), &name, now)
        .await?
    {
        true => {
            state
                .db()
                .schedules()
                .stop_schedules(caller.team_id(), &name, now)
                .await?;
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        false => Err(ApiError::not_found("workflow", name)),
    }
}
