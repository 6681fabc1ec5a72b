//! The run pages of the UI: the team's runs (`/ui/runs`, filtered and
//! paged), a run's page (its DAG, verdicts, outputs; live progress from its
//! event stream while it runs), and its Cancel and Run again forms.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use dragnet_engine::run::RunRecord;
use dragnet_store::RunFilter;
use maud::{html, Markup, PreEscaped};

use super::html::{frame, status_badge, url_part};
use super::{
    dag, field, forbidden, form, html_response, output, said, see_other, trigger, UiCaller,
};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The runs the list shows.
const RUNS_SHOWN: u32 = 50;

/// The run's event stream for its page (the API's stream, behind the
/// session cookie): its progress bars move with it.
pub(super) async fn run_events(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(run_id): Path<String>,
) -> Response {
    if crate::runs::check_owner(&state, &caller.caller, &run_id)
        .await
        .is_err()
    {
        return not_found(&caller);
    }
    axum::response::sse::Sse::new(crate::events::stream(state, run_id, 0))
        .keep_alive(axum::response::sse::KeepAlive::default())
        .into_response()
}

/// The script of a running run's page: each walking step's bar follows
/// the stream's progress events (requests of the call's bound, rows,
/// time); the page reloads when the run ends.
const LIVE_SCRIPT: &str = "(()=>{const es=new EventSource(location.pathname+'/events');\
es.addEventListener('data-tool-loop-progress',e=>{const d=JSON.parse(e.data);\
const bar=document.getElementById('progress-'+d.step);if(!bar)return;bar.max=d.requestsMax;bar.value=d.requests;\
const t=document.getElementById('progress-text-'+d.step);if(t)t.textContent=d.requests+' of '+d.requestsMax+' requests · '+d.items+' rows · '+(d.elapsedMs/1000).toFixed(1)+' s';});\
es.addEventListener('step',e=>{const d=JSON.parse(e.data);\
const g=document.querySelector('g[data-step=\"'+CSS.escape(d.step)+'\"]');if(!g)return;\
g.setAttribute('class','step status-'+d.status);const w=g.querySelector('.what');if(w)w.textContent=d.status;});\
es.addEventListener('end',()=>{es.close();location.reload();});})();";

/// `GET /ui/runs` filters: a workflow, a status (`partial` for runs that
/// are not complete), and the page after a cursor.
#[derive(Debug, Default, serde::Deserialize)]
pub struct RunsQuery {
    workflow: Option<String>,
    status: Option<String>,
    /// How they were started (manual, api, schedule, rerun).
    trigger: Option<String>,
    /// Runs started on or after this day (`YYYY-MM-DD`, UTC).
    since: Option<String>,
    after: Option<String>,
    /// Runs a page (1 to 50).
    limit: Option<u32>,
}

pub(super) async fn runs_page(
    State(state): State<AppState>,
    caller: UiCaller,
    axum::extract::Query(query): axum::extract::Query<RunsQuery>,
) -> Response {
    let workflow = query.workflow.filter(|w| !w.is_empty());
    let status = query
        .status
        .as_deref()
        .filter(|s| !s.is_empty())
        .and_then(|s| {
            serde_json::from_value::<dragnet_engine::run::RunStatus>(serde_json::Value::String(
                s.into(),
            ))
            .ok()
        });
    let triggered = query
        .trigger
        .as_deref()
        .and_then(dragnet_engine::run::TriggerKind::parse);
    let before = query
        .after
        .as_deref()
        .and_then(|c| crate::runs::decode_cursor(c).ok());
    let since_day = query
        .since
        .as_deref()
        .and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok());
    let filter = RunFilter {
        team_id: Some(caller.caller.team_id().to_string()),
        workflow: workflow.clone(),
        status,
        trigger: triggered,
        before,
        since: since_day
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc()),
    };
    let shown = query.limit.unwrap_or(RUNS_SHOWN).clamp(1, RUNS_SHOWN);
    let mut runs = match state.db().runs().list_runs_where(&filter, shown + 1).await {
        Ok(r) => r,
        Err(error) => {
            tracing::error!(%error, "the UI could not list runs");
            Vec::new()
        }
    };
    let more = runs.len() > shown as usize;
    runs.truncate(shown as usize);
    let next = match (more, runs.last()) {
        (true, Some(last)) => {
            let cursor =
                crate::runs::encode_cursor(last.started_at.timestamp_millis(), &last.run_id);
            // Every value percent-encoded: a workflow named `a&b#c` stays one.
            let mut next = format!("/ui/runs?after={}&limit={shown}", url_part(&cursor));
            if let Some(w) = &workflow {
                next.push_str(&format!("&workflow={}", url_part(w)));
            }
            if let Some(s) = status {
                next.push_str(&format!("&status={}", url_part(s.as_str())));
            }
            if let Some(t) = triggered {
                next.push_str(&format!("&trigger={}", url_part(t.as_str())));
            }
            if let Some(d) = since_day {
                next.push_str(&format!("&since={}", url_part(&d.to_string())));
            }
            Some(next)
        }
        _ => None,
    };
    let chosen = status.map(|x| x.as_str());
    let body = html! {
        h1 { "Runs" }
        form.filters method="get" action="/ui/runs" {
            label for="workflow" { "Workflow" } " "
            input #workflow name="workflow" value=(workflow.as_deref().unwrap_or_default()); " "
            label for="status" { "Status" } " "
            select #status name="status" {
                option value="" { "any status" }
                @for s in RUN_STATUSES {
                    option value=(s) selected[chosen == Some(s)] { (s) }
                }
            } " "
            label for="trigger" { "Trigger" } " "
            select #trigger name="trigger" { (trigger::options(triggered)) } " "
            label for="since" { "Since" } " "
            input #since name="since" type="date" value=(since_day.map(|d| d.to_string()).unwrap_or_default()); " "
            button type="submit" { "Filter" }
        }
        @if runs.is_empty() {
            p { "No runs." }
        } @else {
            table.fit {
                thead { tr {
                    th { "Run" } th.opt2 { "Workflow" } th { "Status" } th.opt { "Trigger" }
                    th.opt { "Started" } th.num.opt { "Steps" }
                } }
                tbody {
                    @for r in &runs {
                        tr {
                            td.id { a href={ "/ui/runs/" (url_part(&r.run_id)) } { (r.run_id) } }
                            td.opt2 { (r.workflow) }
                            td.st { (status_badge(r.status.as_str())) }
                            td.st.opt { (trigger::cell(r.trigger)) }
                            td.at.opt { (r.started_at.format("%Y-%m-%d %H:%M:%S UTC").to_string()) }
                            td.num.opt { (r.steps) }
                        }
                    }
                }
            }
        }
        @if let Some(next) = &next {
            p { a href=(next) rel="next" { "Older runs" } }
        }
    };
    html_response(StatusCode::OK, frame("Runs", Some(&caller.signed()), body))
}

