//! The workflow editor: the YAML in a text area, checked as it is typed
//! (a few inline lines post it to `/ui/validate` a moment after the last
//! key, the way `POST /v1/validate` answers), and pushed as a new version
//! by the same code as `PUT /v1/workflows/{name}`. With scripts on, the
//! text area gets a line-number gutter, YAML highlighting as it is typed
//! (keys, strings, refs, comments: a highlighted copy behind the
//! transparent text), each problem marked at its line in the gutter with
//! its message on hover (and listed below), and completion of tool names
//! (`provider.operation`, after `tool:`) and step ids (after `needs:` or
//! `$.steps.`) from the server's last good check, chosen with the arrow
//! keys and Enter or Tab. Without scripts it is a plain text area and the
//! form still pushes. Editing a workflow keeps the documents uploaded with
//! its current version; a new one reads its `openapi:` paths from the
//! server's workflows folder.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use maud::{html, PreEscaped};
use serde_json::json;

use super::html::{frame, url_part};
use super::{field, forbidden, form, html_response, see_other, UiCaller};
use crate::error::{diagnostic_bodies, ApiError};
use crate::state::AppState;
use crate::upload::Upload;

/// What a new workflow's editor starts with.
const STARTER: &str = "name: my_workflow\nproviders:\n  shop:\n    openapi: openapi.yaml\nsteps:\n  - id: first\n    tool: shop.listOrders\n";

/// The header the editor's checks carry their CSRF value in.
const CSRF_HEADER: &str = "x-dragnet-csrf";

/// The editor's script: highlighting, the gutter, the checks and completion.
const SCRIPT: &str = include_str!("editor.js");

/// `GET /ui/workflows/{name}/edit` (and `/ui/workflows/new`).
pub async fn edit_page(
    State(state): State<AppState>,
    caller: UiCaller,
    name: Option<Path<String>>,
) -> Response {
    let base = name.map(|Path(n)| n);
    let source = match &base {
        Some(name) => match current_of(&state, &caller, name).await {
            Some((source, _)) => source,
            None => return super::pages::missing(&caller),
        },
        None => STARTER.to_string(),
    };
    editor(&caller, base.as_deref(), &source, &[], StatusCode::OK)
}

fn editor(
    caller: &UiCaller,
    base: Option<&str>,
    source: &str,
    problems: &[String],
    status: StatusCode,
) -> Response {
    let action = match base {
        Some(b) => format!("/ui/workflows/{}/edit", url_part(b)),
        None => "/ui/workflows/new".into(),
    };
    let body = html! {
        h1 {
            @match base {
                Some(b) => { "Edit " code { (b) } }
                None => "New workflow",
            }
        }
        form method="post" action=(action) {
            input type="hidden" name="csrf" value=(caller.csrf);
            label for="source" { "Workflow YAML" } " "
            span #state aria-live="polite" {}
            div.editor #editor {
                pre.gutter #gutter aria-hidden="true" {}
                div.code {
                    pre #highlight aria-hidden="true" {}
                    textarea #source name="source" rows="24" spellcheck="false" autocapitalize="off"
                        aria-autocomplete="list" aria-controls="complete" data-base=(base.unwrap_or_default()) { (source) }
                }
            }
            ul #complete role="listbox" aria-label="completions" hidden {}
            ul #diagnostics aria-live="polite" {
                @for p in problems { li { (p) } }
            }
            button type="submit" { "Push" }
        }
        script { (PreEscaped(SCRIPT)) }
    };
    html_response(status, frame("Editor", Some(&caller.signed()), body))
}

/// The current version's source and documents of the caller's workflow.
async fn current_of(
    state: &AppState,
    caller: &UiCaller,
    name: &str,
) -> Option<(String, BTreeMap<String, String>)> {
    let team = caller.caller.team_id();
    let (summary, _) = state
        .db()
        .workflows()
        .get_workflow(team, name)
        .await
        .ok()??;
    let v = state
        .db()
        .workflows()
        .workflow_version(team, name, summary.current_version)
        .await
        .ok()??;
    Some((v.source, v.documents))
}

