//! Team secrets (issue 21): on a server, a workflow's credentials
//! (`credentials: {env: NAME}`) are the team's secrets, never the process
//! environment. A team sets, lists (names and update times only) and
//! deletes them here (`/v1/secrets`), through `dragnet secrets` and the
//! UI; they are kept sealed under the operator's `DRAGNET_SECRETS_KEY`
//! with the team and name bound in. A push naming a secret the team has
//! not set is refused with the `env:` value located; a run opens exactly
//! the secrets its workflow names ([`dragnet_runner::secrets::for_run`]).

use std::collections::BTreeSet;
use std::path::Path as FsPath;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use dragnet_core::secret::Secret;
use dragnet_engine::workflow::model::Workflow;
use dragnet_engine::workflow::Diagnostics;
use dragnet_http::{SealError, Sealer};
use dragnet_located::cursor::Cursor;
use dragnet_located::load::{load, Kind};
use dragnet_located::yaml::Pos;
use dragnet_store::{seal_secret, Db};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::bodies::ErrorBody;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// The longest secret name.
pub const MAX_NAME_LEN: usize = 128;
/// The largest secret value, in bytes.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
pub use dragnet_runner::secrets::{named_secrets, NamedSecret, KEY_VAR};

/// Why a secret could not be set, read or deleted.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error(
        "this server keeps no team secrets: its operator sets {KEY_VAR} (a random value of at \
         least 32 bytes, e.g. `openssl rand -base64 48`) in the environment of `dragnet serve`, \
         `dragnet worker` and `dragnet secrets`"
    )]
    NoKey,
    #[error(
        "`{0}` is not a secret name: use 1 to {MAX_NAME_LEN} ASCII letters, digits or `_`, not \
         starting with a digit"
    )]
    BadName(String),
    #[error("the value has {0} bytes; a secret holds at most {MAX_VALUE_BYTES}")]
    TooLarge(usize),
    #[error("the value is empty; delete the secret instead")]
    Empty,
    #[error("no team `{0}`")]
    UnknownTeam(String),
    #[error("sealing the secret failed: {0}")]
    Seal(#[from] SealError),
    #[error("the store failed")]
    Store(#[from] dragnet_store::Error),
}

impl From<SecretError> for ApiError {
    fn from(e: SecretError) -> Self {
        match e {
            SecretError::NoKey => ApiError::Conflict {
                kind: "secrets_unconfigured",
                message: e.to_string(),
            },
            SecretError::BadName(_) => ApiError::bad_request("secret name", e.to_string()),
            SecretError::TooLarge(_) | SecretError::Empty => ApiError::Rejected {
                kind: "invalid_secret",
                message: e.to_string(),
            },
            SecretError::UnknownTeam(team) => ApiError::not_found("team", team),
            SecretError::Seal(_) => ApiError::Conflict {
                kind: "seal_failed",
                message: e.to_string(),
            },
            SecretError::Store(e) => ApiError::Store(e),
        }
    }
}

/// Whether `name` may name a secret: `^[A-Za-z_][A-Za-z0-9_]{0,127}$`.
pub fn check_name(name: &str) -> Result<(), SecretError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    match ok {
        true => Ok(()),
        false => Err(SecretError::BadName(name.to_string())),
    }
}

/// Sets team `team_id`'s secret `name` to `value`, sealed.
pub async fn set_secret(
    db: &Db,
    sealer: Option<&Sealer>,
    team_id: &str,
    name: &str,
    value: &Secret,
    now: DateTime<Utc>,
) -> Result<(), SecretError> {
    let sealer = sealer.ok_or(SecretError::NoKey)?;
    check_name(name)?;
    let len = value.expose().len();
    if len > MAX_VALUE_BYTES {
        return Err(SecretError::TooLarge(len));
    }
    if len == 0 {
        return Err(SecretError::Empty);
    }
    let sealed = seal_secret(sealer, team_id, name, value)?;
    db.secrets().put_secret(team_id, name, &sealed, now).await?;
    Ok(())
}

/// The push check: every secret `wf` names must be one the team has set
/// (and the server must keep secrets at all); else a located diagnostic
/// at each `env:` value naming a missing one.
pub async fn check_push(
    state: &AppState,
    team_id: &str,
    file_name: &str,
    source: &str,
    wf: &Workflow,
) -> ApiResult<()> {
    let named = named_secrets(wf);
    if named.is_empty() {
        return Ok(());
    }
    let keeps = state.config().runner.secrets.is_some();
    let set: BTreeSet<String> = match keeps {
        true => state
            .db()
            .secrets()
            .list_secrets(team_id)
            .await?
            .into_iter()
            .map(|s| s.name)
            .collect(),
        false => BTreeSet::new(),
    };
    let missing: BTreeSet<&str> = named
        .iter()
        .map(|n| n.name.as_str())
        .filter(|n| !set.contains(*n))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let message = |name: &str| match keeps {
        true => format!(
            "the team has no secret `{name}`: on a server, credentials name the team's secrets \
             (never the server's environment); set it with `dragnet secrets set {name} --team \
             <team>`, PUT /v1/secrets/{name} or the UI's Secrets page"
        ),
        false => format!("`{name}` names a team secret, but {}", SecretError::NoKey),
    };
    Err(ApiError::InvalidWorkflow(locate_missing(
        file_name, source, &named, &missing, message,
    )))
}