/// The statuses the runs list filters by.
const RUN_STATUSES: [&str; 7] = [
    "queued",
    "running",
    "succeeded",
    "partial",
    "failed",
    "cancelled",
    "interrupted",
];

pub(super) async fn run_page(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(run_id): Path<String>,
) -> Response {
    let (record, version) =
        match crate::runs::owned_run(&state, &caller.caller, &run_id, true).await {
            Ok(found) => found,
            Err(_) => return not_found(&caller),
        };
    let edges = match version {
        Some(v) => edges_of(&state, &caller.caller, &record, v).await,
        None => Vec::new(),
    };
    let nodes: Vec<dag::Node> = record
        .steps
        .iter()
        .map(|s| dag::Node {
            id: s.id.clone(),
            status: s.status.as_str().to_string(),
            badge: s.verdict.as_ref().map(verdict_badge),
        })
        .collect();
    let live = matches!(record.status.as_str(), "running" | "queued");
    let id = url_part(&record.run_id);
    let body = html! {
        h1 { "Run " code { (record.run_id) } }
        p {
            a href={ "/ui/workflows/" (url_part(&record.workflow)) } { (record.workflow) }
            " · " (status_badge(record.status.as_str()))
        }
        (trigger::line(record.trigger.as_ref()))
        @if live {
            form method="post" action={ "/ui/runs/" (id) "/cancel" } {
                input type="hidden" name="csrf" value=(caller.csrf);
                button type="submit" { "Cancel" }
            }
        }
        (dag::markup(&nodes, &edges))
        @if live {
            section aria-label="progress" {
                @for s in record.steps.iter().filter(|s| s.kind.as_str() == "tool" && !s.is_finished()) {
                    p {
                        label for={ "progress-" (s.id) } { (s.id) } " "
                        progress id={ "progress-" (s.id) } value="0" max="1" {} " "
                        span id={ "progress-text-" (s.id) } aria-live="polite" {}
                    }
                }
            }
        }
        table.fit {
            thead { tr {
                th { "Step" } th { "Status" } th { "Verdict" } th.num { "Rows" }
                th.num.opt { "Requests" } th.num.opt { "Time" }
            } }
            tbody {
                @for s in &record.steps {
                    tr {
                        td.id { (s.id) }
                        td.st { (status_badge(s.status.as_str())) }
                        td.note {
                            @match &s.verdict {
                                Some(v) => {
                                    span class={ "badge status-" (if v.complete { "complete" } else { "partial" }) } {
                                        (verdict_badge(v))
                                    }
                                    " " (v.note)
                                    @if let Some(inc) = &v.incremental {
                                        br;
                                        span.incremental { (inc.describe(v.complete)) }
                                    }
                                }
                                None => (s.reason.as_deref().unwrap_or_default()),
                            }
                        }
                        td.num { @if let Some(v) = &s.verdict { (v.item_count) } }
                        td.num.opt { @if let Some(v) = &s.verdict { (v.requests) } }
                        td.num.opt { (s.duration_ms) " ms" }
                    }
                }
            }
        }
        @if !live {
            (rerun_forms(&record, &caller.csrf))
        }
        @for s in record.steps.iter().filter(|s| s.kind.as_str() == "tool") {
            @if let Some(out) = &s.output {
                (output::markup(&s.id, out.get()))
            }
        }
        @if live {
            script { (PreEscaped(LIVE_SCRIPT)) }
        }
    };
    html_response(
        StatusCode::OK,
        frame(
            &format!("Run {}", record.run_id),
            Some(&caller.signed()),
            body,
        ),
    )
}

