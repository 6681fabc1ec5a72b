//! `dragnet backfill WORKFLOW --from T --to T` and `dragnet backfills
//! list|show|cancel`: a server's backfills of your team (`/v1/backfills`).
//! A backfill runs the ticks of the workflow's schedules in the window on
//! the server; `--dry-run` lists them (in each schedule's zone, so a
//! daylight-saving change shows) and runs nothing; `--follow` shows it
//! until it ends and exits by its outcome (0 succeeded, 3 partial, 1
//! failed, 130 cancelled).

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::{json, Value};

use crate::client::{encode, ApiClient, ServerFlags};
use crate::config::Config;
use crate::out::{say, Out};
use crate::workflow_cmd::EXIT_CANCELLED;
use crate::{EXIT_COMPLETE, EXIT_ERROR, EXIT_PARTIAL};

#[derive(Args)]
pub struct BackfillArgs {
    /// The server's workflow (its cron triggers give the ticks).
    pub workflow: String,
    /// The window's first instant, RFC 3339 (e.g. 2026-06-01T00:00:00Z).
    #[arg(long, value_name = "TIME")]
    pub from: String,
    /// The window's last instant, RFC 3339 (inclusive).
    #[arg(long, value_name = "TIME")]
    pub to: String,
    /// List the ticks the backfill would run; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Runs at a time, 1 (the default) to 16.
    #[arg(long, value_name = "N")]
    pub concurrency: Option<u32>,
    /// Also run ticks that already have a complete run.
    #[arg(long)]
    pub rerun: bool,
    /// Start with the newest tick (the oldest by default).
    #[arg(long)]
    pub newest_first: bool,
    /// Show it until it ends; exit by its outcome.
    #[arg(long)]
    pub follow: bool,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub server: ServerFlags,
}

#[derive(Subcommand)]
pub enum BackfillsCommand {
    /// Your team's backfills, newest first.
    List {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlags,
    },
    /// One backfill with every tick and its run.
    Show {
        backfill_id: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlags,
    },
    /// Cancel a backfill: no tick starts any more, its runs going are cancelled.
    Cancel {
        backfill_id: String,
        #[command(flatten)]
        server: ServerFlags,
    },
}

pub async fn backfill(config: &Config, args: BackfillArgs, out: &mut Out) -> Result<u8> {
    let client = ApiClient::required(config, &args.server)?;
    let mut body = json!({
        "from": args.from,
        "to": args.to,
        "rerun": args.rerun,
        "dry_run": args.dry_run,
        "order": if args.newest_first { "newest_first" } else { "oldest_first" },
    });
    if let Some(n) = args.concurrency {
        body["concurrency"] = json!(n);
    }
    let path = format!("/v1/workflows/{}/backfills", encode(&args.workflow));
    let (_, v): (_, Value) = client
        .json(
            Method::POST,
            &path,
            Some(("application/json", body.to_string())),
            &[],
        )
        .await?;
    if args.json && !args.follow {
        serde_json::to_writer_pretty(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(EXIT_COMPLETE);
    }
    if args.dry_run {
        print_dry_run(&v, out)?;
        return Ok(EXIT_COMPLETE);
    }
    let id = v["backfill_id"].as_str().unwrap_or_default().to_string();
    if !args.follow {
        writeln!(out, "{id}: {}", summary(&v))?;
        return Ok(EXIT_COMPLETE);
    }
    let done = follow(&client, &id).await?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &done)?;
        writeln!(out)?;
    } else {
        print_one(&done, out)?;
    }
    Ok(exit_code(&done))
}

