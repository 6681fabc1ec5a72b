//! The `dragnet` command line, the composition root: it reads the one
//! configuration ([`config`]) and opens the services a command needs
//! ([`services`]: the store, the cache, the clock), then hands them to the
//! crates that do the work.
//!
//! Layout, by command:
//! - tools and calls: [`tools_cmd`], [`call_cmd`] (with [`bounds`]:
//!   limits from flags; [`output`]: results on stdout);
//! - workflows: [`workflow_cmd`] (validate, run, schema; the live display
//!   in [`run_display`] and [`progress_line`]; the summary in [`report`]);
//!   [`demo`] and [`shop_cmd`] (the demo shop);
//! - a server and its clients: [`serve_cmd`] (`serve`, `worker`),
//!   [`remote_cmd`] and [`client`] (workflows, trigger, runs over HTTP),
//!   [`team_cmd`] (teams, tokens), [`secrets_cmd`], [`db_cmd`] (migrate,
//!   runs and cache on a store), [`schedules_cmd`], [`backfill_cmd`],
//!   [`state_cmd`]
//!   (incremental steps' watermarks, local or a server's);
//! - agents: [`mcp_cmd`] (`dragnet mcp`, `agent-token`);
//! - the edges: [`failure`] (errors and exit codes), [`out`] (where output
//!   goes), [`telemetry`] (logs and traces).
#![forbid(unsafe_code)]
// The argument structs' doc comments are the command line's help text
// (clap), written for a terminal: `[limits]`, `<path>` are words there,
// not links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod backfill_cmd;
mod bounds;
mod call_cmd;
mod client;
mod config;
mod db_cmd;
mod demo;
mod failure;
mod mcp_cmd;
mod out;
mod output;
mod progress_line;
mod remote_cmd;
mod report;
mod run_display;
mod schedules_cmd;
mod secrets_cmd;
mod serve_cmd;
mod services;
mod shop_cmd;
mod state_cmd;
mod team_cmd;
mod telemetry;
mod tools_cmd;
mod workflow_cmd;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code of a complete result.
pub const EXIT_COMPLETE: u8 = 0;
/// Exit code of an error: bad input, unknown tool, upstream failure.
pub const EXIT_ERROR: u8 = 1;
/// Exit code of a result that is partial: some rows were not fetched.
pub const EXIT_PARTIAL: u8 = 3;

#[derive(Parser)]
#[command(
    name = "dragnet",
    version,
    about = "Walk every page of large business APIs, and say whether the result is complete.",
    after_help = "Exit codes: 0 complete (every walk complete, every step succeeded); 3 partial (some walk stopped short: a bound, a repeated page, an upstream error mid-walk…); 1 error or a failed step; 2 usage error; 130 run cancelled (Ctrl-C)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    config: config::ConfigFlags,
    /// Log lines as `text` (coloured only on a terminal, never with NO_COLOR) or `json`
    /// (one object per line, for log shippers). Also DRAGNET_LOG_FORMAT or `[log] format`.
    #[arg(long, global = true, value_name = "FORMAT")]
    log_format: Option<telemetry::LogFormat>,
}

