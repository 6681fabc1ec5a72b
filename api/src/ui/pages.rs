//! The UI's workflow and schedule pages: the team's workflows (current
//! version, last update, its schedules' next tick), one workflow (its
//! YAML, lightly highlighted; its versions; its DAG; a Run form generated
//! from its typed inputs), and every schedule with its next ticks, its
//! tick history (fired, skipped with the reason, missed) and how late it
//! is, and the team's cache entries with a purge. Everything is read as
//! the API reads it for the signed-in team.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use dragnet_engine::workflow::model::{InputType, Workflow};
use serde_json::{Map, Value};

use maud::{html, Markup};

use super::html::{frame, status_badge, url_part};
use super::{dag, field, forbidden, form, html_response, see_other, UiCaller};
use crate::launch::{self, RunRequest};
use crate::state::AppState;

/// `GET /ui/workflows`.
pub async fn workflows_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    let team = caller.caller.team_id().to_string();
    let listed = state
        .db()
        .workflows()
        .list_workflows(&team)
        .await
        .unwrap_or_default();
    let schedules = crate::schedules::describe(&state, &team, None)
        .await
        .unwrap_or_default();
    let mut rows = Vec::new();
    for w in &listed {
        let latest = dragnet_store::RunFilter {
            team_id: Some(team.clone()),
            workflow: Some(w.name.clone()),
            ..dragnet_store::RunFilter::default()
        };
        let last = state
            .db()
            .runs()
            .list_runs_where(&latest, 1)
            .await
            .ok()
            .and_then(|r| r.into_iter().next());
        let next = schedules
            .iter()
            .filter(|s| s.workflow == w.name && s.active)
            .filter_map(|s| s.next_ticks.first())
            .min()
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string());
        rows.push((w, last, next));
    }
    let body = html! {
        h1 { "Workflows" }
        p { a href="/ui/workflows/new" { "New workflow" } }
        @if listed.is_empty() {
            p { "No workflows yet: push one with " code { "dragnet workflows push FILE" } "." }
        } @else {
            table.fit {
                thead { tr {
                    th { "Workflow" } th.num { "Version" } th { "Last run" }
                    th.opt { "Next tick" } th.opt { "Updated" }
                } }
                tbody {
                    @for (w, last, next) in &rows {
                        tr {
                            td.id { a href={ "/ui/workflows/" (url_part(&w.name)) } { (w.name) } }
                            td.num { (w.current_version) }
                            td.st {
                                @match last {
                                    Some(r) => a href={ "/ui/runs/" (url_part(&r.run_id)) } { (status_badge(r.status.as_str())) },
                                    None => "—",
                                }
                            }
                            td.at.opt { (next.as_deref().unwrap_or("—")) }
                            td.at.opt { (w.updated_at.format("%Y-%m-%d %H:%M UTC").to_string()) }
                        }
                    }
                }
            }
        }
    };
    html_response(
        StatusCode::OK,
        frame("Workflows", Some(&caller.signed()), body),
    )
}

/// `GET /ui/workflows/{name}`.
pub async fn workflow_page(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(name): Path<String>,
) -> Response {
    let team = caller.caller.team_id().to_string();
    let db = state.db();
    let Ok(Some((summary, versions))) = db.workflows().get_workflow(&team, &name).await else {
        return missing(&caller);
    };
    let Ok(Some(current)) = db
        .workflows()
        .workflow_version(&team, &name, summary.current_version)
        .await
    else {
        return missing(&caller);
    };
    let compiled = launch::compile(
        &state,
        &current.info.file_name,
        current.source.clone(),
        current.documents.clone(),
    )
    .await
    .ok()
    .and_then(Result::ok);
    let n = &summary.name;
    let newest = versions.iter().map(|v| v.version).max().unwrap_or(1);
    let options = |pick: i64| -> Markup {
        html! {
            @for v in versions.iter().rev() {
                option value=(v.version) selected[v.version == pick] { (v.version) }
            }
        }
    };
    let body = html! {
        h1 { "Workflow " code { (n) } }
        p {
            "version " (summary.current_version) " · " (current.info.file_name) " · "
            a href={ "/ui/workflows/" (url_part(n)) "/edit" } { "Edit" } " · "
            a href={ "/ui/runs?workflow=" (url_part(n)) } { "Runs" }
        }
        @if let Some(wf) = &compiled {
            (dag::markup(&nodes_of(wf), &super::runs::plan_edges(wf)))
            (run_form(wf, &caller.csrf))
            (super::backfills::form_of(wf, &caller.csrf))
        }
        h2 { "Source" }
        pre.yaml { code { (highlight(&current.source)) } }
        h2 { "Versions" }
        table.fit {
            thead { tr { th.num { "Version" } th { "File" } th.opt { "Pushed" } th { "Hash" } } }
            tbody {
                @for v in versions.iter().rev() {
                    tr {
                        td.num { (v.version) }
                        td { (v.file_name) }
                        td.at.opt { (v.created_at.format("%Y-%m-%d %H:%M UTC").to_string()) }
                        td.id { code { (v.content_hash.get(..12).unwrap_or(&v.content_hash)) } }
                    }
                }
            }
        }
        @if versions.len() > 1 {
            form method="get" action={ "/ui/workflows/" (url_part(n)) "/diff" } {
                label for="from" { "Compare version" } " "
                select #from name="from" { (options(newest - 1)) } " "
                label for="to" { "with" } " "
                select #to name="to" { (options(newest)) } " "
                button type="submit" { "Compare" }
            }
        }
    };
    html_response(
        StatusCode::OK,
        frame(&format!("Workflow {name}"), Some(&caller.signed()), body),
    )
}