/// Polls the backfill, a line on stderr whenever it changes, until it ends.
async fn follow(client: &ApiClient, id: &str) -> Result<Value> {
    let path = format!("/v1/backfills/{}", encode(id));
    let mut last = String::new();
    loop {
        let (_, v): (_, Value) = client.json(Method::GET, &path, None, &[]).await?;
        let line = format!("{id}: {}", summary(&v));
        if line != last {
            say(&line);
            last = line;
        }
        if v["status"] != "running" {
            return Ok(v);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

pub async fn backfills(config: &Config, command: BackfillsCommand, out: &mut Out) -> Result<u8> {
    match command {
        BackfillsCommand::List { json, server } => {
            let client = ApiClient::required(config, &server)?;
            let (_, v): (_, Value) = client.json(Method::GET, "/v1/backfills", None, &[]).await?;
            let all = v["backfills"].as_array().cloned().unwrap_or_default();
            if json {
                serde_json::to_writer_pretty(&mut *out, &all)?;
                writeln!(out)?;
                return Ok(EXIT_COMPLETE);
            }
            writeln!(
                out,
                "{:<22} {:<24} {:<22} {:<22} state",
                "backfill", "workflow", "from", "to"
            )?;
            for b in &all {
                writeln!(
                    out,
                    "{:<22} {:<24} {:<22} {:<22} {}",
                    text(&b["backfill_id"]),
                    text(&b["workflow"]),
                    text(&b["from"]),
                    text(&b["to"]),
                    summary(b)
                )?;
            }
        }
        BackfillsCommand::Show {
            backfill_id,
            json,
            server,
        } => {
            let client = ApiClient::required(config, &server)?;
            let path = format!("/v1/backfills/{}", encode(&backfill_id));
            let (_, v): (_, Value) = client.json(Method::GET, &path, None, &[]).await?;
            if json {
                serde_json::to_writer_pretty(&mut *out, &v)?;
                writeln!(out)?;
            } else {
                print_one(&v, out)?;
            }
        }
        BackfillsCommand::Cancel {
            backfill_id,
            server,
        } => {
            let client = ApiClient::required(config, &server)?;
            let path = format!("/v1/backfills/{}/cancel", encode(&backfill_id));
            let (_, v): (_, Value) = client.json(Method::POST, &path, None, &[]).await?;
            writeln!(out, "{backfill_id}: {}", summary(&v))?;
        }
    }
    Ok(EXIT_COMPLETE)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("-")
}

/// "running: 3 of 10 ticks done (2 running, 1 skipped, 4 pending)".
fn summary(b: &Value) -> String {
    let c = &b["counts"];
    let n = |k: &str| c[k].as_u64().unwrap_or(0);
    let done = n("succeeded") + n("partial") + n("failed") + n("skipped") + n("cancelled");
    let mut parts = Vec::new();
    for key in [
        "running",
        "succeeded",
        "partial",
        "failed",
        "skipped",
        "cancelled",
        "pending",
    ] {
        if n(key) > 0 {
            parts.push(format!("{} {key}", n(key)));
        }
    }
    format!(
        "{}: {done} of {} ticks done ({})",
        text(&b["status"]),
        n("ticks"),
        parts.join(", ")
    )
}

fn print_dry_run(v: &Value, out: &mut Out) -> Result<()> {
    let ticks = v["ticks"].as_array().cloned().unwrap_or_default();
    writeln!(
        out,
        "{} ticks of `{}` (dry run: nothing runs)",
        ticks.len(),
        text(&v["workflow"])
    )?;
    for t in &ticks {
        let note = match t["complete_run"].as_str() {
            Some(run) => format!("skipped: {run} is complete (--rerun runs it again)"),
            None => "runs".into(),
        };
        writeln!(
            out,
            "  {}  {:<27} {}",
            text(&t["scheduled_for"]),
            text(&t["local"]),
            note
        )?;
    }
    Ok(())
}

fn print_one(v: &Value, out: &mut Out) -> Result<()> {
    writeln!(
        out,
        "backfill {} of `{}` from {} to {} ({}, {} at a time{})",
        text(&v["backfill_id"]),
        text(&v["workflow"]),
        text(&v["from"]),
        text(&v["to"]),
        text(&v["order"]).replace('_', " "),
        v["concurrency"],
        if v["rerun"] == true { ", rerun" } else { "" }
    )?;
    writeln!(out, "{}", summary(v))?;
    for t in v["ticks"].as_array().into_iter().flatten() {
        let what = match (t["run_id"].as_str(), t["reason"].as_str()) {
            (Some(run), _) => format!("{run} {}", t["run_status"].as_str().unwrap_or("queued")),
            (None, Some(reason)) => reason.to_string(),
            (None, None) => String::new(),
        };
        writeln!(
            out,
            "  {}  {:<9} {what}",
            text(&t["scheduled_for"]),
            text(&t["state"])
        )?;
    }
    Ok(())
}

/// A followed backfill's exit code by its outcome.
fn exit_code(b: &Value) -> u8 {
    match text(&b["status"]) {
        "succeeded" => EXIT_COMPLETE,
        "partial" => EXIT_PARTIAL,
        "cancelled" => EXIT_CANCELLED,
        _ => EXIT_ERROR,
    }
}