#[derive(Subcommand)]
enum Command {
    /// List the tools of an OpenAPI document and how each pages.
    Tools(tools_cmd::ToolsArgs),
    /// Call one tool, walking every page if asked, and print the result with its verdict.
    Call(Box<call_cmd::CallArgs>),
    /// Serve the demo shop API (also the test upstream).
    Shop(shop_cmd::ShopArgs),
    /// Check workflow files; prints file:line:col diagnostics.
    Validate(workflow_cmd::ValidateArgs),
    /// Run a workflow with live progress, then print a summary.
    Run(Box<workflow_cmd::RunArgs>),
    /// Print the JSON Schema of the workflow file format.
    Schema,
    /// Run the demo workflows against the in-process demo shop (no network).
    Demo,
    /// Apply the database migrations (also done by every command that needs them).
    Migrate,
    /// Run records: list or show.
    #[command(subcommand)]
    Runs(db_cmd::RunsCommand),
    /// The cache of complete walks: list or purge.
    #[command(subcommand)]
    Cache(db_cmd::CacheCommand),
    /// Serve the HTTP API: teams submit workflows, start runs and follow them.
    Serve(serve_cmd::ServeArgs),
    /// Claim and run a server's runs (and fire its schedules) without serving the API.
    Worker(serve_cmd::WorkerArgs),
    /// The server's teams: create or list.
    #[command(subcommand)]
    Teams(team_cmd::TeamsCommand),
    /// API tokens of teams: create (printed once), revoke or list.
    #[command(subcommand)]
    Tokens(team_cmd::TokensCommand),
    /// A team's secrets on the server (what its workflows' credentials name): set from stdin, list, delete.
    #[command(subcommand)]
    Secrets(secrets_cmd::SecretsCommand),
    /// A server's workflows: push files, list them.
    #[command(subcommand)]
    Workflows(remote_cmd::WorkflowsCommand),
    /// Start a run of a server's workflow; --follow shows it live.
    Trigger(Box<remote_cmd::TriggerArgs>),
    /// A server's schedules of your team: list, pause with a reason, resume.
    #[command(subcommand)]
    Schedules(schedules_cmd::SchedulesCommand),
    /// Run the ticks of a server's workflow's schedules in a window (or list them with --dry-run).
    Backfill(Box<backfill_cmd::BackfillArgs>),
    /// A server's backfills of your team: list, show, cancel.
    #[command(subcommand)]
    Backfills(backfill_cmd::BackfillsCommand),
    /// Incremental steps' watermarks (local, or a server's with --server): list, show, reset.
    #[command(subcommand)]
    State(state_cmd::StateCommand),
    /// Serve agents' tools over MCP (stdio or streamable HTTP), with the loop layer.
    Mcp(mcp_cmd::McpArgs),
    /// Sign a caller's token for `dragnet mcp --http`.
    AgentToken(mcp_cmd::AgentTokenArgs),
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    // `dragnet mcp --config agent.yaml`: that file is the agent
    // configuration, not the TOML settings.
    let agent_file = match &cli.command {
        Command::Mcp(_) | Command::AgentToken(_) => cli
            .config
            .config
            .take_if(|path| mcp_cmd::is_agent_file(path)),
        _ => None,
    };
    let env = |var: &str| std::env::var(var).ok();
    let telemetry = telemetry::init(
        log_filter(&env),
        log_format(cli.log_format, &cli.config, &env),
        telemetry::colour(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            env("NO_COLOR").as_deref(),
        ),
        env("DRAGNET_OTLP_ENDPOINT").filter(|v| !v.trim().is_empty()),
    );
    let runtime = match cli.command.runtime().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            out::say(&format!("error: cannot start the async runtime: {e}"));
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let as_json = cli.command.wants_json();
    let mut out = out::Out::stdout();
    let result = runtime.block_on(async {
        let out = &mut out;
        // The one place settings are read from the environment.
        let config = || config::Config::load(&cli.config, &|var| std::env::var(var).ok());
        match cli.command {
            Command::Tools(args) => tools_cmd::run(args, out),
            Command::Call(args) => call_cmd::run(&config()?, *args, out).await,
            Command::Shop(args) => shop_cmd::run(args).await,
            Command::Validate(args) => workflow_cmd::validate(args, out),
            Command::Run(args) => workflow_cmd::run_file(&config()?, *args, out).await,
            Command::Schema => workflow_cmd::schema(out),
            Command::Demo => demo::run(&config()?, out).await,
            Command::Migrate => db_cmd::migrate(&config()?, out).await,
            Command::Runs(c) => db_cmd::runs(&config()?, c, out).await,
            Command::Cache(c) => db_cmd::cache(&config()?, c, out).await,
            Command::Serve(args) => serve_cmd::serve(&config()?, args, out).await,
            Command::Worker(args) => serve_cmd::worker(&config()?, args, out).await,
            Command::Teams(c) => team_cmd::teams(&config()?, c, out).await,
            Command::Tokens(c) => team_cmd::tokens(&config()?, c, out).await,
            Command::Secrets(c) => secrets_cmd::secrets(&config()?, c, out).await,
            Command::Workflows(c) => remote_cmd::workflows(&config()?, c, out).await,
            Command::Trigger(args) => remote_cmd::trigger(&config()?, *args, out).await,
            Command::Schedules(c) => schedules_cmd::schedules(&config()?, c, out).await,
            Command::State(c) => state_cmd::state(&config()?, c, out).await,
            Command::Backfill(args) => backfill_cmd::backfill(&config()?, *args, out).await,
            Command::Backfills(c) => backfill_cmd::backfills(&config()?, c, out).await,
            Command::Mcp(args) => mcp_cmd::mcp(&config()?, args, &agent_file).await,
            Command::AgentToken(args) => mcp_cmd::agent_token(args, &agent_file, out).await,
        }
    });
    let result = result.and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    drop(runtime);
    telemetry.finish();
    match result {
        Ok(code) => ExitCode::from(code),
        // The reader went away (`| head`): nothing more to say, as ripgrep does.
        Err(_) if out.is_broken() => ExitCode::from(EXIT_COMPLETE),
        Err(e) => {
            report::report(&e, as_json, &mut out);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

impl Command {
    /// The runtime the command runs on. `mcp --stdio` serves one client
    /// whose messages come one after another: on one thread, no message
    /// waits for another thread to wake up and carry it on (four futex
    /// calls a passed-through call before; `docs/PERFORMANCE.md`, P9).
    /// Everything else may have work for every core (fan-outs, many runs,
    /// many callers).
    fn runtime(&self) -> tokio::runtime::Builder {
        match self {
            Command::Mcp(args) if args.is_stdio() => tokio::runtime::Builder::new_current_thread(),
            _ => tokio::runtime::Builder::new_multi_thread(),
        }
    }

    /// Whether the command was asked for JSON, so its errors are JSON too.
    fn wants_json(&self) -> bool {
        match self {
            Command::Tools(a) => a.json,
            Command::Call(a) => a.json,
            Command::Run(a) => a.json,
            Command::Backfill(a) => a.json,
            Command::Runs(db_cmd::RunsCommand::List { json, .. })
            | Command::Runs(db_cmd::RunsCommand::Show { json, .. })
            | Command::Workflows(remote_cmd::WorkflowsCommand::List { json, .. })
            | Command::Schedules(schedules_cmd::SchedulesCommand::List { json, .. })
            | Command::State(state_cmd::StateCommand::List { json, .. })
            | Command::Backfills(backfill_cmd::BackfillsCommand::List { json, .. })
            | Command::Backfills(backfill_cmd::BackfillsCommand::Show { json, .. })
            | Command::State(state_cmd::StateCommand::Show { json, .. })
            | Command::Cache(db_cmd::CacheCommand::List { json }) => *json,
            Command::Cache(db_cmd::CacheCommand::Purge(_))
            | Command::Shop(_)
            | Command::Validate(_)
            | Command::Schema
            | Command::Demo
            | Command::Migrate
            | Command::Serve(_)
            | Command::Worker(_)
            | Command::Teams(_)
            | Command::Tokens(_)
            | Command::Secrets(_)
            | Command::Workflows(remote_cmd::WorkflowsCommand::Push { .. })
            | Command::Trigger(_)
            | Command::Schedules(_)
            | Command::State(_)
            | Command::Backfills(_)
            | Command::Mcp(_)
            | Command::AgentToken(_) => false,
        }
    }
}

/// The log filter: `DRAGNET_LOG`, else `RUST_LOG`, else warnings only. A
/// filter that does not parse is said once and replaced by the default.
fn log_filter(env: &dyn Fn(&str) -> Option<String>) -> tracing_subscriber::EnvFilter {
    use tracing_subscriber::EnvFilter;
    let chosen = ["DRAGNET_LOG", "RUST_LOG"]
        .into_iter()
        .find_map(|var| env(var).filter(|v| !v.trim().is_empty()).map(|v| (var, v)));
    let filter = match chosen {
        Some((var, text)) => EnvFilter::try_new(&text).unwrap_or_else(|e| {
            out::say(&format!(
                "warning: {var}=`{text}` is not a log filter ({e}); logging warnings only"
            ));
            EnvFilter::new("warn")
        }),
        None => EnvFilter::new("warn"),
    };
    // rmcp logs every message it receives whole at debug, and tool
    // arguments may carry credentials (`connect_toolkit`): never below info.
    let verbose = filter
        .max_level_hint()
        .is_none_or(|level| level > tracing_subscriber::filter::LevelFilter::INFO);
    match (verbose, RMCP_MESSAGES.parse()) {
        (true, Ok(directive)) => filter.add_directive(directive),
        _ => filter,
    }
}

/// The log format: the flag, else `DRAGNET_LOG_FORMAT`, else the
/// configuration file's `[log] format`, else text. A value that is neither
/// is said once (the file's is reported, located, when the command loads
/// its configuration) and text is used.
fn log_format(
    flag: Option<telemetry::LogFormat>,
    flags: &config::ConfigFlags,
    env: &dyn Fn(&str) -> Option<String>,
) -> telemetry::LogFormat {
    if let Some(format) = flag {
        return format;
    }
    if let Some(text) = env("DRAGNET_LOG_FORMAT").filter(|v| !v.trim().is_empty()) {
        return telemetry::LogFormat::parse(&text).unwrap_or_else(|| {
            out::say(&format!(
                "warning: DRAGNET_LOG_FORMAT=`{text}` is not one of text, json; logging text"
            ));
            telemetry::LogFormat::Text
        });
    }
    config::log_format_in_file(flags, env)
        .and_then(|text| telemetry::LogFormat::parse(&text))
        .unwrap_or_default()
}

/// The most rmcp's message handling may log.
const RMCP_MESSAGES: &str = "rmcp::service=info";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dragnet_log_wins_over_rust_log() {
        let both = |var: &str| match var {
            "DRAGNET_LOG" => Some("info".to_string()),
            "RUST_LOG" => Some("trace".to_string()),
            _ => None,
        };
        assert_eq!(log_filter(&both).to_string(), "info");
        let rust = |var: &str| (var == "RUST_LOG").then(|| "debug".to_string());
        assert_eq!(log_filter(&rust).to_string(), "rmcp::service=info,debug");
        let blank = |var: &str| (var == "DRAGNET_LOG").then(String::new);
        assert_eq!(log_filter(&blank).to_string(), "warn");
    }
}