pub(super) fn missing(caller: &UiCaller) -> Response {
    html_response(
        StatusCode::NOT_FOUND,
        frame(
            "Not found",
            Some(&caller.signed()),
            html! { p.error { "No such workflow for your team." } },
        ),
    )
}

fn nodes_of(wf: &Workflow) -> Vec<dag::Node> {
    wf.steps
        .iter()
        .map(|s| dag::Node {
            id: s.id.as_str().to_string(),
            status: "pending".into(),
            badge: None,
        })
        .collect()
}

/// The Run form: one field per typed input, defaults filled in.
fn run_form(wf: &Workflow, csrf: &str) -> Markup {
    html! {
        h2 { "Run" }
        form method="post" action={ "/ui/workflows/" (url_part(&wf.name)) "/run" } {
            input type="hidden" name="csrf" value=(csrf);
            @for input in &wf.inputs {
                @let id = format!("input-{}", input.name);
                @let name = format!("in.{}", input.name);
                @let default = input.default.as_ref();
                p {
                    label for=(id) { (input.name) } " "
                    small { (input.ty.name()) @if input.required { ", required" } } " "
                    @match input.ty {
                        InputType::Boolean => {
                            input #(id) name=(name) type="checkbox" value="true"
                                checked[default == Some(&Value::Bool(true))];
                        }
                        InputType::Integer | InputType::Number => {
                            input #(id) name=(name) type="number" step="any"
                                value=(default.map(Value::to_string).unwrap_or_default()) required[input.required];
                        }
                        InputType::String => {
                            input #(id) name=(name) type="text"
                                value=(default.and_then(Value::as_str).unwrap_or_default()) required[input.required];
                        }
                        InputType::Array | InputType::Object => {
                            textarea #(id) name=(name) rows="3" { (default.map(Value::to_string).unwrap_or_default()) }
                        }
                    }
                }
            }
            button type="submit" { "Run" }
        }
    }
}

/// `POST /ui/workflows/{name}/run`: a run with the form's inputs, typed
/// as the API types them; its page next.
pub async fn run_workflow(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(name): Path<String>,
    body: String,
) -> Response {
    let pairs = form(&body);
    if !caller.checks(&pairs) {
        return forbidden();
    }
    let team = caller.caller.team_id().to_string();
    let Ok((wf, _)) = launch::current(&state, &team, &name).await else {
        return missing(&caller);
    };
    let mut inputs = Map::new();
    for input in &wf.inputs {
        let given = field(&pairs, &format!("in.{}", input.name));
        let value = match (input.ty, given) {
            (InputType::Boolean, given) => Some(Value::Bool(given == Some("true"))),
            (_, None | Some("")) => None,
            (InputType::String, Some(text)) => Some(Value::String(text.to_string())),
            (_, Some(text)) => {
                Some(serde_json::from_str(text).unwrap_or(Value::String(text.to_string())))
            }
        };
        if let Some(v) = value {
            inputs.insert(input.name.clone(), v);
        }
    }
    let request = RunRequest {
        inputs,
        ..RunRequest::default()
    };
    match launch::start(&state, &caller.caller, &name, request, None).await {
        Ok(started) => see_other(&format!("/ui/runs/{}", started.run_id)),
        Err(error) => super::runs::not_started(
            &caller,
            &error,
            &format!("/ui/workflows/{}", url_part(&name)),
        ),
    }
}

/// The stored key of the team's cache scope (server runs cache per team).
fn cache_scope(team_id: &str) -> String {
    dragnet_walk::cache::CacheScope::Organisation {
        org: format!("team:{team_id}"),
    }
    .key()
}

