//! The configuration's layers and located errors.

use super::*;

fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dragnet-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load_file(path: PathBuf) -> Result<Config, CliError> {
    let flags = ConfigFlags {
        config: Some(path),
        ..ConfigFlags::default()
    };
    Config::load(&flags, &|_: &str| None)
}

#[test]
fn layers_apply_in_order() {
    let path = file("c.toml", "database_url = \"sqlite://file.db\"\norg = \"acme\"\n[cache]\nmode = \"shadow\"\n[limits]\nmax_pages = 7\n");
    let flags = ConfigFlags {
        config: Some(path.clone()),
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
        cache_mode: Some(CacheModeArg::Off),
        ..flags
    };
    let c = Config::load(&flags, &env).unwrap();
    assert_eq!(c.database_url, "sqlite://flag.db");
    assert_eq!(c.cache_mode, CacheMode::Off);
    let env = |k: &str| (k == "DRAGNET_CACHE_MODE").then(|| "sometimes".to_string());
    let e = Config::load(&ConfigFlags::default(), &env).unwrap_err();
    assert!(
        e.to_string().contains("DRAGNET_CACHE_MODE: `sometimes`"),
        "{e}"
    );
}

#[test]
fn a_bad_file_is_named_with_its_line() {
    let e = load_file(file("unknown.toml", "org = \"a\"\ncolour = 1\n")).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("unknown.toml:2:1: invalid configuration"),
        "{text}"
    );
    assert!(text.contains("colour"), "{text}");
    let e = load_file(file("syntax.toml", "org = \"a\"\n[limits\n")).unwrap_err();
    assert!(e.to_string().contains("syntax.toml:2:"), "{e}");
}

#[test]
fn out_of_range_values_point_at_their_key() {
    let huge = file(
        "huge.toml",
        "[limits]\nmax_pages = 3\nwall_clock_seconds = 18446744073709551615\n",
    );
    let e = load_file(huge.clone()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:22: `limits.wall_clock_seconds`: limit `wall_clock` is 18446744073709551615 s; it must be from 1 ms to 24 h",
            huge.display()
        )
    );
    let e = load_file(file("zero.toml", "concurrency = 0\n")).unwrap_err();
    assert!(
        e.to_string().contains("zero.toml:1:15: `concurrency`"),
        "{e}"
    );
    let e = load_file(file(
        "sweep.toml",
        "[cache]\nsweep_every_seconds = 99999999\n",
    ))
    .unwrap_err();
    assert!(e.to_string().contains("`cache.sweep_every_seconds`"), "{e}");
    let e = load_file(file("mode.toml", "[cache]\nmode = \"sometimes\"\n")).unwrap_err();
    assert!(e.to_string().contains("mode.toml:2:8: `cache.mode`"), "{e}");
}

#[test]
fn upstream_hosts_are_read_and_a_bad_pattern_located() {
    let c = load_file(file(
        "hosts.toml",
        "[server]\nupstream_hosts = [\"*.example.com\", \"!10.0.0.0/8\"]\n",
    ))
    .unwrap();
    let hosts = &c.server.upstream_hosts;
    assert!(hosts.check_host("a.example.com").is_ok());
    assert!(hosts.check_host("10.1.1.1").is_err());
    assert!(hosts.check_host("api.github.com").is_err());
    // Unset: anywhere but link-local and metadata.
    let c = load_file(file("none-hosts.toml", "")).unwrap();
    let hosts = &c.server.upstream_hosts;
    assert!(hosts.check_host("api.github.com").is_ok());
    assert!(hosts.check_host("169.254.169.254").is_err());
    let e = load_file(file(
        "bad-hosts.toml",
        "[server]\nupstream_hosts = [\"ok.com\", \"https://x.com\"]\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "bad-hosts.toml:2:29: `server.upstream_hosts`: `https://x.com` is not a host pattern"
        ),
        "{e}"
    );
}

