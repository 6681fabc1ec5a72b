//! `dragnet workflows push|list` and `dragnet trigger`: a server's
//! workflows from the command line. A push uploads the file with the
//! OpenAPI documents its providers name (read beside it), so the server
//! needs no copy of them; `trigger --follow` shows the run's stream with
//! the same live display and summary as `dragnet run`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use dragnet_core::progress::ProgressEvent;
use dragnet_engine::run::{RunObserver, RunRecord, StepRecord, StepStatus, StepType, StepVerdict};
use reqwest::Method;
use serde_json::{json, Map, Value};

use crate::client::{encode, ApiClient, ServerFlags};
use crate::config::Config;
use crate::failure::CliError;
use crate::out::Out;
use crate::run_display::{print_summary, RunDisplay};
use crate::workflow_cmd::exit_code;
use crate::EXIT_COMPLETE;

#[derive(Subcommand)]
pub enum WorkflowsCommand {
    /// Upload workflow files (each a new version unless unchanged), with
    /// the OpenAPI documents their providers name.
    Push {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        server: ServerFlags,
    },
    /// The server's workflows of your team.
    List {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlags,
    },
}

#[derive(Args)]
pub struct TriggerArgs {
    /// The workflow's name.
    name: String,
    /// An input as name=value (repeatable); the value is read as JSON when
    /// it is JSON (`500`, `true`, `"007"`), else as text.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    inputs: Vec<String>,
    /// Follow the run live until it ends, then print its summary.
    #[arg(long)]
    follow: bool,
    /// Retrying with the same key within 24 h answers with the first run.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
    /// Never read the cache.
    #[arg(long)]
    experiment: bool,
    /// Bypass cached walks and replace them.
    #[arg(long)]
    refresh: bool,
    #[command(flatten)]
    server: ServerFlags,
}

pub async fn workflows(config: &Config, command: WorkflowsCommand, out: &mut Out) -> Result<u8> {
    match command {
        WorkflowsCommand::Push { files, server } => {
            let client = ApiClient::required(config, &server)?;
            for file in &files {
                let (name, bundle) = bundle(file)?;
                let path = format!("/v1/workflows/{}", encode(&name));
                let (_, v): (_, Value) = client
                    .json(Method::PUT, &path, Some(("application/json", bundle)), &[])
                    .await?;
                let what = match v["created"].as_bool() {
                    Some(true) => "stored as version",
                    _ => "unchanged at version",
                };
                writeln!(out, "{}: {name} {what} {}", file.display(), v["version"])?;
            }
        }
        WorkflowsCommand::List { json, server } => {
            let client = ApiClient::required(config, &server)?;
            let (_, v): (_, Value) = client.json(Method::GET, "/v1/workflows", None, &[]).await?;
            if json {
                serde_json::to_writer_pretty(&mut *out, &v["workflows"])?;
                writeln!(out)?;
            } else {
                writeln!(out, "{:<32} {:>8}  updated", "workflow", "version")?;
                for w in v["workflows"].as_array().into_iter().flatten() {
                    writeln!(
                        out,
                        "{:<32} {:>8}  {}",
                        w["name"].as_str().unwrap_or("?"),
                        w["current_version"].as_i64().unwrap_or(0),
                        w["updated_at"].as_str().unwrap_or("")
                    )?;
                }
            }
        }
    }
    Ok(EXIT_COMPLETE)
}

/// The file as a JSON bundle with the documents its providers name, and
/// the workflow's name.
fn bundle(file: &Path) -> Result<(String, String)> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let tree: Value = serde_yaml_ng::from_str(&text)
        .with_context(|| format!("{}: not YAML or JSON", file.display()))?;
    let name = tree["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .with_context(|| format!("{}: the workflow has no `name`", file.display()))?
        .to_string();
    let base = file.parent().unwrap_or(Path::new(""));
    let mut documents = BTreeMap::new();
    for provider in tree["providers"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
    {
        let Some(path) = provider["openapi"].as_str().map(str::trim) else {
            continue;
        };
        if path.is_empty() || documents.contains_key(path) {
            continue;
        }
        let doc = base.join(path);
        let doc_text = std::fs::read_to_string(&doc).with_context(|| {
            format!(
                "cannot read {} (named by {})",
                doc.display(),
                file.display()
            )
        })?;
        documents.insert(path.to_string(), doc_text);
    }
    let file_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{name}.yaml"));
    let body = json!({"workflow": text, "documents": documents, "file_name": file_name});
    Ok((name, body.to_string()))
}

/// `name=value` pairs as JSON inputs.
fn inputs(pairs: &[String]) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for pair in pairs {
        let Some((name, text)) = pair.split_once('=') else {
            return Err(CliError::argument_error(
                "--input",
                format!("expects name=value, got `{pair}`"),
            )
            .into());
        };
        let value = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()));
        out.insert(name.to_string(), value);
    }
    Ok(out)
}

