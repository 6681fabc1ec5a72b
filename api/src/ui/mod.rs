//! The web UI, served by `dragnet serve` beside the API (which stays under
//! `/v1`): sign-in with a team token, the team's runs, a run's page — its DAG coloured by step status with each tool step's
//! verdict badge, its steps' verdicts, skip reasons and errors, and a
//! cancel button and a progress bar per walking step (fed by the run's
//! event stream) while it runs. Server-rendered HTML; the only script is a
//! few inline lines that move those bars, so the Rust build needs nothing
//! else.
//!
//! The token is kept in an HTTP-only, `SameSite=Strict` cookie and looked
//! up as the API looks up a bearer token, so a page shows exactly what the
//! API would answer that team; another team's run reads as not found.
//! Every POST carries a CSRF value bound to the session (a hash of its
//! token) besides the cookie.
//!
//! Here: the routes, the session, forms and the refused-form page. The
//! pages are each in their module: `runs` (the runs list and a run's
//! page), [`pages`] (workflows, cache), [`editor`], [`schedules`],
//! [`backfills`], [`secrets`].

pub mod backfills;
pub mod dag;
pub mod editor;
pub mod html;
pub mod output;
pub mod pages;
mod runs;
pub mod schedules;
pub mod secrets;
mod trigger;

use axum::extract::{FromRequestParts, State};
use axum::http::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use sha2::{Digest, Sha256};

use maud::{html, Markup};

use self::html::{frame, Signed};
use crate::auth::{token_hash, Caller};
use crate::error::ApiError;
use crate::state::AppState;

const COOKIE_NAME: &str = "dragnet_session";

/// The UI's routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { see_other("/ui/runs") }))
        .route("/ui/sign-in", get(sign_in_form).post(sign_in))
        .route("/ui/sign-out", post(sign_out))
        .route("/ui/runs", get(runs::runs_page))
        .route("/ui/runs/{id}", get(runs::run_page))
        .route("/ui/runs/{id}/cancel", post(runs::cancel_run))
        .route("/ui/runs/{id}/events", get(runs::run_events))
        .route("/ui/runs/{id}/rerun", post(runs::rerun_run))
        .route("/ui/workflows", get(pages::workflows_page))
        .route(
            "/ui/workflows/new",
            get(editor::edit_page).post(editor::push),
        )
        .route(
            "/ui/workflows/{name}/edit",
            get(editor::edit_page).post(editor::push),
        )
        .route("/ui/validate", post(editor::validate))
        .route("/ui/workflows/{name}/diff", get(pages::diff_page))
        .route("/ui/workflows/{name}", get(pages::workflow_page))
        .route("/ui/workflows/{name}/run", post(pages::run_workflow))
        .route("/ui/schedules", get(schedules::schedules_page))
        .route("/ui/workflows/{name}/backfill", post(backfills::create))
        .route("/ui/backfills", get(backfills::list_page))
        .route("/ui/backfills/{id}", get(backfills::page))
        .route("/ui/backfills/{id}/cancel", post(backfills::cancel))
        .route("/ui/schedules/{id}/pause", post(schedules::pause))
        .route("/ui/schedules/{id}/resume", post(schedules::resume))
        .route("/ui/cache", get(pages::cache_page))
        .route("/ui/cache/purge", post(pages::purge_cache))
        .route("/ui/secrets", get(secrets::secrets_page).post(secrets::set))
        .route("/ui/secrets/{name}/delete", post(secrets::delete))
}

/// The signed-in team, from the session cookie; a request without a valid
/// one is sent to the sign-in page.
pub struct UiCaller {
    caller: Caller,
    csrf: String,
}

impl FromRequestParts<AppState> for UiCaller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let Some(token) = session_token(&parts.headers) else {
            return Err(see_other("/ui/sign-in"));
        };
        match state
            .db()
            .teams()
            .caller_of_token(&token_hash(&token))
            .await
        {
            Ok(Some((team, token_id))) => Ok(UiCaller {
                caller: Caller(team, token_id),
                csrf: csrf_of(&token),
            }),
            Ok(None) => Err(see_other("/ui/sign-in")),
            Err(error) => {
                tracing::error!(%error, "the UI could not look a session up");
                Err(html_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    frame(
                        "Unavailable",
                        None,
                        html! { p.error { "The store does not answer." } },
                    ),
                ))
            }
        }
    }
}