#[test]
fn declared_mcp_servers_read_the_operators_environment_or_stop_the_start_located() {
    let text = "[server.mcp_servers.tickets]\ncommand = [\"tickets-server\", \"--read-only\"]\nenv = { KEY = { env = \"TICKETS_KEY\" }, MODE = \"ro\" }\n";
    let flags = ConfigFlags {
        config: Some(file("mcp.toml", text)),
        ..ConfigFlags::default()
    };
    let env = |var: &str| (var == "TICKETS_KEY").then(|| "k-1".to_string());
    let c = Config::load(&flags, &env).unwrap();
    let declared = &c.server.mcp_servers["tickets"];
    let vars: Vec<(&str, &str)> = declared
        .vars
        .iter()
        .map(|(n, v)| (n.as_str(), v.expose()))
        .collect();
    assert_eq!(vars, [("KEY", "k-1"), ("MODE", "ro")]);
    // A variable the operator's environment lacks stops the start, located.
    let e = load_file(file("mcp-missing.toml", text))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mcp-missing.toml:1:1:") && e.contains("`TICKETS_KEY`"),
        "{e}"
    );
    let e = load_file(file(
        "mcp-empty.toml",
        "[server.mcp_servers.tickets]\ncommand = []\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("`command` is empty"), "{e}");
}

#[test]
fn scale_out_settings_are_checked_against_the_store() {
    // No slots of its own: only where workers share the store.
    let e = load_file(file("none.toml", "[server]\nmax_running_runs = 0\n")).unwrap_err();
    assert!(
        e.to_string().contains("none.toml:2:20: `server.max_running_runs`: is 0; it must be from 1 to 1024 (0 only on PostgreSQL"),
        "{e}"
    );
    let c = load_file(file(
        "api.toml",
        "database_url = \"postgres://db/x\"\ndatabase_pool_size = 4\n[server]\nmax_running_runs = 0\n",
    ))
    .unwrap();
    assert_eq!(
        (
            c.server.max_running_runs,
            c.pool_size(Lifetime::OneShot).get(),
            c.pool_size(Lifetime::Serving).get()
        ),
        (0, 4, 4)
    );
    let e = load_file(file("pool.toml", "database_pool_size = 0\n")).unwrap_err();
    assert!(
        e.to_string()
            .contains("pool.toml:1:22: `database_pool_size`: is 0; it must be from 1 to 200"),
        "{e}"
    );
    let env = |k: &str| match k {
        "DRAGNET_MAX_RUNNING_RUNS" => Some("0".to_string()),
        _ => None,
    };
    let e = Config::load(&ConfigFlags::default(), &env).unwrap_err();
    assert!(
        e.to_string().contains("DRAGNET_MAX_RUNNING_RUNS: `0`"),
        "{e}"
    );
    let unset = load_file(file("d.toml", "")).unwrap();
    assert_eq!(unset.pool_size(Lifetime::Serving).get(), 10);
    assert_eq!(unset.pool_size(Lifetime::OneShot).get(), 1);
}

#[test]
fn step_outputs_are_kept_30_days_unless_configured() {
    let c = load_file(file("plain.toml", "org = \"a\"\n")).unwrap();
    assert_eq!(c.keep_outputs, Some(Duration::from_secs(30 * 86_400)));
    let c = load_file(file("keep.toml", "[runs]\nkeep_outputs_days = 7\n")).unwrap();
    assert_eq!(c.keep_outputs, Some(Duration::from_secs(7 * 86_400)));
    let c = load_file(file("forever.toml", "[runs]\nkeep_outputs_days = 0\n")).unwrap();
    assert_eq!(c.keep_outputs, None);
    let e = load_file(file("long.toml", "[runs]\nkeep_outputs_days = 99999\n")).unwrap_err();
    assert!(
        e.to_string()
            .contains("long.toml:2:21: `runs.keep_outputs_days`"),
        "{e}"
    );
}