pub async fn trigger(config: &Config, args: TriggerArgs, out: &mut Out) -> Result<u8> {
    let client = ApiClient::required(config, &args.server)?;
    let body = json!({
        "inputs": inputs(&args.inputs)?,
        "experiment": args.experiment,
        "refresh": args.refresh,
    });
    let mut headers = Vec::new();
    if let Some(key) = &args.idempotency_key {
        headers.push(("idempotency-key", key.as_str()));
    }
    let path = format!("/v1/workflows/{}/runs", encode(&args.name));
    let (_, started): (_, Value) = client
        .json(
            Method::POST,
            &path,
            Some(("application/json", body.to_string())),
            &headers,
        )
        .await?;
    let run_id = started["run_id"]
        .as_str()
        .context("the server gave no run id")?
        .to_string();
    if !args.follow {
        writeln!(out, "{run_id}")?;
        return Ok(EXIT_COMPLETE);
    }
    follow(&client, &run_id).await?;
    let path = format!("/v1/runs/{}?outputs=true", encode(&run_id));
    let (_, record): (_, RunRecord) = client.json(Method::GET, &path, None, &[]).await?;
    print_summary(&record, out)?;
    Ok(exit_code(&record))
}

/// Shows the run's events until its `end`.
async fn follow(client: &ApiClient, run_id: &str) -> Result<()> {
    let display = RunDisplay::plain();
    let path = format!("/v1/runs/{}/events", encode(run_id));
    let mut resp = client.send(Method::GET, &path, None, &[]).await?;
    if !resp.status().is_success() {
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        return Err(client.error(status, &text).into());
    }
    let mut pending = String::new();
    while let Some(chunk) = resp.chunk().await.context("reading the run's events")? {
        pending.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = pending.find("\n\n") {
            let block: String = pending.drain(..end + 2).collect();
            if let Some((event, data)) = parse_block(&block) {
                if show(&display, &event, &data) {
                    display.finish();
                    return Ok(());
                }
            }
        }
    }
    display.finish();
    Ok(())
}

/// One SSE block's event name and data.
fn parse_block(block: &str) -> Option<(String, Value)> {
    let mut event = None;
    let mut data = String::new();
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            event = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim_start());
        }
    }
    Some((event?, serde_json::from_str(&data).ok()?))
}

/// Shows one event; true at the run's end.
fn show(display: &RunDisplay, event: &str, data: &Value) -> bool {
    let step = data["step"].as_str().unwrap_or_default();
    match event {
        "end" => return true,
        "step" if data["status"] == "running" => display.step_started(step),
        "step" => {
            if let Some(record) = step_record(data) {
                display.step_finished(&record);
            }
        }
        "data-tool-loop-progress" => {
            let n = |k: &str| data[k].as_u64().unwrap_or(0);
            let event = ProgressEvent {
                page: n("page") as u32,
                pages_max: n("pagesMax") as u32,
                items: n("items") as usize,
                requests: n("requests") as u32,
                requests_max: n("requestsMax") as u32,
                elapsed_ms: n("elapsedMs"),
                value: data.get("value").cloned(),
            };
            display.step_progress(step, &event);
        }
        _ => {}
    }
    false
}

/// A finished step from its event.
fn step_record(data: &Value) -> Option<StepRecord> {
    let mut record = StepRecord::pending(data["step"].as_str()?, StepType::Tool);
    record.status = serde_json::from_value::<StepStatus>(data["status"].clone()).ok()?;
    record.reason = data["reason"].as_str().map(str::to_string);
    record.attempts = data["attempts"].as_u64().unwrap_or(0) as u32;
    record.duration_ms = data["durationMs"].as_u64().unwrap_or(0);
    record.verdict = serde_json::from_value::<StepVerdict>(data["verdict"].clone()).ok();
    Some(record)
}
