//! `dragnet state list|show|reset`: incremental steps' watermarks, from
//! the local store (what `dragnet run` moved) or, with `--server`, your
//! team's on a server (`/v1/state`). Resetting one makes the step's next
//! walk start from its `initial` again.

use std::io::Write;

use anyhow::{bail, Result};
use clap::Subcommand;
use dragnet_store::{StoredWatermark, WatermarkKey};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::client::{encode, ApiClient, ServerFlags};
use crate::config::{Config, Lifetime};
use crate::out::Out;
use crate::services::Services;
use crate::EXIT_COMPLETE;

#[derive(Subcommand)]
pub enum StateCommand {
    /// Every watermark: workflow, step, value, the run that moved it.
    List {
        #[arg(long)]
        json: bool,
        /// Read a server's (your team's) instead of the local store's.
        #[command(flatten)]
        server: ServerFlags,
    },
    /// One step's watermark.
    Show {
        workflow: String,
        step: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlags,
    },
    /// Forget one step's watermark: its next walk starts from `initial`.
    Reset {
        workflow: String,
        step: String,
        #[command(flatten)]
        server: ServerFlags,
    },
}

impl StateCommand {
    fn server(&self) -> &ServerFlags {
        match self {
            StateCommand::List { server, .. }
            | StateCommand::Show { server, .. }
            | StateCommand::Reset { server, .. } => server,
        }
    }
}

pub async fn state(config: &Config, command: StateCommand, out: &mut Out) -> Result<u8> {
    match ApiClient::from(config, command.server())? {
        Some(client) => remote(&client, command, out).await,
        None => {
            let services = Services::open(config, Lifetime::OneShot).await?;
            let outcome = local(&services, command, out).await;
            services.shutdown().await;
            outcome
        }
    }
}

/// A watermark as `/v1/state` writes it.
fn body(workflow: &str, step: &str, w: &StoredWatermark) -> Value {
    json!({
        "workflow": workflow,
        "step": step,
        "value": w.value,
        "scale": w.scale.name(),
        "keys_at_value": w.row_keys.len(),
        "run_id": w.run_id,
        "updated_at": w.updated_at,
    })
}

async fn local(services: &Services, command: StateCommand, out: &mut Out) -> Result<u8> {
    let store = services.db.watermarks();
    let place = services.db.backend();
    match command {
        StateCommand::List { json, .. } => {
            let all: Vec<Value> = store
                .team_watermarks("")
                .await?
                .iter()
                .map(|(workflow, step, w)| body(workflow, step, w))
                .collect();
            print_list(&all, json, out)?;
        }
        StateCommand::Show {
            workflow,
            step,
            json,
            ..
        } => {
            let key = WatermarkKey {
                team_id: "",
                workflow: &workflow,
                step: &step,
            };
            let Some(w) = store.watermark(key).await? else {
                bail!("no watermark for step `{step}` of `{workflow}` in {place}: no complete walk of it has set one");
            };
            print_one(&body(&workflow, &step, &w), json, out)?;
        }
        StateCommand::Reset { workflow, step, .. } => {
            let key = WatermarkKey {
                team_id: "",
                workflow: &workflow,
                step: &step,
            };
            if !store.reset(key).await? {
                bail!("no watermark for step `{step}` of `{workflow}` in {place}");
            }
            say_reset(&workflow, &step, out)?;
        }
    }
    Ok(EXIT_COMPLETE)
}

async fn remote(client: &ApiClient, command: StateCommand, out: &mut Out) -> Result<u8> {
    match command {
        StateCommand::List { json, .. } => {
            let (_, v): (_, Value) = client.json(Method::GET, "/v1/state", None, &[]).await?;
            let all = v["watermarks"].as_array().cloned().unwrap_or_default();
            print_list(&all, json, out)?;
        }
        StateCommand::Show {
            workflow,
            step,
            json,
            ..
        } => {
            let path = format!("/v1/state/{}/{}", encode(&workflow), encode(&step));
            let (_, v): (_, Value) = client.json(Method::GET, &path, None, &[]).await?;
            print_one(&v, json, out)?;
        }
        StateCommand::Reset { workflow, step, .. } => {
            let path = format!("/v1/state/{}/{}", encode(&workflow), encode(&step));
            let resp = client.send(Method::DELETE, &path, None, &[]).await?;
            let status = resp.status();
            if status != StatusCode::NO_CONTENT {
                let text = resp.text().await.unwrap_or_default();
                return Err(client.error(status, &text).into());
            }
            say_reset(&workflow, &step, out)?;
        }
    }
    Ok(EXIT_COMPLETE)
}

fn say_reset(workflow: &str, step: &str, out: &mut Out) -> Result<()> {
    writeln!(
        out,
        "reset: the next walk of step `{step}` of `{workflow}` starts from its `initial`"
    )?;
    Ok(())
}

fn print_list(all: &[Value], json: bool, out: &mut Out) -> Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, all)?;
        writeln!(out)?;
        return Ok(());
    }
    if all.is_empty() {
        writeln!(
            out,
            "no watermarks: no incremental step has completed a walk"
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<28} {:<20} {:<26} {:<32} updated",
        "workflow", "step", "watermark", "run"
    )?;
    for w in all {
        writeln!(
            out,
            "{:<28} {:<20} {:<26} {:<32} {}",
            w["workflow"].as_str().unwrap_or("?"),
            w["step"].as_str().unwrap_or("?"),
            value_text(&w["value"]),
            w["run_id"].as_str().unwrap_or("?"),
            w["updated_at"].as_str().unwrap_or("?"),
        )?;
    }
    Ok(())
}

fn print_one(w: &Value, json: bool, out: &mut Out) -> Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, w)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} / {}\n  watermark  {} ({})\n  keys kept  {}\n  moved by   {} at {}",
        w["workflow"].as_str().unwrap_or("?"),
        w["step"].as_str().unwrap_or("?"),
        value_text(&w["value"]),
        w["scale"].as_str().unwrap_or("?"),
        w["keys_at_value"],
        w["run_id"].as_str().unwrap_or("?"),
        w["updated_at"].as_str().unwrap_or("?"),
    )?;
    Ok(())
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
