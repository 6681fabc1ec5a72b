//! `dragnet schedules list|pause|resume`: a server's schedules of your
//! team through its API (`/v1/schedules`): each with its next tick, its
//! latest outcome and its pause; pausing with a reason and resuming, after
//! which the ticks of the pause follow the trigger's `catch_up`.

use std::io::Write;

use anyhow::Result;
use clap::Subcommand;
use reqwest::Method;
use serde_json::{json, Value};

use crate::client::{encode, ApiClient, ServerFlags};
use crate::config::Config;
use crate::out::Out;
use crate::EXIT_COMPLETE;

#[derive(Subcommand)]
pub enum SchedulesCommand {
    /// The server's schedules of your team: next tick, latest outcome, pause.
    List {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlags,
    },
    /// Pause a schedule: it fires nothing until it is resumed.
    Pause {
        /// Its id (`sch_…`, from `dragnet schedules list`).
        schedule_id: String,
        /// Why, shown with it (1 to 500 characters).
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        server: ServerFlags,
    },
    /// Resume a paused schedule; the ticks of the pause follow its `catch_up`.
    Resume {
        schedule_id: String,
        #[command(flatten)]
        server: ServerFlags,
    },
}

pub async fn schedules(config: &Config, command: SchedulesCommand, out: &mut Out) -> Result<u8> {
    match command {
        SchedulesCommand::List { json, server } => {
            let client = ApiClient::required(config, &server)?;
            let (_, v): (_, Value) = client.json(Method::GET, "/v1/schedules", None, &[]).await?;
            let schedules = v["schedules"].as_array().cloned().unwrap_or_default();
            if json {
                serde_json::to_writer_pretty(&mut *out, &schedules)?;
                writeln!(out)?;
            } else {
                print_table(&schedules, out)?;
            }
        }
        SchedulesCommand::Pause {
            schedule_id,
            reason,
            server,
        } => {
            let client = ApiClient::required(config, &server)?;
            let path = format!("/v1/schedules/{}/pause", encode(&schedule_id));
            let body = json!({ "reason": reason }).to_string();
            let (_, v): (_, Value) = client
                .json(Method::POST, &path, Some(("application/json", body)), &[])
                .await?;
            writeln!(out, "{schedule_id} paused: {}", state(&v))?;
        }
        SchedulesCommand::Resume {
            schedule_id,
            server,
        } => {
            let client = ApiClient::required(config, &server)?;
            let path = format!("/v1/schedules/{}/resume", encode(&schedule_id));
            let (_, v): (_, Value) = client.json(Method::POST, &path, None, &[]).await?;
            writeln!(
                out,
                "{schedule_id} resumed (catch_up: {}): {}",
                v["catch_up"].as_str().unwrap_or("?"),
                state(&v)
            )?;
        }
    }
    Ok(EXIT_COMPLETE)
}

/// A schedule's state in words: stopped, paused (since, by, why), or its
/// next tick.
fn state(s: &Value) -> String {
    if s["active"] == false {
        return "stopped (its trigger is no longer in the workflow)".into();
    }
    let paused = &s["paused"];
    if !paused.is_null() {
        return format!(
            "paused since {} by {}: {}",
            paused["at"].as_str().unwrap_or("?"),
            paused["by"].as_str().unwrap_or("?"),
            paused["reason"].as_str().unwrap_or("")
        );
    }
    match s["next_ticks"][0].as_str() {
        Some(next) => format!("next tick {next}"),
        None => "no next tick".into(),
    }
}

fn print_table(schedules: &[Value], out: &mut Out) -> Result<()> {
    writeln!(
        out,
        "{:<26} {:<28} {:<16} {:<10} state",
        "schedule", "workflow", "cron", "latest"
    )?;
    for s in schedules {
        writeln!(
            out,
            "{:<26} {:<28} {:<16} {:<10} {}",
            s["schedule_id"].as_str().unwrap_or("?"),
            s["workflow"].as_str().unwrap_or("?"),
            s["cron"].as_str().unwrap_or("?"),
            s["last_ticks"][0]["status"].as_str().unwrap_or("-"),
            state(s)
        )?;
    }
    Ok(())
}
