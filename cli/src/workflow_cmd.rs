//! `dragnet validate`, `dragnet run` and `dragnet schema`: workflow files
//! checked with located diagnostics, run with live progress and a summary.

use std::collections::HashMap;
use std::io::Write;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use dragnet_core::budget::Limits;
use dragnet_engine::run::{self, Fanout, RunOptions, RunRecord, RunStatus};
use dragnet_engine::workflow;

use crate::bounds::LimitFlags;
use crate::config::{Config, Lifetime};
use crate::failure::CliError;
use crate::out::{say, Out};
use crate::run_display::{print_summary, RunDisplay};
use crate::services::Services;
use crate::{EXIT_COMPLETE, EXIT_ERROR, EXIT_PARTIAL};

/// Exit code of a run stopped by Ctrl-C.
pub const EXIT_CANCELLED: u8 = 130;

#[derive(Args)]
pub struct ValidateArgs {
    /// Workflow files (YAML or JSON).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn validate(args: ValidateArgs, out: &mut Out) -> Result<u8> {
    let mut failed = false;
    for file in &args.files {
        match workflow::load(file) {
            Ok(wf) => writeln!(out, "{}: ok ({} steps)", file.display(), wf.steps.len())?,
            Err(diagnostics) => {
                failed = true;
                say(&diagnostics.to_string());
            }
        }
    }
    Ok(if failed { EXIT_ERROR } else { EXIT_COMPLETE })
}

pub fn schema(out: &mut Out) -> Result<u8> {
    serde_json::to_writer_pretty(&mut *out, &workflow::json_schema())?;
    writeln!(out)?;
    Ok(EXIT_COMPLETE)
}

#[derive(Args)]
pub struct RunArgs {
    /// The workflow file.
    file: PathBuf,
    /// An input as name=value (repeatable), typed by the workflow's inputs.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    inputs: Vec<String>,
    /// Replace a provider's base URL: provider=URL (repeatable).
    #[arg(long = "base-url", value_name = "PROVIDER=URL")]
    base_urls: Vec<String>,
    /// Steps running at once, at least 1 (default: the configuration's, else 4).
    #[arg(long, value_name = "N")]
    concurrency: Option<NonZeroUsize>,
    /// Bounds of every tool call of the run.
    #[command(flatten)]
    limits: LimitFlags,
    /// Print the run record as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Also write the run record (JSON) to this file.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Bypass cached walks and replace them with fresh ones.
    #[arg(long)]
    refresh: bool,
    /// Mark the run as an experiment: it never reads the cache.
    #[arg(long)]
    experiment: bool,
}

pub async fn run_file(config: &Config, args: RunArgs, out: &mut Out) -> Result<u8> {
    // The store is opened while the file compiles (each takes a few
    // milliseconds); a file or argument that is refused stops the opening.
    let opening = tokio::spawn({
        let config = config.clone();
        async move { Services::open(&config, Lifetime::OneShot).await }
    });
    let ReadRun {
        wf,
        inputs,
        limits,
        base_urls,
    } = match read_run(config, &args) {
        Ok(read) => read,
        Err(e) => {
            opening.abort();
            return Err(e);
        }
    };
    let services = opening.await.context("opening the store")??;
    let options = RunOptions {
        inputs,
        concurrency: args.concurrency.unwrap_or(config.concurrency).get(),
        limits,
        base_urls,
        cache: services.run_cache(args.experiment, args.refresh),
        clock: services.clock.clone(),
        // `mcp: {server: NAME}` resolves as on a server; a local run also
        // starts the `mcp.command` its file names.
        mcp_servers: config.server.mcp_servers.clone(),
        ..RunOptions::default()
    };
    let record = run_with_display(wf, options, &services).await;
    services.sweep_once().await;
    services.shutdown().await;
    let record = record?;
    if let Some(path) = &args.output {
        write_record(path, &record)?;
    }
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &record)?;
        writeln!(out)?;
    } else {
        print_summary(&record, out)?;
    }
    Ok(exit_code(&record))
}

/// What `dragnet run` reads before it runs: the compiled file, its inputs,
/// the bounds and the base URLs named on the command line.
struct ReadRun {
    wf: Arc<workflow::model::Workflow>,
    inputs: serde_json::Map<String, serde_json::Value>,
    limits: Limits,
    base_urls: HashMap<String, String>,
}

fn read_run(config: &Config, args: &RunArgs) -> Result<ReadRun> {
    let limits = args.limits.apply(&config.limits)?;
    let wf = Arc::new(workflow::load(&args.file)?);
    let inputs = run::parse_input_pairs(&wf, &args.inputs)?;
    let mut base_urls = HashMap::new();
    for pair in &args.base_urls {
        let Some((name, url)) = pair.split_once('=') else {
            return Err(CliError::argument_error(
                "--base-url",
                format!("expects provider=URL, got `{pair}`"),
            )
            .into());
        };
        base_urls.insert(name.to_string(), url.to_string());
    }
    Ok(ReadRun {
        wf,
        inputs,
        limits,
        base_urls,
    })
}

/// Runs with a live display, the record written as it progresses, and
/// Ctrl-C wired to cancellation.
pub async fn run_with_display(
    wf: Arc<workflow::model::Workflow>,
    mut options: RunOptions,
    services: &Services,
) -> Result<RunRecord> {
    let cancel = services.cancel.child_token();
    options.cancel = cancel.clone();
    options.watermarks = Some(Arc::new(services.watermarks()));
    let watcher = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                say("cancelling: waiting for running steps to stop…");
                cancel.cancel();
            }
        }
    });
    let display = Arc::new(RunDisplay::new(&wf));
    let store = services.store_observer();
    let observers = Fanout(vec![display.clone(), store.clone()]);
    let record = run::run(wf, options, Arc::new(observers)).await;
    watcher.abort();
    display.finish();
    store.close().await;
    Ok(record?)
}

pub fn exit_code(record: &RunRecord) -> u8 {
    match record.status {
        RunStatus::Succeeded => EXIT_COMPLETE,
        RunStatus::Partial => EXIT_PARTIAL,
        RunStatus::Cancelled => EXIT_CANCELLED,
        RunStatus::Failed | RunStatus::Queued | RunStatus::Running | RunStatus::Interrupted => {
            EXIT_ERROR
        }
    }
}

fn write_record(path: &Path, record: &RunRecord) -> Result<()> {
    let text = serde_json::to_string_pretty(record)?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
