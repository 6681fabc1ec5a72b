//! The UI's Secrets page: the signed-in team's secrets — what its
//! workflows' `credentials: {env: NAME}` name on this server — by name and
//! last update, a form to set one and a button to delete each. Values are
//! written, never shown: no page renders one, and the form's field is a
//! password field left empty after a set. Every form carries the session's
//! CSRF value; sets and deletes go through the same calls as `/v1/secrets`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use dragnet_core::secret::Secret;
use maud::html;

use super::html::{frame, url_part};
use super::{field, forbidden, form, html_response, see_other, UiCaller};
use crate::secrets::{check_name, set_secret, SecretError};
use crate::state::AppState;

/// `GET /ui/secrets`.
pub async fn secrets_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    render(&state, &caller, StatusCode::OK, None).await
}

/// The page, with `problem` said above the form.
async fn render(
    state: &AppState,
    caller: &UiCaller,
    status: StatusCode,
    problem: Option<String>,
) -> Response {
    let listed = state
        .db()
        .secrets()
        .list_secrets(caller.caller.team_id())
        .await
        .unwrap_or_default();
    let keeps = state.config().runner.secrets.is_some();
    let time = |t: &chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    let body = html! {
        h1 { "Secrets" }
        p {
            "What the team's workflows name as credentials (" code { "credentials: {env: NAME}" }
            ") on this server: a workflow reads only its team's secrets, never the server's environment. "
            "Values are sealed and never shown again."
        }
        @if let Some(problem) = &problem {
            p.error role="alert" { (problem) }
        }
        @if listed.is_empty() {
            p { "No secrets yet." }
        } @else {
            table.fit {
                thead { tr { th { "Name" } th { "Updated" } th { } } }
                tbody {
                    @for s in &listed {
                        tr {
                            td.id { (s.name) }
                            td.at { (time(&s.updated_at)) }
                            td {
                                form method="post" action={ "/ui/secrets/" (url_part(&s.name)) "/delete" } {
                                    input type="hidden" name="csrf" value=(caller.csrf);
                                    button type="submit" { "Delete" }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Set a secret" }
        @if keeps {
            form method="post" action="/ui/secrets" {
                input type="hidden" name="csrf" value=(caller.csrf);
                label { "Name " input type="text" name="name" required pattern="[A-Za-z_][A-Za-z0-9_]{0,127}" autocomplete="off"; }
                " "
                label { "Value " input type="password" name="value" required autocomplete="off"; }
                " "
                button type="submit" { "Set" }
            }
        } @else {
            p.error { (SecretError::NoKey) }
        }
    };
    html_response(status, frame("Secrets", Some(&caller.signed()), body))
}

/// `POST /ui/secrets`: sets the form's secret for the signed-in team.
pub async fn set(State(state): State<AppState>, caller: UiCaller, body: String) -> Response {
    let fields = form(&body);
    if !caller.checks(&fields) {
        return forbidden();
    }
    let name = field(&fields, "name").unwrap_or_default();
    let value = Secret::new(field(&fields, "value").unwrap_or_default());
    match set_secret(
        state.db(),
        state.config().runner.secrets.as_deref(),
        caller.caller.team_id(),
        name,
        &value,
        state.clock().now(),
    )
    .await
    {
        Ok(()) => see_other("/ui/secrets"),
        Err(error) => {
            if let SecretError::Store(e) = &error {
                tracing::error!(error = %e, "the UI could not set a secret");
            }
            render(
                &state,
                &caller,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(error.to_string()),
            )
            .await
        }
    }
}

/// `POST /ui/secrets/{name}/delete`.
pub async fn delete(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(name): Path<String>,
    body: String,
) -> Response {
    if !caller.checks(&form(&body)) {
        return forbidden();
    }
    if let Err(error) = check_name(&name) {
        return render(
            &state,
            &caller,
            StatusCode::BAD_REQUEST,
            Some(error.to_string()),
        )
        .await;
    }
    match state
        .db()
        .secrets()
        .delete_secret(caller.caller.team_id(), &name)
        .await
    {
        Ok(_) => see_other("/ui/secrets"),
        Err(error) => {
            tracing::error!(%error, "the UI could not delete a secret");
            let problem = "the store failed: the secret was not deleted".to_string();
            render(
                &state,
                &caller,
                StatusCode::SERVICE_UNAVAILABLE,
                Some(problem),
            )
            .await
        }
    }
}
