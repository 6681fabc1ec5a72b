//! Opening a `Db` from a URL: `postgres://…`/`postgresql://…` or
//! `sqlite://…`. SQLite files (and their folders) are created when missing
//! and opened in WAL mode with a busy timeout; the first connection to a
//! file is made holding its setup lock, so that one process at a time
//! switches a new file to WAL. A PostgreSQL server that does
//! not answer gets an error naming where it was looked for and what to
//! start; no error or log line ever shows a password from the URL.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::db::Db;
use crate::db::ACQUIRE_TIMEOUT;
use crate::error::{Error, Result};
use crate::setup_lock;

/// How long the first PostgreSQL connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long SQLite waits on a lock held by another writer.
const BUSY_TIMEOUT: Duration = Duration::from_secs(15);
const POSTGRES_CONNECTIONS: u32 = 10;
/// A pooled PostgreSQL connection idle this long is pinged before it is
/// handed out (a restarted server leaves its idle connections dead); one
/// used more recently was pinged when it came back.
const PING_WHEN_IDLE: Duration = Duration::from_secs(1);
/// SQLite writes one transaction at a time whatever the pool holds, and in
/// WAL mode one reader goes alongside: two connections are all a process
/// uses at once. Each one more costs an open (file, WAL index, pragmas) and a
/// close, which a short `dragnet run` pays on every start (3 ms of a 30 ms
/// cached run). No store code holds one connection while asking for
/// another, so a small pool only queues, never deadlocks.
const SQLITE_CONNECTIONS: u32 = 2;

const START_POSTGRES: &str = "start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` or set DATABASE_URL";
const CHECK_CREDENTIALS: &str = "check the user, password and database in DATABASE_URL";

/// How many connections a PostgreSQL pool opens at most, checked: 1 to
/// 200. Every worker holds its own pool, so the server's
/// `max_connections` bounds the workers times this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSize(u32);

impl PoolSize {
    pub const DEFAULT: PoolSize = PoolSize(POSTGRES_CONNECTIONS);
    pub const ONE: PoolSize = PoolSize(1);
    pub const MAX: u32 = 200;