/// The text as an upload: the base workflow's documents, if any.
async fn upload_of(
    state: &AppState,
    caller: &UiCaller,
    base: Option<&str>,
    source: String,
) -> Upload {
    let documents = match base {
        Some(name) => current_of(state, caller, name)
            .await
            .map(|(_, d)| d)
            .unwrap_or_default(),
        None => BTreeMap::new(),
    };
    Upload {
        file_name: format!("{}.yaml", base.unwrap_or("workflow")),
        source,
        documents,
    }
}

#[derive(serde::Deserialize)]
pub struct BaseParam {
    base: Option<String>,
}

/// `POST /ui/validate`: the text's diagnostics, as the API gives them.
pub async fn validate(
    State(state): State<AppState>,
    caller: UiCaller,
    axum::extract::Query(param): axum::extract::Query<BaseParam>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let sent = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
    if sent != Some(caller.csrf.as_str()) {
        return forbidden();
    }
    let up = upload_of(&state, &caller, param.base.as_deref(), body).await;
    match crate::launch::compile(&state, &up.file_name, up.source, up.documents).await {
        Ok(Ok(wf)) => {
            // What the editor completes: the tools of the OpenAPI
            // providers named (`provider.operation`; an MCP server's are
            // known when a run connects) and the step ids.
            let tools: Vec<String> = wf
                .providers
                .values()
                .filter_map(|p| p.openapi().map(|o| (p, o)))
                .flat_map(|(p, o)| {
                    o.toolkit
                        .tools
                        .iter()
                        .map(move |t| format!("{}.{}", p.name, t.name))
                })
                .collect();
            let steps: Vec<&str> = wf.steps.iter().map(|s| s.id.as_str()).collect();
            Json(json!({"valid": true, "name": wf.name, "diagnostics": [],
                "tools": tools, "steps": steps}))
            .into_response()
        }
        Ok(Err(d)) => {
            Json(json!({"valid": false, "diagnostics": diagnostic_bodies(&d)})).into_response()
        }
        Err(e) => e.into_response(),
    }
}

/// `POST /ui/workflows/{name}/edit` (and `/ui/workflows/new`): pushes the
/// text; back to the editor with its problems when it is refused.
pub async fn push(
    State(state): State<AppState>,
    caller: UiCaller,
    name: Option<Path<String>>,
    body: String,
) -> Response {
    let pairs = form(&body);
    if !caller.checks(&pairs) {
        return forbidden();
    }
    let base = name.map(|Path(n)| n);
    let source = field(&pairs, "source")
        .unwrap_or_default()
        .replace("\r\n", "\n");
    let up = upload_of(&state, &caller, base.as_deref(), source.clone()).await;
    // The name is the file's own: a new workflow takes it from the text.
    let target = match &base {
        Some(b) => b.clone(),
        None => named_in(&source).unwrap_or_default(),
    };
    match crate::workflows::push(&state, &caller.caller, &target, up).await {
        Ok(pushed) => see_other(&format!("/ui/workflows/{}", url_part(&pushed.name))),
        Err(ApiError::InvalidWorkflow(d)) => {
            let problems: Vec<String> = diagnostic_bodies(&d)
                .into_iter()
                .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
                .collect();
            editor(
                &caller,
                base.as_deref(),
                &source,
                &problems,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
        }
        Err(other) => editor(
            &caller,
            base.as_deref(),
            &source,
            &[other.to_string()],
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    }
}

/// The top-level `name:` of a YAML text, if plainly written.
fn named_in(source: &str) -> Option<String> {
    source.lines().find_map(|l| {
        let rest = l.strip_prefix("name:")?;
        let name = rest.trim().trim_matches(['"', '\'']);
        (!name.is_empty()).then(|| name.to_string())
    })
}
