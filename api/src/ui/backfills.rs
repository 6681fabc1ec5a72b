//! Backfills in the UI (issue 25 §2): a workflow with cron triggers gets a
//! Backfill form on its page (a window, how many at a time, newest first,
//! rerun; "List ticks" for a dry run), `/ui/backfills` lists the team's
//! backfills and `/ui/backfills/{id}` shows one with every tick and its
//! run, and a Cancel button while it runs — through the same functions as
//! `/v1/workflows/{name}/backfills` and `/v1/backfills`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::{DateTime, NaiveDateTime, Utc};
use dragnet_engine::workflow::model::Workflow;
use dragnet_runner::backfill::{self, BackfillRequest};
use maud::{html, Markup};

use super::html::{frame, status_badge, url_part};
use super::{field, forbidden, form, html_response, see_other, UiCaller};
use crate::backfills::{cancel_backfill, described, owned};
use crate::bodies::BackfillBody;
use crate::error::ApiError;
use crate::state::AppState;

fn time(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// The Backfill form of a workflow's page (only for one with triggers).
pub fn form_of(wf: &Workflow, csrf: &str) -> Markup {
    if wf.triggers.is_empty() {
        return html! {};
    }
    html! {
        h2 { "Backfill" }
        p { "Run every tick of its schedules between two times (UTC), a few at a time; ticks that already have a complete run are skipped unless you rerun them." }
        form method="post" action={ "/ui/workflows/" (url_part(&wf.name)) "/backfill" } {
            input type="hidden" name="csrf" value=(csrf);
            label for="bf-from" { "From" } " "
            input #bf-from type="datetime-local" name="from" required; " "
            label for="bf-to" { "to" } " "
            input #bf-to type="datetime-local" name="to" required; " "
            label for="bf-concurrency" { "at a time" } " "
            input #bf-concurrency type="number" name="concurrency" min="1" max="16" value="1"; " "
            label { input type="checkbox" name="newest_first" value="true"; " newest first" } " "
            label { input type="checkbox" name="rerun" value="true"; " rerun complete ticks" } " "
            button type="submit" name="dry_run" value="true" { "List ticks" } " "
            button type="submit" { "Backfill" }
        }
    }
}

/// A form time (`datetime-local`, read as UTC) or RFC 3339.
fn form_time(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(|t| t.and_utc())
}

/// `POST /ui/workflows/{name}/backfill`: a dry run's ticks, or a new
/// backfill's page.
pub async fn create(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(name): Path<String>,
    body: String,
) -> Response {
    let form = form(&body);
    if !caller.checks(&form) {
        return forbidden();
    }
    let time_of = |key: &'static str| {
        let text = field(&form, key).unwrap_or_default();
        form_time(text).ok_or_else(|| {
            ApiError::bad_request(key, format!("`{text}` is not a time; pick one in the form"))
        })
    };
    let request = match (time_of("from"), time_of("to")) {
        (Ok(from), Ok(to)) => BackfillRequest {
            from,
            to,
            newest_first: field(&form, "newest_first") == Some("true"),
            concurrency: field(&form, "concurrency")
                .and_then(|n| n.parse().ok())
                .unwrap_or(1),
            rerun: field(&form, "rerun") == Some("true"),
        },
        (Err(e), _) | (_, Err(e)) => return refused(&caller, &name, &e),
    };
    let team = caller.caller.team_id().to_string();
    if field(&form, "dry_run") == Some("true") {
        return match backfill::dry_run(state.launcher(), &team, &name, &request).await {
            Ok(ticks) => {
                let body = html! {
                    h1 { "Backfill of " code { (name) } ": " (ticks.len()) " ticks" }
                    p { "A dry run: nothing was started. "
                        a href={ "/ui/workflows/" (url_part(&name)) } { "Back to the workflow" } }
                    table.fit {
                        thead { tr { th { "Tick (UTC)" } th { "In its zone" } th { "Would" } } }
                        tbody {
                            @for t in &ticks {
                                tr {
                                    td.at { (time(&t.scheduled_for)) }
                                    td.at { (t.local) }
                                    td.note {
                                        @match (&t.complete_run, request.rerun) {
                                            (Some(run), false) => { "skip: " a href={ "/ui/runs/" (url_part(run)) } { (run) } " is complete" }
                                            _ => "run",
                                        }
                                    }
                                }
                            }
                        }
                    }
                };
                html_response(
                    StatusCode::OK,
                    frame("Backfill ticks", Some(&caller.signed()), body),
                )
            }
            Err(e) => refused(&caller, &name, &ApiError::from(e)),
        };
    }
    let by = caller.caller.started_by();
    let now = state.clock().now();
    match backfill::create(state.launcher(), &team, &name, &request, Some(&by), now).await {
        Ok(row) => see_other(&format!("/ui/backfills/{}", url_part(&row.backfill_id))),
        Err(e) => refused(&caller, &name, &ApiError::from(e)),
    }
}

