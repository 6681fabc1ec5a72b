//! The API's side of a team's runs: the run request's body, the caller
//! as the team asking, and the runner's errors as answers. Submitting,
//! launching and cancelling are [`dragnet_runner`]'s.

use std::collections::BTreeMap;
use std::sync::Arc;

use dragnet_engine::run::RunRecord;
use dragnet_engine::workflow::{model::Workflow, Diagnostics};
use dragnet_runner::{compile as runner_compile, requests, Asker};
use serde_json::{Map, Value};

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;

pub use dragnet_runner::Started;

/// What a run request asks for.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Input values by name, typed by the workflow's inputs.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub inputs: Map<String, Value>,
    /// Never read the cache.
    #[serde(default)]
    pub experiment: bool,
    /// Bypass cached walks and replace them.
    #[serde(default)]
    pub refresh: bool,
}

impl From<RunRequest> for dragnet_runner::RunRequest {
    fn from(r: RunRequest) -> Self {
        dragnet_runner::RunRequest {
            inputs: r.inputs,
            experiment: r.experiment,
            refresh: r.refresh,
        }
    }
}

/// Compiles workflow text as the server reads it: `openapi:` paths from
/// `documents`, else under the workflows_dir, nothing elsewhere.
pub async fn compile(
    state: &AppState,
    file_name: &str,
    source: String,
    documents: BTreeMap<String, String>,
) -> ApiResult<Result<Workflow, Diagnostics>> {
    let dir = state.config().runner.workflows_dir.clone();
    Ok(runner_compile::compile(dir, file_name, source, documents).await?)
}

/// The team's workflow `name` at its current version, compiled, and that
/// version.
pub async fn current(
    state: &AppState,
    team_id: &str,
    name: &str,
) -> ApiResult<(Arc<Workflow>, i64)> {
    Ok(runner_compile::current(state.launcher(), team_id, name).await?)
}

/// The team a caller asks as.
fn asker<'a>(caller: &'a Caller, started_by: &'a str) -> Asker<'a> {
    Asker {
        team_id: caller.team_id(),
        started_by,
    }
}

/// Starts a run of the team's workflow `name` (its current version).
pub async fn start(
    state: &AppState,
    caller: &Caller,
    name: &str,
    request: RunRequest,
    idempotency: Option<(&str, &str)>,
) -> ApiResult<Started> {
    let by = caller.started_by();
    let asked = asker(caller, &by);
    let started = requests::start(state.launcher(), asked, name, request.into(), idempotency);
    Ok(started.await?)
}

/// Starts a new run of the run `original` ran (from step `from`).
pub async fn rerun(
    state: &AppState,
    caller: &Caller,
    original: &RunRecord,
    version: i64,
    from: Option<&str>,
) -> ApiResult<Started> {
    let by = caller.started_by();
    let asked = asker(caller, &by);
    Ok(requests::rerun(state.launcher(), asked, original, version, from).await?)
}

/// Cancels run `run_id` of the caller's team; false when it is not running.
pub async fn cancel(state: &AppState, caller: &Caller, run_id: &str) -> ApiResult<bool> {
    Ok(requests::cancel(state.launcher(), caller.team_id(), run_id).await?)
}