/// `GET /ui/cache`: the team's entries.
pub async fn cache_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    let scope = cache_scope(caller.caller.team_id());
    let entries: Vec<_> = state
        .db()
        .cache()
        .cache_list()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.scope == scope)
        .collect();
    let time = |t: &chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    let body = html! {
        h1 { "Cache" }
        @if entries.is_empty() {
            p { "No cached walks: steps opt in with " code { "loop.cache" } "." }
        } @else {
            table.fit {
                thead { tr {
                    th { "Tool" } th.num { "Rows" } th.num { "Size" } th.opt { "Cached" } th { "Expires" }
                } }
                tbody {
                    @for e in &entries {
                        tr {
                            td.id { (e.tool) }
                            td.num { (e.items) }
                            td.num { (e.stored_bytes.div_ceil(1024)) " KB" }
                            td.at.opt { (time(&e.cached_at)) }
                            td.at { (time(&e.expires_at)) }
                        }
                    }
                }
            }
            form method="post" action="/ui/cache/purge" {
                input type="hidden" name="csrf" value=(caller.csrf);
                button type="submit" { "Purge the team's cache" }
            }
        }
    };
    html_response(StatusCode::OK, frame("Cache", Some(&caller.signed()), body))
}

/// `POST /ui/cache/purge`: deletes the team's entries (no other team's).
pub async fn purge_cache(
    State(state): State<AppState>,
    caller: UiCaller,
    body: String,
) -> Response {
    if !caller.checks(&form(&body)) {
        return forbidden();
    }
    let scope = cache_scope(caller.caller.team_id());
    if let Err(error) = state.db().cache().cache_purge_scope(&scope, None).await {
        tracing::warn!(%error, "the UI could not purge a team's cache");
    }
    see_other("/ui/cache")
}

/// YAML with comments and keys marked.
fn highlight(source: &str) -> Markup {
    html! {
        @for (i, line) in source.lines().enumerate() {
            @if i > 0 { "\n" }
            @let (code, comment) = match line.find(" #").or(line.starts_with('#').then_some(0)) {
                Some(at) => (&line[..at], Some(&line[at..])),
                None => (line, None),
            };
            @match code.find(':') {
                Some(at) if is_key(&code[..at]) => { span.k { (&code[..at]) } (&code[at..]) }
                _ => (code),
            }
            @if let Some(c) = comment { span.c { (c) } }
        }
    }
}

fn is_key(text: &str) -> bool {
    let t = text.trim_start().trim_start_matches("- ");
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '$'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_keys_and_comments_are_marked_and_escaped() {
        let out = highlight("name: <x>\n  - id: a # first\n# note").into_string();
        assert_eq!(
            out,
            "<span class=\"k\">name</span>: &lt;x&gt;\n<span class=\"k\">  - id</span>: a<span class=\"c\"> # first</span>\n<span class=\"c\"># note</span>"
        );
    }
}

/// `GET /ui/workflows/{name}/diff?from=A&to=B` parameters.
#[derive(Debug, serde::Deserialize)]
pub struct DiffQuery {
    from: i64,
    to: i64,
}

/// `GET /ui/workflows/{name}/diff`: two versions' YAML, line by line.
pub async fn diff_page(
    State(state): State<AppState>,
    caller: UiCaller,
    Path(name): Path<String>,
    axum::extract::Query(q): axum::extract::Query<DiffQuery>,
) -> Response {
    let team = caller.caller.team_id().to_string();
    let db = state.db();
    let (Ok(Some(a)), Ok(Some(b))) = (
        db.workflows().workflow_version(&team, &name, q.from).await,
        db.workflows().workflow_version(&team, &name, q.to).await,
    ) else {
        return missing(&caller);
    };
    let body = html! {
        h1 { code { (name) } ": version " (q.from) " → " (q.to) }
        pre.diff { code {
            @for (mark, line) in line_diff(&a.source, &b.source) {
                @let class = match mark { '+' => "add", '-' => "del", _ => "same" };
                span class=(class) { (mark) " " (line) } "\n"
            }
        } }
    };
    html_response(
        StatusCode::OK,
        frame(&format!("{name}: diff"), Some(&caller.signed()), body),
    )
}

/// The most lines a diff compares (each side).
const DIFF_LINES: usize = 4000;

/// `a` to `b` by lines: `' '` kept, `'-'` removed, `'+'` added (a longest
/// common subsequence).
pub fn line_diff<'a>(a: &'a str, b: &'a str) -> Vec<(char, &'a str)> {
    let a: Vec<&str> = a.lines().take(DIFF_LINES).collect();
    let b: Vec<&str> = b.lines().take(DIFF_LINES).collect();
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(('+', b[j]));
            j += 1;
        } else {
            out.push(('-', a[i]));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod diff_tests {
    use super::line_diff;

    #[test]
    fn a_changed_line_is_removed_then_added() {
        let d = line_diff("a\nb\nc", "a\nB\nc\nd");
        assert_eq!(
            d,
            [(' ', "a"), ('+', "B"), ('-', "b"), (' ', "c"), ('+', "d")]
        );
    }
}