/// "Run again": the whole run, or from one of its steps (the succeeded
/// steps it does not lead to keep their outputs).
fn rerun_forms(record: &RunRecord, csrf: &str) -> Markup {
    html! {
        form method="post" action={ "/ui/runs/" (url_part(&record.run_id)) "/rerun" } {
            input type="hidden" name="csrf" value=(csrf);
            label for="from" { "Run again" } " "
            select #from name="from" {
                option value="" { "every step" }
                @for s in &record.steps {
                    option value=(s.id) { "from " (s.id) }
                }
            } " "
            button type="submit" { "Run again" }
        }
    }
}

/// `POST /ui/runs/{id}/rerun`: a new run of the same version and inputs,
/// from a step when one is chosen; its page next.
pub(super) async fn rerun_run(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(run_id): Path<String>,
    body: String,
) -> Response {
    let pairs = form(&body);
    if !caller.checks(&pairs) {
        return forbidden();
    }
    let Ok((record, Some(version))) =
        crate::runs::owned_run(&state, &caller.caller, &run_id, true).await
    else {
        return not_found(&caller);
    };
    let from = field(&pairs, "from").filter(|f| !f.is_empty());
    match crate::launch::rerun(&state, &caller.caller, &record, version, from).await {
        Ok(started) => see_other(&format!("/ui/runs/{}", url_part(&started.run_id))),
        Err(error) => not_started(&caller, &error, &format!("/ui/runs/{}", url_part(&run_id))),
    }
}

/// A run the API refused to start, saying why, with a way back.
pub(super) fn not_started(caller: &UiCaller, error: &ApiError, back: &str) -> Response {
    let back = html! { a href=(back) { "Back" } };
    said(
        caller,
        (StatusCode::UNPROCESSABLE_ENTITY, "Not started"),
        error,
        back,
    )
}

fn not_found(caller: &UiCaller) -> Response {
    html_response(
        StatusCode::NOT_FOUND,
        frame(
            "Not found",
            Some(&caller.signed()),
            html! { p.error { "No such run for your team." } },
        ),
    )
}

/// `complete`, or `partial: <what stopped it>`.
fn verdict_badge(v: &dragnet_engine::run::StepVerdict) -> String {
    match (v.complete, v.stopped_by) {
        (true, _) => "complete".to_string(),
        (false, Some(reason)) => format!("partial: {}", reason.as_str()),
        (false, None) => "partial".to_string(),
    }
}

/// The DAG's edges, from the run's workflow version as compiled.
async fn edges_of(
    state: &AppState,
    caller: &Caller,
    record: &RunRecord,
    version: i64,
) -> Vec<dag::DagEdge> {
    let Ok(Some(text)) = state
        .db()
        .workflows()
        .workflow_version(caller.team_id(), &record.workflow, version)
        .await
    else {
        return Vec::new();
    };
    let Ok(Ok(wf)) =
        crate::launch::compile(state, &text.info.file_name, text.source, text.documents).await
    else {
        return Vec::new();
    };
    plan_edges(&wf)
}

/// A workflow's DAG edges: needs, refs and branch gates.
pub(super) fn plan_edges(wf: &dragnet_engine::workflow::model::Workflow) -> Vec<dag::DagEdge> {
    let Ok(plan) = dragnet_engine::plan::Plan::new(wf) else {
        return Vec::new();
    };
    let mut edges = Vec::new();
    for to in 0..wf.steps.len() {
        for (from, edge) in plan.dependencies(to) {
            let gate = match edge {
                dragnet_engine::plan::Edge::Gate { then } => Some(then),
                _ => None,
            };
            edges.push(dag::DagEdge { from, to, gate });
        }
    }
    edges
}

pub(super) async fn cancel_run(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(run_id): Path<String>,
    body: String,
) -> Response {
    if !caller.checks(&form(&body)) {
        return forbidden();
    }
    if crate::runs::owned_run(&state, &caller.caller, &run_id, false)
        .await
        .is_err()
    {
        return not_found(&caller);
    }
    if let Err(error) = crate::launch::cancel(&state, &caller.caller, &run_id).await {
        tracing::warn!(%error, "the UI could not cancel a run");
    }
    // The id passed the owner check, which admits only plain ids.
    see_other(&format!("/ui/runs/{}", url_part(&run_id)))
}
