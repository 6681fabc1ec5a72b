//! `dragnet migrate`, `dragnet runs …` and `dragnet cache …`: the store of
//! run records and cached walks, on SQLite (default) or PostgreSQL.

use std::io::Write;

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use dragnet_engine::run::{IncrementalReport, RunLog, TriggerKind};

use crate::client::{ApiClient, ServerFlags};
use crate::config::{Config, Lifetime};
use crate::out::Out;
use crate::services::Services;
use crate::EXIT_COMPLETE;

pub async fn migrate(config: &Config, out: &mut Out) -> Result<u8> {
    let services = Services::open(config, Lifetime::OneShot).await?;
    let said = writeln!(out, "migrations applied ({})", services.db.backend());
    services.shutdown().await;
    said?;
    Ok(EXIT_COMPLETE)
}

#[derive(Subcommand)]
pub enum RunsCommand {
    /// The latest runs, newest first.
    List {
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Only runs started this way: manual, api, schedule or rerun.
        #[arg(long, value_name = "KIND", value_parser = trigger_kind)]
        trigger: Option<TriggerKind>,
        #[arg(long)]
        json: bool,
        /// Read a server's runs (of your team) instead of the local store.
        #[command(flatten)]
        server: ServerFlags,
    },
    /// One run with every step: status, timing, verdicts, errors, skip reasons.
    Show {
        run_id: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlags,
    },
}

/// `--trigger`: a kind by name (`cron` is `schedule`).
fn trigger_kind(text: &str) -> std::result::Result<TriggerKind, String> {
    TriggerKind::parse(text).ok_or_else(|| {
        let kinds: Vec<&str> = TriggerKind::ALL.iter().map(|k| k.as_str()).collect();
        format!("not a trigger kind; give one of {}", kinds.join(", "))
    })
}

pub async fn runs(config: &Config, command: RunsCommand, out: &mut Out) -> Result<u8> {
    let flags = match &command {
        RunsCommand::List { server, .. } | RunsCommand::Show { server, .. } => server.clone(),
    };
    if let Some(client) = ApiClient::from(config, &flags)? {
        let place = client.base().to_string();
        return runs_inner(&client, &place, command, out).await;
    }
    let services = Services::open(config, Lifetime::OneShot).await?;
    let outcome = runs_inner(&services.db.runs(), services.db.backend(), command, out).await;
    services.shutdown().await;
    outcome
}

/// Runs are read through the engine's port, whatever keeps them: a local
/// store or a server.
async fn runs_inner(
    log: &dyn RunLog,
    place: &str,
    command: RunsCommand,
    out: &mut Out,
) -> Result<u8> {
    match command {
        RunsCommand::List {
            limit,
            trigger,
            json,
            ..
        } => {
            let list = log.list_triggered(limit, trigger).await?;
            if json {
                let rows: Vec<serde_json::Value> = list
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "run_id": r.run_id, "workflow": r.workflow, "status": r.status,
                            "trigger": r.trigger, "started_at": r.started_at, "duration_ms": r.duration_ms,
                            "steps": r.steps, "failed": r.failed, "skipped": r.skipped,
                        })
                    })
                    .collect();
                serde_json::to_writer_pretty(&mut *out, &rows)?;
                writeln!(out)?;
            } else {
                writeln!(
                    out,
                    "{:<40} {:<24} {:<12} {:<9} {:>6} {:>9}  started",
                    "run", "workflow", "status", "trigger", "steps", "ms"
                )?;
                for r in list {
                    let how = r.trigger.map_or("-", TriggerKind::as_str);
                    writeln!(
                        out,
                        "{:<40} {:<24} {:<12} {:<9} {:>6} {:>9}  {}",
                        r.run_id, r.workflow, r.status, how, r.steps, r.duration_ms, r.started_at
                    )?;
                }
            }
        }
        RunsCommand::Show { run_id, json, .. } => {
            let Some(run) = log.get(&run_id).await? else {
                bail!("no run `{run_id}` in {place}");
            };
            if json {
                serde_json::to_writer_pretty(&mut *out, &run)?;
                writeln!(out)?;
            } else {
                print_run(&serde_json::to_value(&run)?, out)?;
            }
        }
    }
    Ok(EXIT_COMPLETE)
}