/// `GET /ui/backfills`.
pub async fn list_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    let team = caller.caller.team_id().to_string();
    let rows = state
        .db()
        .backfills()
        .team_backfills(&team, 100)
        .await
        .unwrap_or_default();
    let mut all = Vec::new();
    for row in rows {
        if let Ok(b) = described(&state, row, false).await {
            all.push(b);
        }
    }
    let body = html! {
        h1 { "Backfills" }
        @if all.is_empty() {
            p { "No backfills: start one from a workflow with triggers." }
        }
        table.fit {
            thead { tr { th { "Backfill" } th { "Workflow" } th { "Window" } th { "Status" } th { "Ticks" } } }
            tbody {
                @for b in &all {
                    tr {
                        td.id { a href={ "/ui/backfills/" (url_part(&b.backfill_id)) } { (b.backfill_id) } }
                        td { (b.workflow) }
                        td.at { (time(&b.from)) " – " (time(&b.to)) }
                        td.st { (status_badge(&b.status)) }
                        td.note { (counts(b)) }
                    }
                }
            }
        }
    };
    html_response(
        StatusCode::OK,
        frame("Backfills", Some(&caller.signed()), body),
    )
}

fn counts(b: &BackfillBody) -> String {
    let c = &b.counts;
    let parts = [
        (c.running, "running"),
        (c.succeeded, "succeeded"),
        (c.partial, "partial"),
        (c.failed, "failed"),
        (c.skipped, "skipped"),
        (c.cancelled, "cancelled"),
        (c.pending, "pending"),
    ];
    let said: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    format!("{} ticks: {}", c.ticks, said.join(", "))
}

/// `GET /ui/backfills/{id}`.
pub async fn page(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(backfill_id): Path<String>,
) -> Response {
    let found = match owned(&state, &caller.caller, &backfill_id).await {
        Ok(row) => described(&state, row, true).await,
        Err(e) => Err(e),
    };
    let b = match found {
        Ok(b) => b,
        Err(e) => return refused(&caller, "", &e),
    };
    let body = html! {
        h1 { "Backfill " code { (b.backfill_id) } }
        p {
            "of " a href={ "/ui/workflows/" (url_part(&b.workflow)) } { (b.workflow) }
            ", " (time(&b.from)) " – " (time(&b.to)) ", " (b.order.replace('_', " "))
            ", " (b.concurrency) " at a time" @if b.rerun { ", rerunning complete ticks" }
        }
        p { (status_badge(&b.status)) " " (counts(&b)) }
        @if b.status == "running" {
            form method="post" action={ "/ui/backfills/" (url_part(&b.backfill_id)) "/cancel" } {
                input type="hidden" name="csrf" value=(caller.csrf);
                button type="submit" { "Cancel the backfill" }
                " (no tick starts any more; its runs going are cancelled)"
            }
        }
        table.fit {
            thead { tr { th { "Tick" } th { "State" } th { "Run" } } }
            tbody {
                @for t in b.ticks.iter().flatten() {
                    tr {
                        td.at { (time(&t.scheduled_for)) }
                        td.st { (status_badge(t.run_status.as_deref().unwrap_or(&t.state))) }
                        td.note {
                            @if let Some(run) = &t.run_id {
                                a href={ "/ui/runs/" (url_part(run)) } { (run) }
                            }
                            @if let Some(reason) = &t.reason { (reason) }
                        }
                    }
                }
            }
        }
    };
    html_response(
        StatusCode::OK,
        frame(
            &format!("Backfill {backfill_id}"),
            Some(&caller.signed()),
            body,
        ),
    )
}

/// `POST /ui/backfills/{id}/cancel`.
pub async fn cancel(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(backfill_id): Path<String>,
    body: String,
) -> Response {
    if !caller.checks(&form(&body)) {
        return forbidden();
    }
    match cancel_backfill(&state, &caller.caller, &backfill_id).await {
        Ok(_) => see_other(&format!("/ui/backfills/{}", url_part(&backfill_id))),
        Err(e) => refused(&caller, "", &e),
    }
}

/// What the API said, with the way back (to the workflow, when one is
/// named, else to the backfills).
fn refused(caller: &UiCaller, workflow: &str, error: &ApiError) -> Response {
    let back = match workflow.is_empty() {
        true => html! { a href="/ui/backfills" { "Back to the backfills" } },
        false => {
            html! { a href={ "/ui/workflows/" (url_part(workflow)) } { "Back to the workflow" } }
        }
    };
    super::refused(caller, error, back)
}
