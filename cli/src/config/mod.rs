//! One layered configuration, loaded once in `main` and passed explicitly:
//! the file (`--config`, `DRAGNET_CONFIG`, or `.dragnet/config.toml` when it
//! exists), then environment variables, then command-line flags. Nothing
//! else in the program reads the environment for settings. Every value is
//! checked here, once: a bad one is an error naming the file, line and key.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dragnet_core::budget::Bound;
use dragnet_core::ports::cache::CacheMode;
use dragnet_core::secret::Secret;
use dragnet_core::Limits;
use dragnet_http::HostPolicy;
use dragnet_providers::DeclaredServer;
use serde::Deserialize;
use toml::Spanned;

use crate::failure::CliError;

/// The settings every command sees.
#[derive(Debug, Clone)]
pub struct Config {
    /// `postgres://…` or `sqlite://…` (its scheme is checked on connecting).
    pub database_url: String,
    /// The most connections a PostgreSQL pool opens
    /// (`DRAGNET_DATABASE_POOL_SIZE`, `database_pool_size`; 1 to 200), when
    /// set; [`Config::pool_size`] gives the default otherwise.
    pub pool_size_set: Option<dragnet_store::PoolSize>,
    /// The organisation whose credentials workflows use (the cache scope).
    pub org: String,
    pub cache_mode: CacheMode,
    /// How often expired cache entries are swept while a command runs.
    pub sweep_every: Duration,
    /// How long a finished run's step outputs are kept (`None`: for ever).
    pub keep_outputs: Option<Duration>,
    /// The bounds of every tool call, before a command's own flags.
    pub limits: Limits,
    pub concurrency: NonZeroUsize,
    /// `dragnet serve`'s settings.
    pub server: ServerSettings,
    /// A server the client commands talk to (`DRAGNET_SERVER`,
    /// `[client] server`), and its token (`DRAGNET_TOKEN` only).
    pub client_server: Option<String>,
    pub client_token: Option<Secret>,
}

/// `[server]`: where `dragnet serve` listens and reads documents from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// `host:port` (`DRAGNET_BIND`, `[server] bind`); the flag wins.
    pub bind: String,
    /// Where submitted workflows' `openapi:` paths resolve
    /// (`DRAGNET_WORKFLOWS_DIR`, `[server] workflows_dir`).
    pub workflows_dir: Option<PathBuf>,
    /// How long running runs may finish on shutdown.
    pub shutdown_grace: Duration,
    /// Runs running at once; more wait, queued (`DRAGNET_MAX_RUNNING_RUNS`,
    /// `[server] max_running_runs`). 0, on PostgreSQL only: this process
    /// runs none itself and leaves them to workers.
    pub max_running_runs: usize,
    /// The token `GET /metrics` asks for (`DRAGNET_METRICS_TOKEN` only).
    pub metrics_token: Option<Secret>,
    /// The key teams' secrets are sealed under (`DRAGNET_SECRETS_KEY`
    /// only, at least 32 bytes); without it no secret can be set.
    pub secrets_key: Option<Secret>,
    /// How long a lease on a run lasts (`DRAGNET_LEASE_SECONDS`,
    /// `[server] lease_seconds`, 1 to 3600, 30 by default); heartbeats
    /// renew it every third of that.
    pub lease: dragnet_store::LeaseLength,
    /// Where teams' providers may point (`DRAGNET_UPSTREAM_HOSTS`, comma
    /// separated, or `[server] upstream_hosts`); by default anywhere but
    /// link-local and cloud metadata addresses.
    pub upstream_hosts: std::sync::Arc<dragnet_http::HostPolicy>,
    /// The MCP servers workflows may name as `mcp: {server: NAME}`
    /// (`[server.mcp_servers.NAME]`: `command`, and `env` whose `{env =
    /// "VAR"}` values are read from this process's environment when it
    /// starts): the only programs a server's run starts, and names a local
    /// run resolves the same way.
    pub mcp_servers: std::sync::Arc<BTreeMap<String, DeclaredServer>>,
}

/// Where `dragnet serve` listens by default.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// Longest shutdown grace that can be asked for (an hour).
const MAX_GRACE_SECONDS: u64 = 3600;

/// Longest pause between two sweeps of the cache.
const MAX_SWEEP_SECONDS: u64 = 86_400;
/// Longest retention of step outputs that can be asked for (100 years).
const MAX_KEEP_OUTPUTS_DAYS: u64 = 36_500;
/// Most steps running at once.
pub const MAX_CONCURRENCY: usize = 1024;

