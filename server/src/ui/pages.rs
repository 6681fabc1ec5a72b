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

use super::html::{badge, esc, page};
use super::{dag, field, forbidden, form, html_response, see_other, UiCaller};
use crate::launch::{self, RunRequest};
use crate::state::AppState;

/// `GET /ui/workflows`.
pub async fn workflows_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    let team = caller.caller.team_id().to_string();
    let listed = state.db().list_workflows(&team).await.unwrap_or_default();
    let schedules = crate::schedules::describe(&state, &team, None)
        .await
        .unwrap_or_default();
    let mut body =
        String::from("<h1>Workflows</h1><p><a href=\"/ui/workflows/new\">New workflow</a></p>");
    if listed.is_empty() {
        body.push_str(
            "<p>No workflows yet: push one with <code>dragnet workflows push FILE</code>.</p>",
        );
    } else {
        body.push_str("<table><thead><tr><th>Workflow</th><th>Version</th><th>Last run</th><th>Next tick</th><th>Updated</th></tr></thead><tbody>");
        for w in &listed {
            let latest = dragnet_store::RunFilter {
                team_id: Some(team.clone()),
                workflow: Some(w.name.clone()),
                ..dragnet_store::RunFilter::default()
            };
            let last = state
                .db()
                .list_runs_where(&latest, 1)
                .await
                .ok()
                .and_then(|r| r.into_iter().next())
                .map(|r| {
                    format!(
                        "<a href=\"/ui/runs/{id}\">{b}</a>",
                        id = esc(&r.run_id),
                        b = badge(r.status.as_str())
                    )
                })
                .unwrap_or_else(|| "—".into());
            let next = schedules
                .iter()
                .filter(|s| s.workflow == w.name && s.active)
                .filter_map(|s| s.next_ticks.first())
                .min()
                .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
                .unwrap_or_else(|| "—".into());
            body.push_str(&format!(
                "<tr><td><a href=\"/ui/workflows/{n}\">{n}</a></td><td>{v}</td><td>{last}</td><td>{next}</td><td>{u}</td></tr>",
                n = esc(&w.name),
                v = w.current_version,
                next = esc(&next),
                u = esc(&w.updated_at.format("%Y-%m-%d %H:%M UTC").to_string()),
            ));
        }
        body.push_str("</tbody></table>");
    }
    html_response(
        StatusCode::OK,
        page("Workflows", Some(&caller.signed()), &body),
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
    let Ok(Some((summary, versions))) = db.get_workflow(&team, &name).await else {
        return missing(&caller);
    };
    let Ok(Some(current)) = db
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
    let mut body = format!(
        "<h1>Workflow <code>{n}</code></h1><p>version {v} · {f} · <a href=\"/ui/workflows/{n}/edit\">Edit</a></p>",
        n = esc(&summary.name),
        v = summary.current_version,
        f = esc(&current.info.file_name)
    );
    if let Some(wf) = &compiled {
        body.push_str(&dag::svg(&nodes_of(wf), &super::plan_edges(wf)));
        body.push_str(&run_form(wf, &caller.csrf));
    }
    body.push_str(&format!(
        "<h2>Source</h2><pre class=\"yaml\"><code>{}</code></pre>",
        highlight(&current.source)
    ));
    body.push_str("<h2>Versions</h2><table><thead><tr><th>Version</th><th>File</th><th>Pushed</th><th>Hash</th></tr></thead><tbody>");
    for v in versions.iter().rev() {
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            v.version,
            esc(&v.file_name),
            esc(&v.created_at.format("%Y-%m-%d %H:%M UTC").to_string()),
            esc(v.content_hash.get(..12).unwrap_or(&v.content_hash)),
        ));
    }
    body.push_str("</tbody></table>");
    if versions.len() > 1 {
        let newest = versions.iter().map(|v| v.version).max().unwrap_or(1);
        let options = |pick: i64| -> String {
            versions
                .iter()
                .rev()
                .map(|v| {
                    format!(
                        "<option value=\"{n}\"{sel}>{n}</option>",
                        n = v.version,
                        sel = if v.version == pick { " selected" } else { "" }
                    )
                })
                .collect()
        };
        body.push_str(&format!(
            "<form method=\"get\" action=\"/ui/workflows/{n}/diff\"><label for=\"from\">Compare version</label> \
             <select id=\"from\" name=\"from\">{a}</select> <label for=\"to\">with</label> \
             <select id=\"to\" name=\"to\">{b}</select> <button type=\"submit\">Compare</button></form>",
            n = esc(&summary.name),
            a = options(newest - 1),
            b = options(newest),
        ));
    }
    html_response(
        StatusCode::OK,
        page(&format!("Workflow {name}"), Some(&caller.signed()), &body),
    )
}