/// What started the run, in a line: "trigger: schedule sch_1 for
/// 2026-12-02T04:00:00Z, fired 2026-12-02T04:00:01Z", "trigger: api by
/// token:tok_1"; "trigger: not recorded" for runs from before it was kept.
fn trigger_line(trigger: Option<&serde_json::Value>) -> String {
    let Some(t) = trigger.filter(|t| t.is_object()) else {
        return "trigger: not recorded".into();
    };
    let text = |k: &str| t.get(k).and_then(|v| v.as_str());
    let mut line = format!("trigger: {}", text("kind").unwrap_or("-"));
    if let Some(id) = text("schedule_id") {
        line.push_str(&format!(" {id}"));
    }
    if let Some(at) = text("scheduled_for") {
        line.push_str(&format!(" for {at}"));
    }
    if let Some(at) = text("fired_at") {
        line.push_str(&format!(", fired {at}"));
    }
    if let Some(who) = text("started_by") {
        line.push_str(&format!(" by {who}"));
    }
    line
}

fn print_run(run: &serde_json::Value, out: &mut Out) -> std::io::Result<()> {
    let s = |v: &serde_json::Value, k: &str| {
        v.get(k).and_then(|x| x.as_str()).unwrap_or("-").to_string()
    };
    writeln!(
        out,
        "run {} of `{}`: {}",
        s(run, "run_id"),
        s(run, "workflow"),
        s(run, "status")
    )?;
    writeln!(
        out,
        "started {}, finished {}",
        s(run, "started_at"),
        s(run, "finished_at")
    )?;
    writeln!(out, "{}", trigger_line(run.get("trigger")))?;
    for step in run
        .get("steps")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        let verdict = step
            .get("verdict")
            .map(|v| {
                format!(
                    " — {} items, {}, {} requests",
                    v["itemCount"],
                    if v["complete"] == true {
                        "complete"
                    } else {
                        "PARTIAL"
                    },
                    v["requests"]
                )
            })
            .unwrap_or_default();
        writeln!(
            out,
            "  {:<20} {:<12}{verdict}",
            s(step, "id"),
            s(step, "status")
        )?;
        if let Some(reason) = step.get("reason").and_then(|r| r.as_str()) {
            writeln!(out, "    {reason}")?;
        }
        let incremental = step.get("verdict").and_then(|v| {
            let report: IncrementalReport =
                serde_json::from_value(v.get("incremental")?.clone()).ok()?;
            Some(report.describe(v["complete"] == true))
        });
        if let Some(line) = incremental {
            writeln!(out, "    {line}")?;
        }
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum CacheCommand {
    /// Every cached walk: scope, tool, items, size, when it expires.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Delete cached walks: all, or those of one tool (e.g. shop.listOrders).
    Purge(PurgeArgs),
}

#[derive(Args)]
pub struct PurgeArgs {
    #[arg(long)]
    tool: Option<String>,
}

pub async fn cache(config: &Config, command: CacheCommand, out: &mut Out) -> Result<u8> {
    let services = Services::open(config, Lifetime::OneShot).await?;
    let outcome = cache_inner(&services, command, out).await;
    services.shutdown().await;
    outcome
}

async fn cache_inner(services: &Services, command: CacheCommand, out: &mut Out) -> Result<u8> {
    match command {
        CacheCommand::List { json } => {
            let list = services.db.cache().cache_list().await?;
            if json {
                let rows: Vec<serde_json::Value> = list
                    .iter()
                    .map(|e| {
                        serde_json::json!({"scope": e.scope, "tool": e.tool, "key": e.key, "items": e.items,
                            "storedBytes": e.stored_bytes, "cachedAt": e.cached_at, "expiresAt": e.expires_at})
                    })
                    .collect();
                serde_json::to_writer_pretty(&mut *out, &rows)?;
                writeln!(out)?;
            } else {
                writeln!(
                    out,
                    "{:<24} {:<28} {:>7} {:>10}  expires",
                    "scope", "tool", "items", "bytes"
                )?;
                for e in list {
                    writeln!(
                        out,
                        "{:<24} {:<28} {:>7} {:>10}  {}",
                        e.scope, e.tool, e.items, e.stored_bytes, e.expires_at
                    )?;
                }
            }
        }
        CacheCommand::Purge(args) => {
            let n = services
                .db
                .cache()
                .cache_purge(args.tool.as_deref())
                .await?;
            writeln!(out, "purged {n} cached walk(s)")?;
        }
    }
    Ok(EXIT_COMPLETE)
}
