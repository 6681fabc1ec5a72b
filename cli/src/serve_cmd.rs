//! `dragnet serve`: the HTTP API and the runs it starts, in this process,
//! on the configured store; and `dragnet worker`, the same without the API. The first Ctrl-C or SIGTERM stops taking work
//! and lets running runs finish within the grace period (the rest are
//! recorded as interrupted); a second one exits at once.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use dragnet_api::{AppState, ServerConfig};
use dragnet_runner::{Launcher, RunnerConfig};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, Lifetime};
use crate::failure::CliError;
use crate::out::{say, Out};
use crate::services::Services;
use crate::workflow_cmd::EXIT_CANCELLED;
use crate::EXIT_COMPLETE;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on, host:port (port 0 picks a free one). Default:
    /// the configuration's `[server] bind`, else 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR")]
    bind: Option<String>,
    /// Folder submitted workflows' `openapi:` paths are read from.
    #[arg(long, value_name = "DIR")]
    workflows_dir: Option<PathBuf>,
}

pub async fn serve(config: &Config, args: ServeArgs, out: &mut Out) -> Result<u8> {
    let bind = args.bind.unwrap_or_else(|| config.server.bind.clone());
    let listener = TcpListener::bind(&bind)
        .await
        .with_context(|| format!("cannot listen on {bind}"))?;
    let addr = listener.local_addr().context("reading the bound address")?;
    let services = Services::open(config, Lifetime::Serving).await?;
    // SQLite stays single-process: a second server on the file is refused.
    let _serving = services.db.serving_lock()?;
    services.start_sweeper();
    let server_config = ServerConfig {
        runner: runner_config(config, args.workflows_dir),
        metrics_token: config.server.metrics_token.clone(),
        ..ServerConfig::default()
    };
    let state = AppState::new(
        services.db.clone(),
        server_config,
        services.clock.clone(),
        services.tracker.clone(),
        services.cancel.clone(),
    );
    writeln!(
        out,
        "dragnet serve: listening on http://{addr} (store: {})",
        services.db.backend()
    )?;
    out.flush()?;
    services.tracker.spawn(signals(
        "serve",
        state.stopping().clone(),
        services.cancel.clone(),
    ));
    let served = dragnet_api::serve(listener, state).await;
    services.shutdown().await;
    served.context("serving the API")?;
    say("dragnet serve: stopped");
    Ok(EXIT_COMPLETE)
}

/// How runs are run, from the configuration (`serve` and `worker`).
fn runner_config(config: &Config, workflows_dir: Option<PathBuf>) -> RunnerConfig {
    RunnerConfig {
        workflows_dir: workflows_dir.or_else(|| config.server.workflows_dir.clone()),
        limits: config.limits.clone(),
        step_concurrency: config.concurrency.get(),
        cache_mode: config.cache_mode,
        shutdown_grace: config.server.shutdown_grace,
        max_running_runs: config.server.max_running_runs,
        secrets: secrets_sealer(config),
        lease: config.server.lease,
        upstream_hosts: config.server.upstream_hosts.clone(),
        mcp_servers: config.server.mcp_servers.clone(),
        ..RunnerConfig::default()
    }
}

/// The sealer of teams' secrets, when `DRAGNET_SECRETS_KEY` is set (its
/// length was checked with the configuration).
pub fn secrets_sealer(config: &Config) -> Option<std::sync::Arc<dragnet_http::Sealer>> {
    let key = config.server.secrets_key.as_ref()?;
    dragnet_http::Sealer::new(key.expose().as_bytes())
        .ok()
        .map(std::sync::Arc::new)
}

#[derive(Args)]
pub struct WorkerArgs {
    /// Folder submitted workflows' `openapi:` paths are read from.
    #[arg(long, value_name = "DIR")]
    workflows_dir: Option<PathBuf>,
}

/// `dragnet worker`: a server's work without its API — claiming runs
/// (queued ones nobody started, and ones whose lease expired, which it
/// resumes) and firing schedules — until Ctrl-C or SIGTERM, which stop it
/// as they stop `serve`.
pub async fn worker(config: &Config, args: WorkerArgs, out: &mut Out) -> Result<u8> {
    if config.server.max_running_runs == 0 {
        return Err(CliError::argument_error(
            "max_running_runs",
            "a worker with no slots would claim nothing: give it at least 1 (0 is for a `dragnet serve` that leaves runs to workers)",
        )
        .into());
    }
    let services = Services::open(config, Lifetime::Serving).await?;
    let _serving = services.db.serving_lock()?;
    services.start_sweeper();
    let launcher = Launcher::new(
        services.db.clone(),
        runner_config(config, args.workflows_dir),
        services.clock.clone(),
        services.tracker.clone(),
        services.cancel.clone(),
    );
    writeln!(
        out,
        "dragnet worker: claiming runs and firing schedules (store: {})",
        services.db.backend()
    )?;
    out.flush()?;
    services.tracker.spawn(signals(
        "worker",
        launcher.stopping().clone(),
        services.cancel.clone(),
    ));
    dragnet_runner::work(launcher).await;
    services.shutdown().await;
    say("dragnet worker: stopped");
    Ok(EXIT_COMPLETE)
}

/// The first signal stops taking work; a second exits at once.
async fn signals(name: &'static str, stopping: CancellationToken, root: CancellationToken) {
    tokio::select! {
        () = signal() => {}
        () = root.cancelled() => return,
    }
    say(&format!(
        "dragnet {name}: stopping — running runs may finish, the rest are handed back (Ctrl-C again to exit now)"
    ));
    stopping.cancel();
    tokio::select! {
        () = signal() => {
            say(&format!("dragnet {name}: exiting now"));
            std::process::exit(i32::from(EXIT_CANCELLED));
        }
        () = root.cancelled() => {}
    }
}

/// Ctrl-C, or SIGTERM on Unix.
async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