pub(super) fn missing(caller: &UiCaller) -> Response {
    html_response(
        StatusCode::NOT_FOUND,
        page(
            "Not found",
            Some(&caller.signed()),
            "<p class=\"error\">No such workflow for your team.</p>",
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
fn run_form(wf: &Workflow, csrf: &str) -> String {
    let mut out = format!(
        "<h2>Run</h2><form method=\"post\" action=\"/ui/workflows/{n}/run\"><input type=\"hidden\" name=\"csrf\" value=\"{c}\">",
        n = esc(&wf.name),
        c = esc(csrf)
    );
    for input in &wf.inputs {
        let id = format!("input-{}", esc(&input.name));
        let default = input.default.as_ref();
        let label = format!(
            "<label for=\"{id}\">{n}</label> <small>{t}{r}</small>",
            n = esc(&input.name),
            t = input.ty.name(),
            r = if input.required { ", required" } else { "" }
        );
        let control = match input.ty {
            InputType::Boolean => format!(
                "<input id=\"{id}\" name=\"in.{n}\" type=\"checkbox\" value=\"true\"{checked}>",
                n = esc(&input.name),
                checked = if default == Some(&Value::Bool(true)) { " checked" } else { "" }
            ),
            InputType::Integer | InputType::Number => format!(
                "<input id=\"{id}\" name=\"in.{n}\" type=\"number\" step=\"any\" value=\"{v}\"{req}>",
                n = esc(&input.name),
                v = default.map(|d| esc(&d.to_string())).unwrap_or_default(),
                req = if input.required { " required" } else { "" }
            ),
            InputType::String => format!(
                "<input id=\"{id}\" name=\"in.{n}\" type=\"text\" value=\"{v}\"{req}>",
                n = esc(&input.name),
                v = default.and_then(Value::as_str).map(esc).unwrap_or_default(),
                req = if input.required { " required" } else { "" }
            ),
            InputType::Array | InputType::Object => format!(
                "<textarea id=\"{id}\" name=\"in.{n}\" rows=\"3\">{v}</textarea>",
                n = esc(&input.name),
                v = default.map(|d| esc(&d.to_string())).unwrap_or_default(),
            ),
        };
        out.push_str(&format!("<p>{label} {control}</p>"));
    }
    out.push_str("<button type=\"submit\">Run</button></form>");
    out
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
        Err(error) => super::not_started(&caller, &error, &format!("/ui/workflows/{name}")),
    }
}

/// `GET /ui/schedules`.
pub async fn schedules_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    let team = caller.caller.team_id().to_string();
    let schedules = crate::schedules::describe(&state, &team, None)
        .await
        .unwrap_or_default();
    let mut body = String::from("<h1>Schedules</h1>");
    if schedules.is_empty() {
        body.push_str("<p>No schedules: a workflow's <code>triggers</code> make them.</p>");
    }
    let time =
        |t: &chrono::DateTime<chrono::Utc>| esc(&t.format("%Y-%m-%d %H:%M:%S UTC").to_string());
    for s in &schedules {
        body.push_str(&format!(
            "<section><h2><a href=\"/ui/workflows/{w}\">{w}</a> <code>{c}</code> {tz}{inactive}</h2>\
             <p>catch up {cu}, overlap {ov}; late by {late} ms. Next: {next}</p>",
            w = esc(&s.workflow),
            c = esc(&s.cron),
            tz = esc(&s.timezone),
            inactive = if s.active { "" } else { " (stopped)" },
            cu = esc(&s.catch_up),
            ov = esc(&s.overlap),
            late = s.lateness_ms,
            next = s.next_ticks.iter().map(time).collect::<Vec<_>>().join(", "),
        ));
        body.push_str("<table><thead><tr><th>Tick</th><th>Outcome</th><th>Run</th><th>Late</th></tr></thead><tbody>");
        for t in &s.last_ticks {
            body.push_str(&format!(
                "<tr><td>{at}</td><td>{status}{reason}</td><td>{run}</td><td>{late} ms</td></tr>",
                at = time(&t.scheduled_for),
                status = badge(&t.status),
                reason = t
                    .reason
                    .as_deref()
                    .map(|r| format!(" {}", esc(r)))
                    .unwrap_or_default(),
                run = t
                    .run_id
                    .as_deref()
                    .map(|r| format!("<a href=\"/ui/runs/{r}\">{r}</a>", r = esc(r)))
                    .unwrap_or_default(),
                late = t.lateness_ms,
            ));
        }
        body.push_str("</tbody></table></section>");
    }
    html_response(
        StatusCode::OK,
        page("Schedules", Some(&caller.signed()), &body),
    )
}

/// The stored key of the team's cache scope (server runs cache per team).
fn cache_scope(team_id: &str) -> String {
    dragnet_steps::cache::CacheScope::Organisation {
        org: format!("team:{team_id}"),
    }
    .key()
}

/// `GET /ui/cache`: the team's entries.
pub async fn cache_page(State(state): State<AppState>, caller: UiCaller) -> Response {
    let scope = cache_scope(caller.caller.team_id());
    let entries: Vec<_> = state
        .db()
        .cache_list()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.scope == scope)
        .collect();
    let mut body = String::from("<h1>Cache</h1>");
    if entries.is_empty() {
        body.push_str("<p>No cached walks: steps opt in with <code>loop.cache</code>.</p>");
    } else {
        let time =
            |t: &chrono::DateTime<chrono::Utc>| esc(&t.format("%Y-%m-%d %H:%M UTC").to_string());
        body.push_str("<table><thead><tr><th>Tool</th><th>Rows</th><th>Size</th><th>Cached</th><th>Expires</th></tr></thead><tbody>");
        for e in &entries {
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{} KB</td><td>{}</td><td>{}</td></tr>",
                esc(&e.tool),
                e.items,
                e.stored_bytes.div_ceil(1024),
                time(&e.cached_at),
                time(&e.expires_at),
            ));
        }
        body.push_str("</tbody></table>");
        body.push_str(&format!(
            "<form method=\"post\" action=\"/ui/cache/purge\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <button type=\"submit\">Purge the team's cache</button></form>",
            esc(&caller.csrf)
        ));
    }
    html_response(StatusCode::OK, page("Cache", Some(&caller.signed()), &body))
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
    if let Err(error) = state.db().cache_purge_scope(&scope, None).await {
        tracing::warn!(%error, "the UI could not purge a team's cache");
    }
    see_other("/ui/cache")
}

