//! One layered configuration, validated once and passed explicitly: the
//! file (`--config`, `DRAGNET_CONFIG`, or `.dragnet/config.toml` when it
//! exists), then environment variables, then command-line flags. Nothing
//! else in the program reads the environment for settings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use dragnet_steps::cache::CacheMode;
use dragnet_steps::Limits;
use serde::Deserialize;

/// The settings every command sees.
#[derive(Debug, Clone)]
pub struct Config {
    /// `postgres://…` or `sqlite://…`.
    pub database_url: String,
    /// The organisation whose credentials workflows use (the cache scope).
    pub org: String,
    pub cache_mode: CacheMode,
    /// How often expired cache entries are swept while a command runs.
    pub sweep_every: Duration,
    pub limits: Limits,
    pub concurrency: usize,
}

/// The file's shape; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    database_url: Option<String>,
    org: Option<String>,
    #[serde(default)]
    cache: FileCache,
    #[serde(default)]
    limits: FileLimits,
    concurrency: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCache {
    mode: Option<String>,
    sweep_every_seconds: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLimits {
    max_pages: Option<u32>,
    max_requests: Option<u32>,
    max_items: Option<usize>,
    max_bytes: Option<u64>,
    wall_clock_seconds: Option<u64>,
    max_for_each_values: Option<usize>,
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
    /// Cache mode of this deployment: off, on, shadow.
    #[arg(long, global = true, value_name = "MODE")]
    pub cache_mode: Option<String>,
}

pub const DEFAULT_CONFIG: &str = ".dragnet/config.toml";

impl Config {
    /// Builds the configuration from the three layers. `env` is the
    /// environment (injected for tests).
    pub fn load(flags: &ConfigFlags, env: &dyn Fn(&str) -> Option<String>) -> Result<Config> {
        let file_path = flags
            .config
            .clone()
            .or_else(|| env("DRAGNET_CONFIG").map(PathBuf::from))
            .or_else(|| {
                Path::new(DEFAULT_CONFIG)
                    .exists()
                    .then(|| PathBuf::from(DEFAULT_CONFIG))
            });
        let file = match &file_path {
            Some(path) => {
                let text = std::fs::read_to_string(path).with_context(|| {
                    format!("cannot read the configuration file {}", path.display())
                })?;
                toml::from_str::<FileConfig>(&text)
                    .with_context(|| format!("{}: invalid configuration", path.display()))?
            }
            None => FileConfig::default(),
        };
        let defaults = Limits::default();
        let l = &file.limits;
        let limits = Limits {
            max_pages: l.max_pages.unwrap_or(defaults.max_pages),
            max_requests: l.max_requests.unwrap_or(defaults.max_requests),
            max_items: l.max_items.unwrap_or(defaults.max_items),
            max_bytes: l.max_bytes.unwrap_or(defaults.max_bytes),
            wall_clock: l
                .wall_clock_seconds
                .map(Duration::from_secs)
                .unwrap_or(defaults.wall_clock),
            max_for_each_values: l
                .max_for_each_values
                .unwrap_or(defaults.max_for_each_values),
            retry: defaults.retry,
        };
        limits
            .validate()
            .map_err(anyhow::Error::msg)
            .context("configuration [limits]")?;

        let database_url = flags
            .database_url
            .clone()
            .or_else(|| env("DRAGNET_DATABASE_URL"))
            .or_else(|| env("DATABASE_URL"))
            .or(file.database_url)
            .unwrap_or_else(dragnet_store::default_url);
        if !(database_url.starts_with("postgres://")
            || database_url.starts_with("postgresql://")
            || database_url.starts_with("sqlite:"))
        {
            bail!("database URL must start with postgres://, postgresql:// or sqlite: (got a URL with another scheme)");
        }
        let mode_text = flags
            .cache_mode
            .clone()
            .or_else(|| env("DRAGNET_CACHE_MODE"))
            .or(file.cache.mode)
            .unwrap_or_else(|| "on".to_string());
        let cache_mode = CacheMode::parse(&mode_text)
            .with_context(|| format!("cache mode `{mode_text}` is not one of off, on, shadow"))?;
        let org = env("DRAGNET_ORG")
            .or(file.org)
            .unwrap_or_else(|| "default".to_string());
        let concurrency = file.concurrency.unwrap_or(4);
        if concurrency == 0 {
            bail!("configuration: concurrency must be at least 1");
        }
        Ok(Config {
            database_url,
            org,
            cache_mode,
            sweep_every: Duration::from_secs(file.cache.sweep_every_seconds.unwrap_or(300).max(1)),
            limits,
            concurrency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_apply_in_order() {
        let dir = std::env::temp_dir().join(format!("dragnet-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, "database_url = \"sqlite://file.db\"\norg = \"acme\"\n[cache]\nmode = \"shadow\"\n[limits]\nmax_pages = 7\n").unwrap();
        let flags = ConfigFlags {
            config: Some(file.clone()),
            ..ConfigFlags::default()
        };
        let none = |_: &str| None;
        let c = Config::load(&flags, &none).unwrap();
        assert_eq!(c.database_url, "sqlite://file.db");
        assert_eq!(c.cache_mode, CacheMode::Shadow);
        assert_eq!(c.limits.max_pages, 7);
        assert_eq!(c.org, "acme");
        let env = |k: &str| (k == "DATABASE_URL").then(|| "postgres://env/db".to_string());
        assert_eq!(
            Config::load(&flags, &env).unwrap().database_url,
            "postgres://env/db"
        );
        let flags = ConfigFlags {
            database_url: Some("sqlite://flag.db".into()),
            cache_mode: Some("off".into()),
            ..flags
        };
        let c = Config::load(&flags, &env).unwrap();
        assert_eq!(c.database_url, "sqlite://flag.db");
        assert_eq!(c.cache_mode, CacheMode::Off);
        let bad = ConfigFlags {
            cache_mode: Some("sometimes".into()),
            ..ConfigFlags::default()
        };
        assert!(Config::load(&bad, &none)
            .unwrap_err()
            .to_string()
            .contains("sometimes"));
        std::fs::write(&file, "colour = 1\n").unwrap();
        let flags = ConfigFlags {
            config: Some(file),
            ..ConfigFlags::default()
        };
        assert!(format!("{:#}", Config::load(&flags, &none).unwrap_err()).contains("colour"));
    }
}
