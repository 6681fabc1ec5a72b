//! The Schedules page (`/ui/schedules`): each schedule of the team with its
//! next ticks, its latest ticks and their outcome, its pause, and a form to
//! pause it with a reason or resume it — through the same functions as
//! `POST /v1/schedules/{id}/pause` and `/resume`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{html, Markup};

use super::html::{frame, status_badge, url_part};
use super::{field, forbidden, form, html_response, see_other, UiCaller};
use crate::error::ApiError;
use crate::schedules::{pause_schedule, resume_schedule};
use crate::state::AppState;

/// `GET /ui/schedules`.
pub async fn schedules_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    let team = caller.caller.team_id().to_string();
    let schedules = crate::schedules::describe(&state, &team, None)
        .await
        .unwrap_or_default();
    let time = |t: &chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    let body = html! {
        h1 { "Schedules" }
        @if schedules.is_empty() {
            p { "No schedules: a workflow's " code { "triggers" } " make them." }
        }
        @for s in &schedules {
            section {
                h2 {
                    a href={ "/ui/workflows/" (url_part(&s.workflow)) } { (s.workflow) } " "
                    code { (s.cron) } " " (s.timezone)
                    @if !s.active { " (stopped)" }
                    @if s.paused.is_some() { " (paused)" }
                }
                @if let Some(p) = &s.paused {
                    p { (status_badge("paused")) " since " (time(&p.at)) " by " code { (p.by) } ": " (p.reason) }
                }
                @if s.active {
                    (controls(&caller.csrf, &s.schedule_id, s.paused.is_some(), &s.catch_up))
                }
                p {
                    "catch up " (s.catch_up) ", overlap " (s.overlap) "; "
                    @if s.paused.is_some() {
                        "no next ticks while paused."
                    } @else if s.active {
                        "late by " (s.lateness_ms) " ms. Next: "
                        (s.next_ticks.iter().map(time).collect::<Vec<_>>().join(", "))
                    } @else {
                        "no next ticks: its trigger is no longer in the workflow."
                    }
                }
                table.fit {
                    thead { tr { th { "Tick" } th { "Outcome" } th.opt { "Run" } th.num { "Late" } } }
                    tbody {
                        @if s.last_ticks.is_empty() {
                            tr { td.note colspan="4" { "No tick has come yet." } }
                        }
                        @for t in &s.last_ticks {
                            tr {
                                td.at { (time(&t.scheduled_for)) }
                                td.note { (status_badge(&t.status)) @if let Some(r) = &t.reason { " " (r) } }
                                td.id.opt {
                                    @if let Some(r) = &t.run_id {
                                        a href={ "/ui/runs/" (url_part(r)) } { (r) }
                                    }
                                }
                                td.num { (t.lateness_ms) " ms" }
                            }
                        }
                    }
                }
            }
        }
    };
    html_response(
        StatusCode::OK,
        frame("Schedules", Some(&caller.signed()), body),
    )
}

/// Pause (with a reason) or resume, for an active schedule.
fn controls(csrf: &str, schedule_id: &str, paused: bool, catch_up: &str) -> Markup {
    let action = |what: &str| format!("/ui/schedules/{}/{what}", url_part(schedule_id));
    html! {
        @if paused {
            form method="post" action=(action("resume")) {
                input type="hidden" name="csrf" value=(csrf);
                button type="submit" { "Resume" }
                " (then the ticks that fell during the pause follow catch_up: " (catch_up) ")"
            }
        } @else {
            form method="post" action=(action("pause")) {
                input type="hidden" name="csrf" value=(csrf);
                label { "Reason " input type="text" name="reason" required maxlength="500"; }
                " "
                button type="submit" { "Pause" }
            }
        }
    }
}

/// `POST /ui/schedules/{id}/pause`.
pub async fn pause(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(schedule_id): Path<String>,
    body: String,
) -> Response {
    let form = form(&body);
    if !caller.checks(&form) {
        return forbidden();
    }
    let reason = field(&form, "reason").unwrap_or_default();
    match pause_schedule(&state, &caller.caller, &schedule_id, reason).await {
        Ok(_) => see_other("/ui/schedules"),
        Err(error) => refused(&caller, &error),
    }
}

/// `POST /ui/schedules/{id}/resume`.
pub async fn resume(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(schedule_id): Path<String>,
    body: String,
) -> Response {
    if !caller.checks(&form(&body)) {
        return forbidden();
    }
    match resume_schedule(&state, &caller.caller, &schedule_id).await {
        Ok(_) => see_other("/ui/schedules"),
        Err(error) => refused(&caller, &error),
    }
}

/// What the API said, with the way back to the schedules.
fn refused(caller: &UiCaller, error: &ApiError) -> Response {
    let back = html! { a href="/ui/schedules" { "Back to the schedules" } };
    super::refused(caller, error, back)
}