impl UiCaller {
    fn signed(&self) -> Signed<'_> {
        Signed {
            team: &self.caller.0.name,
            csrf: &self.csrf,
        }
    }

    /// Whether a form's CSRF value is this session's.
    fn checks(&self, form: &[(String, String)]) -> bool {
        field(form, "csrf").is_some_and(|v| v == self.csrf)
    }
}

fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE_NAME)
        .map(|(_, v)| v.to_string())
        .filter(|v| !v.is_empty())
}

/// The CSRF value of a session: a hash of its token (never the token).
fn csrf_of(token: &str) -> String {
    let digest = Sha256::digest(format!("dragnet-ui-csrf\0{token}").as_bytes());
    dragnet_core::hex::lower(&digest[..16])
}

fn see_other(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(LOCATION, to.to_string())]).into_response()
}

fn html_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [(CONTENT_TYPE, "text/html; charset=utf-8".to_string())],
        body,
    )
        .into_response()
}

/// `application/x-www-form-urlencoded` pairs, decoded.
fn form(body: &str) -> Vec<(String, String)> {
    body.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push((hi * 16 + lo) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn sign_in_form() -> Response {
    html_response(StatusCode::OK, frame("Sign in", None, sign_in_body(None)))
}

fn sign_in_body(problem: Option<&str>) -> Markup {
    html! {
        h1 { "Sign in" }
        @if let Some(p) = problem {
            p.error role="alert" { (p) }
        }
        form method="post" action="/ui/sign-in" {
            label for="token" { "Team token" } " "
            input #token name="token" type="password" autocomplete="off" required autofocus; " "
            button type="submit" { "Sign in" }
        }
        p { "A token is made with " code { "dragnet tokens create --team NAME" } "." }
    }
}

async fn sign_in(State(state): State<AppState>, body: String) -> Response {
    let form = form(&body);
    let token = field(&form, "token").map(str::trim).unwrap_or_default();
    let known = match token.is_empty() {
        true => None,
        false => state
            .db()
            .teams()
            .team_of_token(&token_hash(token))
            .await
            .ok()
            .flatten(),
    };
    if known.is_none() {
        return html_response(
            StatusCode::UNAUTHORIZED,
            frame(
                "Sign in",
                None,
                sign_in_body(Some("That token is not a live team token.")),
            ),
        );
    }
    let cookie = format!("{COOKIE_NAME}={token}; HttpOnly; SameSite=Strict; Path=/");
    (
        StatusCode::SEE_OTHER,
        [(LOCATION, "/ui/runs".to_string()), (SET_COOKIE, cookie)],
    )
        .into_response()
}

async fn sign_out(caller: UiCaller, body: String) -> Response {
    if !caller.checks(&form(&body)) {
        return forbidden();
    }
    let cookie = format!("{COOKIE_NAME}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    (
        StatusCode::SEE_OTHER,
        [(LOCATION, "/ui/sign-in".to_string()), (SET_COOKIE, cookie)],
    )
        .into_response()
}

/// What the API said when a form was refused, with `back`, a link the
/// way back (the schedules, the backfills, a workflow).
fn refused(caller: &UiCaller, error: &ApiError, back: Markup) -> Response {
    said(caller, (error.status(), "Not done"), error, back)
}

/// A page saying `error`, titled, with `back`.
fn said(
    caller: &UiCaller,
    (status, title): (StatusCode, &str),
    error: &ApiError,
    back: Markup,
) -> Response {
    html_response(
        status,
        frame(
            title,
            Some(&caller.signed()),
            html! {
                p.error role="alert" { (error.to_string()) }
                p { (back) }
            },
        ),
    )
}

fn forbidden() -> Response {
    html_response(
        StatusCode::FORBIDDEN,
        frame(
            "Refused",
            None,
            html! { p.error { "This form did not come from your session." } },
        ),
    )
}