    pub fn new(n: u64) -> Result<PoolSize> {
        match u32::try_from(n) {
            Ok(n @ 1..=PoolSize::MAX) => Ok(PoolSize(n)),
            _ => Err(Error::OutOfRange {
                what: "a pool",
                value: n,
                unit: "connections",
                min: 1,
                max: u64::from(PoolSize::MAX),
            }),
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

impl Db {
    /// Connects to the database a URL names (see `default_url`). Does not
    /// migrate: call `migrate` next.
    pub async fn connect(url: &str) -> Result<Db> {
        Db::connect_pooled(url, PoolSize::DEFAULT).await
    }

    /// As `connect`, with a PostgreSQL pool of `size` connections at most
    /// (SQLite's pool is always two: one writer and one reader).
    pub async fn connect_pooled(url: &str, size: PoolSize) -> Result<Db> {
        match scheme(url) {
            Some("postgres" | "postgresql") => connect_postgres(url, size).await,
            Some("sqlite") => connect_sqlite(url).await,
            other => Err(Error::UnsupportedScheme {
                scheme: other.unwrap_or("(none)").to_string(),
            }),
        }
    }
}

/// The URL's scheme when it looks like one (letters, digits, `+.-`).
fn scheme(url: &str) -> Option<&str> {
    let (scheme, _) = url.split_once(':')?;
    let plain = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'));
    plain.then_some(scheme)
}

async fn connect_postgres(url: &str, size: PoolSize) -> Result<Db> {
    let mut options = PgConnectOptions::from_str(url).map_err(|e| Error::InvalidUrl {
        backend: "PostgreSQL",
        reason: e.to_string(),
    })?;
    if options.get_application_name().is_none() {
        options = options.application_name("dragnet");
    }
    let target = target(&options);
    // Reach the server first: the pool would retry a refused connection
    // until its timeout and then only say that it timed out. A socket is
    // enough to tell (no login, no session: the server's process for it
    // ends as soon as it closes); the pool's own first connection then
    // reports a refused login at once.
    match tokio::time::timeout(CONNECT_TIMEOUT, reach(&options)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(Error::PostgresUnreachable {
                target,
                reason: e.to_string(),
                hint: START_POSTGRES,
            })
        }
        Err(_) => {
            return Err(Error::PostgresUnreachable {
                target,
                reason: format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
                hint: START_POSTGRES,
            })
        }
    }
    let pool = PgPoolOptions::new()
        .max_connections(size.get())
        .acquire_timeout(ACQUIRE_TIMEOUT)
        // sqlx pings every connection it hands out, one more round trip
        // on each use; its release already pinged it. Only a connection
        // idle for a while is asked again whether it is still there.
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_WHEN_IDLE {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        .connect_lazy_with(options);
    // A pool of more than one makes two connections at once, side by side:
    // a server's first writes and its first read usually overlap, and the
    // second would otherwise be made only then, while they wait. A pool of
    // one (a command that ends) makes its one.
    let first = async { pool.acquire().await.map(drop) };
    let second = async {
        match size.get() {
            1 => Ok(()),
            _ => pool.acquire().await.map(drop),
        }
    };
    let (first, second) = tokio::join!(first, second);
    first
        .and(second)
        .map_err(|e| unreachable(target.clone(), &e))?;
    tracing::debug!(backend = "postgres", %target, "connected");
    Ok(Db::Postgres(pool))
}

/// Opens (and drops) a socket to where `options` point: the server's Unix
/// socket or its TCP port.
async fn reach(options: &PgConnectOptions) -> std::io::Result<()> {
    // As the driver picks: a socket folder, or a host that is a path.
    let folder = match options.get_socket() {
        Some(dir) => Some(dir.to_path_buf()),
        None => Some(options.get_host())
            .filter(|host| host.starts_with('/'))
            .map(std::path::PathBuf::from),
    };
    match folder {
        Some(dir) => reach_unix(&dir.join(format!(".s.PGSQL.{}", options.get_port()))).await,
        None => tokio::net::TcpStream::connect((options.get_host(), options.get_port()))
            .await
            .map(drop),
    }
}

#[cfg(unix)]
async fn reach_unix(file: &Path) -> std::io::Result<()> {
    tokio::net::UnixStream::connect(file).await.map(drop)
}

#[cfg(not(unix))]
async fn reach_unix(_file: &Path) -> std::io::Result<()> {
    Ok(())
}

/// `host:port/database` or `socket/database`: never user or password.
fn target(options: &PgConnectOptions) -> String {
    let place = match options.get_socket() {
        Some(socket) => socket.display().to_string(),
        None => format!("{}:{}", options.get_host(), options.get_port()),
    };
    match options.get_database() {
        Some(db) => format!("{place}/{db}"),
        None => place,
    }
}

fn unreachable(target: String, e: &sqlx::Error) -> Error {
    let hint = match e {
        sqlx::Error::Database(_) | sqlx::Error::Tls(_) => CHECK_CREDENTIALS,
        _ => START_POSTGRES,
    };
    Error::PostgresUnreachable {
        target,
        reason: e.to_string(),
        hint,
    }
}

async fn connect_sqlite(url: &str) -> Result<Db> {
    let options = SqliteConnectOptions::from_str(url).map_err(|e| Error::InvalidUrl {
        backend: "SQLite",
        reason: e.to_string(),
    })?;
    let path = options.get_filename().to_path_buf();
    let in_memory = url.contains(":memory:") || url.contains("mode=memory");
    if !in_memory {
        create_parent(&path)?;
    }
    let options = options
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT)
        .foreign_keys(true);
    let setup = match in_memory {
        true => None,
        false => Some(setup_lock::acquire(&path, ACQUIRE_TIMEOUT).await?),
    };
    // The pool opens its first connection now (setting WAL on a new file).
    let pool = SqlitePoolOptions::new()
        .max_connections(SQLITE_CONNECTIONS)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(|e| Error::SqliteOpen {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    drop(setup);
    tracing::debug!(backend = "sqlite", path = %path.display(), "connected");
    Ok(Db::Sqlite(pool))
}

fn create_parent(path: &Path) -> Result<()> {
    let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    std::fs::create_dir_all(parent).map_err(|e| Error::SqliteOpen {
        path: path.to_path_buf(),
        reason: format!("creating {}: {e}", parent.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_are_read_without_the_rest_of_the_url() {
        assert_eq!(scheme("postgres://u:pw@h/db"), Some("postgres"));
        assert_eq!(scheme("sqlite://.dragnet/x.db"), Some("sqlite"));
        assert_eq!(scheme("sqlite::memory:"), Some("sqlite"));
        assert_eq!(scheme("user:secret@host"), Some("user"));
        assert_eq!(scheme("a b:c"), None);
        assert_eq!(scheme("no-scheme"), None);
    }

    #[test]
    fn targets_never_show_credentials() {
        let options = PgConnectOptions::from_str("postgres://alice:hunter2@db.example:6543/app")
            .unwrap_or_else(|_| PgConnectOptions::new());
        let shown = target(&options);
        assert_eq!(shown, "db.example:6543/app");
        assert!(!shown.contains("hunter2") && !shown.contains("alice"));
    }

    #[test]
    fn a_pool_is_between_one_and_two_hundred_connections() {
        assert_eq!(PoolSize::new(1).map(PoolSize::get).ok(), Some(1));
        assert_eq!(PoolSize::new(200).map(PoolSize::get).ok(), Some(200));
        for n in [0, 201, u64::from(u32::MAX) + 1] {
            let refused = PoolSize::new(n).err().map(|e| e.to_string());
            assert_eq!(
                refused,
                Some(format!("a pool of {n} connections: give from 1 to 200"))
            );
        }
    }

    #[tokio::test]
    async fn unsupported_schemes_are_named() {
        let err = Db::connect("mysql://root:pw@localhost/db").await.err();
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("`mysql`"), "{text}");
        assert!(!text.contains("pw"), "{text}");
    }
}