/// YAML with comments and keys marked (escaped first).
fn highlight(source: &str) -> String {
    source
        .lines()
        .map(|line| {
            let (code, comment) = match line.find(" #").or(line.starts_with('#').then_some(0)) {
                Some(at) => (&line[..at], Some(&line[at..])),
                None => (line, None),
            };
            let mut out = match code.find(':') {
                Some(at) if is_key(&code[..at]) => format!(
                    "<span class=\"k\">{}</span>{}",
                    esc(&code[..at]),
                    esc(&code[at..])
                ),
                _ => esc(code),
            };
            if let Some(c) = comment {
                out.push_str(&format!("<span class=\"c\">{}</span>", esc(c)));
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
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
        let out = highlight("name: <x>\n  - id: a # first\n# note");
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
        db.workflow_version(&team, &name, q.from).await,
        db.workflow_version(&team, &name, q.to).await,
    ) else {
        return missing(&caller);
    };
    let mut body = format!(
        "<h1><code>{n}</code>: version {f} → {t}</h1><pre class=\"diff\"><code>",
        n = esc(&name),
        f = q.from,
        t = q.to
    );
    for (mark, line) in line_diff(&a.source, &b.source) {
        let class = match mark {
            '+' => "add",
            '-' => "del",
            _ => "same",
        };
        body.push_str(&format!(
            "<span class=\"{class}\">{mark} {}</span>\n",
            esc(line)
        ));
    }
    body.push_str("</code></pre>");
    html_response(
        StatusCode::OK,
        page(&format!("{name}: diff"), Some(&caller.signed()), &body),
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