/// The file's shape; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    database_url: Option<String>,
    database_pool_size: Option<Spanned<u64>>,
    org: Option<String>,
    #[serde(default)]
    cache: FileCache,
    #[serde(default)]
    limits: FileLimits,
    #[serde(default)]
    runs: FileRuns,
    #[serde(default)]
    server: FileServer,
    #[serde(default)]
    client: FileClient,
    #[serde(default)]
    log: FileLog,
    concurrency: Option<Spanned<usize>>,
}

/// `[log]`: how log lines are written (read before the rest, see
/// [`log_format_in_file`]; checked here so a bad value is located).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLog {
    format: Option<Spanned<String>>,
}

/// The configuration file's `[log] format`, read on its own before logging
/// starts (the whole file is read, and any problem in it reported, when the
/// command loads its configuration).
pub fn log_format_in_file(
    flags: &ConfigFlags,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    #[derive(Deserialize)]
    struct Peek {
        log: Option<PeekLog>,
    }
    #[derive(Deserialize)]
    struct PeekLog {
        format: Option<String>,
    }
    let path = config_path(flags, env)?;
    let text = std::fs::read_to_string(path).ok()?;
    toml::from_str::<Peek>(&text).ok()?.log?.format
}

/// The configuration file in use: `--config`, else `DRAGNET_CONFIG`, else
/// the default file when it exists.
fn config_path(flags: &ConfigFlags, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    flags
        .config
        .clone()
        .or_else(|| env("DRAGNET_CONFIG").map(PathBuf::from))
        .or_else(|| {
            Path::new(DEFAULT_CONFIG)
                .exists()
                .then(|| PathBuf::from(DEFAULT_CONFIG))
        })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileClient {
    /// The server `workflows`, `trigger` and `runs --server` talk to. The
    /// token is never read from the file: `DRAGNET_TOKEN` or `--token`.
    server: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileServer {
    bind: Option<String>,
    workflows_dir: Option<PathBuf>,
    shutdown_grace_seconds: Option<Spanned<u64>>,
    max_running_runs: Option<Spanned<usize>>,
    lease_seconds: Option<Spanned<u64>>,
    upstream_hosts: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    mcp_servers: BTreeMap<String, Spanned<mcp_servers::FileMcpServer>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCache {
    mode: Option<Spanned<String>>,
    sweep_every_seconds: Option<Spanned<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRuns {
    /// Days a finished run's step outputs are kept; 0 keeps them for ever.
    keep_outputs_days: Option<Spanned<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLimits {
    max_pages: Option<Spanned<u32>>,
    max_requests: Option<Spanned<u32>>,
    max_items: Option<Spanned<usize>>,
    max_bytes: Option<Spanned<u64>>,
    wall_clock_seconds: Option<Spanned<u64>>,
    max_for_each_values: Option<Spanned<usize>>,
}

/// `--cache-mode`: a closed set, checked by clap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheModeArg {
    /// Never read, never write.
    Off,
    /// Serve hits; store complete walks.
    On,
    /// Store complete walks, never serve them.
    Shadow,
}

impl From<CacheModeArg> for CacheMode {
    fn from(m: CacheModeArg) -> Self {
        match m {
            CacheModeArg::Off => CacheMode::Off,
            CacheModeArg::On => CacheMode::On,
            CacheModeArg::Shadow => CacheMode::Shadow,
        }
    }
}

/// Settings given as flags (the last layer).
#[derive(Debug, Default, Clone, clap::Args)]
pub struct ConfigFlags {
    /// Configuration file (TOML). Default: .dragnet/config.toml when it exists.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Database for runs and the cache: postgres://… or sqlite://… (default sqlite://.dragnet/dragnet.db).
    #[arg(long, global = true, value_name = "URL")]
    pub database_url: Option<String>,
    /// Cache mode of this deployment.
    #[arg(long, global = true, value_name = "MODE")]
    pub cache_mode: Option<CacheModeArg>,
}

pub const DEFAULT_CONFIG: &str = ".dragnet/config.toml";

/// The file being read, for positions in errors.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    /// 1-based line and column of a byte offset.
    fn position(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }

    fn value_error(&self, span: Range<usize>, key: &str, message: String) -> CliError {
        let (line, column) = self.position(span.start);
        CliError::ConfigValue {
            file: self.path.to_path_buf(),
            line,
            column,
            key: key.to_string(),
            message,
        }
    }
}

/// How long a command holds its store: what its PostgreSQL pool is sized for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// Does its work and ends (`run`, `demo`, `runs`, `cache`, …): one
    /// connection, since a second one costs the server a new backend,
    /// more than the command waits for the first.
    OneShot,
    /// Serves until stopped (`serve`, `worker`, `mcp`): ten connections.
    Serving,
}

impl Config {
    /// The PostgreSQL pool size for a command of `lifetime`: the size set
    /// in the file or the environment, else that lifetime's default.
    pub fn pool_size(&self, lifetime: Lifetime) -> dragnet_store::PoolSize {
        self.pool_size_set.unwrap_or(match lifetime {
            Lifetime::OneShot => dragnet_store::PoolSize::ONE,
            Lifetime::Serving => dragnet_store::PoolSize::DEFAULT,
        })
    }

    /// Builds the configuration from the three layers. `env` is the
    /// environment (injected for tests).
    pub fn load(
        flags: &ConfigFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, CliError> {
        let file_path = config_path(flags, env);
        let text = match &file_path {
            Some(path) => {
                std::fs::read_to_string(path).map_err(|source| CliError::ConfigUnreadable {
                    file: path.clone(),
                    source,
                })?
            }
            None => String::new(),
        };
        let path = file_path.as_deref().unwrap_or(Path::new(DEFAULT_CONFIG));
        let source = Source { path, text: &text };
        let file = parse(&source)?;
        if let Some(format) = &file.log.format {
            if crate::telemetry::LogFormat::parse(format.get_ref()).is_none() {
                return Err(source.value_error(
                    format.span(),
                    "log.format",
                    format!("`{}` is not one of text, json", format.get_ref()),
                ));
            }
        }

        let limits = file_limits(&file.limits, &source)?;
        let database_url = flags
            .database_url
            .clone()
            .or_else(|| env("DRAGNET_DATABASE_URL"))
            .or_else(|| env("DATABASE_URL"))
            .or(file.database_url)
            .unwrap_or_else(dragnet_store::default_url);
        let cache_mode = match (
            flags.cache_mode,
            env("DRAGNET_CACHE_MODE"),
            &file.cache.mode,
        ) {
            (Some(flag), _, _) => flag.into(),
            (None, Some(text), _) => CacheMode::parse(&text).ok_or_else(|| {
                CliError::argument_error(
                    "DRAGNET_CACHE_MODE",
                    format!("`{text}` is not one of off, on, shadow"),
                )
            })?,
            (None, None, Some(mode)) => CacheMode::parse(mode.get_ref()).ok_or_else(|| {
                source.value_error(
                    mode.span(),
                    "cache.mode",
                    format!("`{}` is not one of off, on, shadow", mode.get_ref()),
                )
            })?,
            (None, None, None) => CacheMode::On,
        };
        let org = env("DRAGNET_ORG")
            .or(file.org)
            .unwrap_or_else(|| "default".to_string());
        let concurrency = match &file.concurrency {
            None => NonZeroUsize::new(4).unwrap_or(NonZeroUsize::MIN),
            Some(c) => NonZeroUsize::new(*c.get_ref())
                .filter(|n| n.get() <= MAX_CONCURRENCY)
                .ok_or_else(|| {
                    source.value_error(
                        c.span(),
                        "concurrency",
                        format!("is {}; it must be from 1 to {MAX_CONCURRENCY}", c.get_ref()),
                    )
                })?,
        };
        let sweep_every = match &file.cache.sweep_every_seconds {
            None => Duration::from_secs(300),
            Some(s) if (1..=MAX_SWEEP_SECONDS).contains(s.get_ref()) => {
                Duration::from_secs(*s.get_ref())
            }
            Some(s) => {
                return Err(source.value_error(
                    s.span(),
                    "cache.sweep_every_seconds",
                    format!(
                        "is {}; it must be from 1 to {MAX_SWEEP_SECONDS} (a day)",
                        s.get_ref()
                    ),
                ))
            }
        };
        let keep_outputs = match &file.runs.keep_outputs_days {
            None => Some(Duration::from_secs(30 * 86_400)),
            Some(d) if *d.get_ref() == 0 => None,
            Some(d) if *d.get_ref() <= MAX_KEEP_OUTPUTS_DAYS => {
                Some(Duration::from_secs(*d.get_ref() * 86_400))
            }
            Some(d) => {
                return Err(source.value_error(
                    d.span(),
                    "runs.keep_outputs_days",
                    format!(
                        "is {}; it must be from 0 (for ever) to {MAX_KEEP_OUTPUTS_DAYS}",
                        d.get_ref()
                    ),
                ))
            }
        };
        let shutdown_grace = match &file.server.shutdown_grace_seconds {
            None => Duration::from_secs(30),
            Some(g) if *g.get_ref() <= MAX_GRACE_SECONDS => Duration::from_secs(*g.get_ref()),
            Some(g) => {
                return Err(source.value_error(
                    g.span(),
                    "server.shutdown_grace_seconds",
                    format!(
                        "is {}; it must be from 0 to {MAX_GRACE_SECONDS}",
                        g.get_ref()
                    ),
                ))
            }
        };
        // No slots of its own leaves runs to other processes, which only a
        // shared PostgreSQL store has.
        let shared = !database_url.starts_with("sqlite:");
        let lowest = usize::from(!shared);
        let runs_range = format!(
            "it must be from {lowest} to {MAX_CONCURRENCY}{}",
            if shared {
                " (0: this process runs none itself, workers do)"
            } else {
                " (0 only on PostgreSQL, where workers can run them)"
            }
        );
        let max_running_runs = match (
            env("DRAGNET_MAX_RUNNING_RUNS"),
            &file.server.max_running_runs,
        ) {
            (Some(text), _) => text
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (lowest..=MAX_CONCURRENCY).contains(n))
                .ok_or_else(|| {
                    CliError::argument_error(
                        "DRAGNET_MAX_RUNNING_RUNS",
                        format!("`{text}` is not a number of runs: {runs_range}"),
                    )
                })?,
            (None, None) => 16,
            (None, Some(n)) if (lowest..=MAX_CONCURRENCY).contains(n.get_ref()) => *n.get_ref(),
            (None, Some(n)) => {
                return Err(source.value_error(
                    n.span(),
                    "server.max_running_runs",
                    format!("is {}; {runs_range}", n.get_ref()),
                ))
            }
        };
        let pool_size_set = match (env("DRAGNET_DATABASE_POOL_SIZE"), &file.database_pool_size) {
            (Some(text), _) => Some(
                text.trim()
                    .parse::<u64>()
                    .ok()
                    .and_then(|n| dragnet_store::PoolSize::new(n).ok())
                    .ok_or_else(|| {
                        CliError::argument_error(
                            "DRAGNET_DATABASE_POOL_SIZE",
                            format!(
                                "`{text}` is not a number of connections from 1 to {}",
                                dragnet_store::PoolSize::MAX
                            ),
                        )
                    })?,
            ),
            (None, Some(n)) => Some(dragnet_store::PoolSize::new(*n.get_ref()).map_err(|_| {
                source.value_error(
                    n.span(),
                    "database_pool_size",
                    format!(
                        "is {}; it must be from 1 to {}",
                        n.get_ref(),
                        dragnet_store::PoolSize::MAX
                    ),
                )
            })?),
            (None, None) => None,
        };
        let lease = match (env("DRAGNET_LEASE_SECONDS"), &file.server.lease_seconds) {
            (Some(text), _) => text
                .trim()
                .parse::<u64>()
                .ok()
                .and_then(|n| dragnet_store::LeaseLength::new(Duration::from_secs(n)).ok())
                .ok_or_else(|| {
                    CliError::argument_error(
                        "DRAGNET_LEASE_SECONDS",
                        format!("`{text}` is not a number of seconds from 1 to 3600"),
                    )
                })?,
            (None, Some(n)) => dragnet_store::LeaseLength::new(Duration::from_secs(*n.get_ref()))
                .map_err(|_| {
                source.value_error(
                    n.span(),
                    "server.lease_seconds",
                    format!("is {}; it must be from 1 to 3600", n.get_ref()),
                )
            })?,
            (None, None) => dragnet_store::LeaseLength::DEFAULT,
        };
        let upstream_hosts = upstream_hosts(env, &file.server.upstream_hosts, &source)?;
        let mcp_servers = mcp_servers::declared(env, &file.server.mcp_servers, &source)?;
        let server = ServerSettings {
            upstream_hosts,
            mcp_servers,
            lease,
            max_running_runs,
            metrics_token: env("DRAGNET_METRICS_TOKEN").map(Secret::new),
            secrets_key: secrets_key(env)?,
            bind: env("DRAGNET_BIND")
                .or(file.server.bind)
                .unwrap_or_else(|| DEFAULT_BIND.to_string()),
            workflows_dir: env("DRAGNET_WORKFLOWS_DIR")
                .map(PathBuf::from)
                .or(file.server.workflows_dir),
            shutdown_grace,
        };
        Ok(Config {
            database_url,
            pool_size_set,
            org,
            cache_mode,
            sweep_every,
            keep_outputs,
            limits,
            concurrency,
            server,
            client_server: env("DRAGNET_SERVER").or(file.client.server),
            client_token: env("DRAGNET_TOKEN").map(Secret::new),
        })
    }
}

/// `DRAGNET_SECRETS_KEY`, checked: a key the sealer takes (32 bytes or
/// more); never read from the file.
fn secrets_key(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Secret>, CliError> {
    let Some(key) = env("DRAGNET_SECRETS_KEY").filter(|k| !k.is_empty()) else {
        return Ok(None);
    };
    dragnet_http::Sealer::new(key.as_bytes()).map_err(|e| {
        CliError::argument_error(
            "DRAGNET_SECRETS_KEY",
            format!("{e}: generate one with `openssl rand -base64 48`"),
        )
    })?;
    Ok(Some(Secret::new(key)))
}

fn parse(source: &Source<'_>) -> Result<FileConfig, CliError> {
    toml::from_str::<FileConfig>(source.text).map_err(|e| {
        let (line, column) = source.position(e.span().map_or(0, |s| s.start));
        CliError::ConfigSyntax {
            file: source.path.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })
}

/// The file's `[limits]` over the defaults, checked (`Limits::validate`);
/// an error points at the key that set the bound.
fn file_limits(l: &FileLimits, source: &Source<'_>) -> Result<Limits, CliError> {
    let defaults = Limits::default();
    let limits = Limits {
        max_pages: value(&l.max_pages).unwrap_or(defaults.max_pages),
        max_requests: value(&l.max_requests).unwrap_or(defaults.max_requests),
        max_items: value(&l.max_items).unwrap_or(defaults.max_items),
        max_bytes: value(&l.max_bytes).unwrap_or(defaults.max_bytes),
        wall_clock: value(&l.wall_clock_seconds).map_or(defaults.wall_clock, Duration::from_secs),
        max_for_each_values: value(&l.max_for_each_values).unwrap_or(defaults.max_for_each_values),
        retry: defaults.retry.clone(),
    };
    limits.validate().map_err(|e| {
        let (key, span) = match e.bound {
            Bound::Pages => ("max_pages", l.max_pages.as_ref().map(Spanned::span)),
            Bound::Requests => ("max_requests", l.max_requests.as_ref().map(Spanned::span)),
            Bound::Items => ("max_items", l.max_items.as_ref().map(Spanned::span)),
            Bound::Bytes => ("max_bytes", l.max_bytes.as_ref().map(Spanned::span)),
            Bound::WallClock => (
                "wall_clock_seconds",
                l.wall_clock_seconds.as_ref().map(Spanned::span),
            ),
            Bound::ForEachValues => (
                "max_for_each_values",
                l.max_for_each_values.as_ref().map(Spanned::span),
            ),
            Bound::Retries | Bound::BaseBackoff | Bound::MaxBackoff => (e.bound.name(), None),
        };
        source.value_error(
            span.unwrap_or(0..0),
            &format!("limits.{key}"),
            e.to_string(),
        )
    })?;
    Ok(limits)
}

/// `upstream_hosts` from the environment (comma separated) or the file,
/// parsed; a bad pattern in the file is located at that pattern.
fn upstream_hosts(
    env: &dyn Fn(&str) -> Option<String>,
    file: &Option<Vec<Spanned<String>>>,
    source: &Source<'_>,
) -> Result<std::sync::Arc<HostPolicy>, CliError> {
    if let Some(text) = env("DRAGNET_UPSTREAM_HOSTS") {
        let patterns: Vec<&str> = text.split(',').filter(|p| !p.trim().is_empty()).collect();
        return HostPolicy::parse(&patterns)
            .map(std::sync::Arc::new)
            .map_err(|e| CliError::argument_error("DRAGNET_UPSTREAM_HOSTS", e.to_string()));
    }
    let Some(patterns) = file else {
        return Ok(std::sync::Arc::default());
    };
    let texts: Vec<&str> = patterns.iter().map(|p| p.get_ref().as_str()).collect();
    HostPolicy::parse(&texts)
        .map(std::sync::Arc::new)
        .map_err(|e| {
            let span = patterns.get(e.index).map_or(0..0, Spanned::span);
            source.value_error(span, "server.upstream_hosts", e.to_string())
        })
}

fn value<T: Copy>(v: &Option<Spanned<T>>) -> Option<T> {
    v.as_ref().map(|s| *s.get_ref())
}

mod mcp_servers;

#[cfg(test)]
mod tests;