/// A diagnostic at each credentials value naming a missing secret.
fn locate_missing(
    file_name: &str,
    source: &str,
    named: &[NamedSecret],
    missing: &BTreeSet<&str>,
    message: impl Fn(&str) -> String,
) -> Diagnostics {
    let kind = Kind {
        when_empty: "the workflow file is empty",
        when_failed: "the workflow names secrets the team has not set",
    };
    let found = load(FsPath::new(file_name), source, kind, |cx, root| {
        let root = Cursor::root(root);
        let mut located = BTreeSet::new();
        for NamedSecret { provider, at, name } in named {
            if !missing.contains(name.as_str()) {
                continue;
            }
            let mut place = root.key("providers").and_then(|p| p.key(provider));
            for key in at {
                place = place.and_then(|c| c.key(key));
            }
            let at = place;
            match at {
                Some(at) => cx.error(&at, message(name)),
                None if located.contains(name) => {}
                None => cx.at(Pos::START, "", message(name)),
            }
            located.insert(name.clone());
        }
        Some(())
    });
    match found {
        Err(diagnostics) => diagnostics,
        // Nothing was located (cannot happen: a name is missing), so say it
        // at the start.
        Ok(()) => {
            let mut cx = dragnet_located::context::Ctx::new(FsPath::new(file_name));
            for name in missing {
                cx.at(Pos::START, "", message(name));
            }
            cx.finish()
        }
    }
}

/// `PUT /v1/secrets/{name}`'s body.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetSecret {
    /// The value (at most 64 KiB); never shown again.
    pub value: String,
}

/// A secret as listed: its name and when it was last set, never its value.
#[derive(Serialize, ToSchema)]
pub struct SecretItem {
    pub name: String,
    pub updated_at: DateTime<Utc>,
}

/// The team's secrets.
#[derive(Serialize, ToSchema)]
pub struct SecretList {
    pub secrets: Vec<SecretItem>,
}

/// `PUT /v1/secrets/{name}`: 204; the value is sealed and never answered.
#[utoipa::path(put, path = "/v1/secrets/{name}", tag = "secrets", security(("bearer" = [])),
    params(("name" = String, Path, description = "`^[A-Za-z_][A-Za-z0-9_]{0,127}$`: what `credentials: {env: NAME}` names.")),
    request_body(content = SetSecret, content_type = "application/json"),
    responses(
        (status = 204, description = "Set (created or replaced)."),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 409, description = "This server keeps no secrets: `DRAGNET_SECRETS_KEY` is not set.", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts.", body = ErrorBody),
        (status = 422, description = "The value is empty or over 64 KiB.", body = ErrorBody),
    ))]
pub async fn put(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    check_name(&name)?;
    let body: SetSecret =
        serde_json::from_slice(&body).map_err(|e| ApiError::bad_request("request body", e))?;
    let value = Secret::new(body.value);
    set_secret(
        state.db(),
        state.config().runner.secrets.as_deref(),
        caller.team_id(),
        &name,
        &value,
        state.clock().now(),
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /v1/secrets`: names and update times, never values.
#[utoipa::path(get, path = "/v1/secrets", tag = "secrets", security(("bearer" = [])),
    responses((status = 200, body = SecretList), (status = 401, body = ErrorBody)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let secrets = state
        .db()
        .secrets()
        .list_secrets(caller.team_id())
        .await?
        .into_iter()
        .map(|s| SecretItem {
            name: s.name,
            updated_at: s.updated_at,
        })
        .collect();
    Ok(Json(SecretList { secrets }).into_response())
}

/// `DELETE /v1/secrets/{name}`: 204, or 404 when the team has no such
/// secret.
#[utoipa::path(delete, path = "/v1/secrets/{name}", tag = "secrets", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses(
        (status = 204, description = "Deleted; runs naming it fail their steps until it is set again."),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    check_name(&name)?;
    match state
        .db()
        .secrets()
        .delete_secret(caller.team_id(), &name)
        .await?
    {
        true => Ok(StatusCode::NO_CONTENT.into_response()),
        false => Err(ApiError::not_found("secret", name)),
    }
}

/// Team `team`'s id, by name (the operator's `dragnet secrets`).
pub async fn team_id_of(db: &Db, team: &str) -> Result<String, SecretError> {
    db.teams()
        .team_by_name(team)
        .await?
        .map(|t| t.team_id)
        .ok_or_else(|| SecretError::UnknownTeam(team.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_checked() {
        for ok in ["A", "_", "DRAGNET_METRICS_TOKEN", "a1_b2", &"x".repeat(128)] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A B", "É", "a.b", "../x", &"x".repeat(129)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
