//! `Db`: one closed enum over the two backends. Statements are written once
//! in the SQL both understand (`$N` placeholders, `ON CONFLICT … DO UPDATE`,
//! `excluded.`); `with_pool!` expands a body once per backend, with a
//! timestamp codec `T` that is timestamptz on PostgreSQL and INTEGER
//! milliseconds on SQLite. Every timestamp is kept at millisecond precision
//! on both, so what a run or an entry reads back is the same everywhere.
//! `Db` itself answers only for the connection (backend, migrations, ping,
//! pools); the tables are reached through narrow handles, one per area
//! (`db.teams()`, `db.runs()`, …), each a cheap clone of the pool, so a
//! task is handed the areas it uses and no others.

use chrono::{DateTime, SubsecRound, Utc};
use sqlx::migrate::Migrator;
use sqlx::{PgPool, SqlitePool};

use crate::error::{Error, Result};
use crate::setup_lock;

/// How long taking a pooled connection (or a SQLite file's setup lock)
/// may wait.
pub(crate) const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/postgres");
static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/sqlite");

/// A row of `_sqlx_migrations`: version, checksum, success.
type Applied = (i64, Vec<u8>, bool);

/// A connection pool on PostgreSQL (production, many workers) or SQLite (the
/// embedded default). Cloning is cheap and shares the pool.
#[derive(Debug, Clone)]
pub enum Db {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

/// The default store: a SQLite file under the working directory.
pub fn default_url() -> String {
    "sqlite://.dragnet/dragnet.db".to_string()
}

impl Db {
    /// `"postgres"` or `"sqlite"`.
    pub fn backend(&self) -> &'static str {
        match self {
            Db::Postgres(_) => "postgres",
            Db::Sqlite(_) => "sqlite",
        }
    }

    /// Applies the embedded migrations; running it again changes nothing.
    /// Processes migrating one store at once take turns: PostgreSQL's
    /// migrator holds an advisory lock, and on a SQLite file the migrations
    /// run holding the file's setup lock.
    pub async fn migrate(&self) -> Result<()> {
        if self.migrations_applied().await {
            return Ok(());
        }
        let backend = self.backend();
        let map = |source| Error::Migrate { backend, source };
        match self {
            Db::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await.map_err(map),
            Db::Sqlite(pool) => {
                let file = pool.connect_options().get_filename().to_path_buf();
                // An in-memory database has no file, and no other process.
                let _setup = match file.is_file() {
                    true => Some(setup_lock::acquire(&file, ACQUIRE_TIMEOUT).await?),
                    false => None,
                };
                SQLITE_MIGRATIONS.run(pool).await.map_err(map)
            }
        }
    }

    /// Whether every embedded migration is already applied, as embedded
    /// (same checksums, each successful) and nothing else is: one read,
    /// no lock, so a short command on a current store skips the migrator's
    /// round trips. Anything else (no table yet, a new migration, a
    /// changed or unknown one, a failed read) leaves it to the migrator,
    /// which applies or reports it.
    async fn migrations_applied(&self) -> bool {
        const APPLIED: &str =
            "SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version";
        let (migrator, applied): (&Migrator, std::result::Result<Vec<Applied>, sqlx::Error>) =
            match self {
                Db::Postgres(pool) => (
                    &POSTGRES_MIGRATIONS,
                    sqlx::query_as(APPLIED).fetch_all(pool).await,
                ),
                Db::Sqlite(pool) => (
                    &SQLITE_MIGRATIONS,
                    sqlx::query_as(APPLIED).fetch_all(pool).await,
                ),
            };
        let Ok(applied) = applied else {
            return false;
        };
        let embedded: Vec<_> = migrator
            .iter()
            .filter(|m| !m.migration_type.is_down_migration())
            .collect();
        applied.len() == embedded.len()
            && applied
                .iter()
                .zip(&embedded)
                .all(|((version, checksum, ok), m)| {
                    *ok && *version == m.version && checksum.as_slice() == &*m.checksum
                })
    }

    /// Answers once the database does (a readiness check).
    pub async fn ping(&self) -> Result<()> {
        with_pool!(self, |pool, T| {
            sqlx::query("SELECT 1")
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "ping"))?;
        });
        Ok(())
    }

    /// The PostgreSQL pool, for callers with PostgreSQL-only work (queues).
    pub fn as_postgres(&self) -> Option<&PgPool> {
        match self {
            Db::Postgres(pool) => Some(pool),
            Db::Sqlite(_) => None,
        }
    }

    /// The SQLite pool.
    pub fn as_sqlite(&self) -> Option<&SqlitePool> {
        match self {
            Db::Sqlite(pool) => Some(pool),
            Db::Postgres(_) => None,
        }
    }

    /// Closes the pool, waiting for connections in use to come back.
    pub async fn close(&self) {
        match self {
            Db::Postgres(pool) => pool.close().await,
            Db::Sqlite(pool) => pool.close().await,
        }
    }
}

/// What `with_pool!` runs on: the `Db`, or a handle on one of its areas.
pub(crate) trait OnDb {
    fn db(&self) -> &Db;

    /// `"postgres"` or `"sqlite"`.
    fn backend(&self) -> &'static str {
        self.db().backend()
    }
}

impl OnDb for Db {
    fn db(&self) -> &Db {
        self
    }
}

/// Declares a handle on one area of the store: a `Db` clone that reaches
/// the methods of that area only.
macro_rules! handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub(crate) $crate::db::Db);

        impl $crate::db::OnDb for $name {
            fn db(&self) -> &$crate::db::Db {
                &self.0
            }
        }
    };
}
pub(crate) use handle;

/// How one backend stores a timestamp.
pub(crate) trait Stamp {
    type Raw;
    fn enc(at: DateTime<Utc>) -> Self::Raw;
    fn dec(raw: Self::Raw) -> Result<DateTime<Utc>>;

    fn dec_opt(raw: Option<Self::Raw>) -> Result<Option<DateTime<Utc>>> {
        raw.map(Self::dec).transpose()
    }
}

/// PostgreSQL: `timestamptz`.
pub(crate) struct PgTime;

impl Stamp for PgTime {
    type Raw = DateTime<Utc>;
    fn enc(at: DateTime<Utc>) -> DateTime<Utc> {
        at.trunc_subsecs(3)
    }
    fn dec(raw: DateTime<Utc>) -> Result<DateTime<Utc>> {
        Ok(raw)
    }
}

/// SQLite: INTEGER milliseconds since the epoch.
pub(crate) struct SqliteTime;

impl Stamp for SqliteTime {
    type Raw = i64;
    fn enc(at: DateTime<Utc>) -> i64 {
        at.timestamp_millis()
    }
    fn dec(raw: i64) -> Result<DateTime<Utc>> {
        DateTime::from_timestamp_millis(raw).ok_or(Error::BadValue { what: "timestamp" })
    }
}

/// Runs `$body` with `$pool` bound to the backend's pool and `$T` to its
/// timestamp codec; the body is type-checked once per backend.
macro_rules! with_pool {
    ($db:expr, |$pool:ident, $T:ident| $body:expr) => {
        match $crate::db::OnDb::db($db) {
            $crate::db::Db::Postgres($pool) => {
                #[allow(dead_code)]
                type $T = $crate::db::PgTime;
                $body
            }
            $crate::db::Db::Sqlite($pool) => {
                #[allow(dead_code)]
                type $T = $crate::db::SqliteTime;
                $body
            }
        }
    };
}
pub(crate) use with_pool;

/// Beginning a transaction that writes. On SQLite it is `BEGIN IMMEDIATE`:
/// the write lock is taken at the start, so a transaction that reads before
/// it writes waits its turn (the busy timeout) instead of failing with
/// `database is locked` when another connection committed after its read
/// began, which a deferred transaction in WAL mode does at once.
pub(crate) trait BeginWrite {
    type Database: sqlx::Database;
    async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, Self::Database>>;
}

impl BeginWrite for PgPool {
    type Database = sqlx::Postgres;
    async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Postgres>> {
        self.begin().await
    }
}

impl BeginWrite for SqlitePool {
    type Database = sqlx::Sqlite;
    async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        self.begin_with("BEGIN IMMEDIATE").await
    }
}

/// Reads column `column` of `row`.
pub(crate) fn col<'r, R, V>(row: &'r R, column: &'static str) -> Result<V>
where
    R: sqlx::Row,
    V: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    &'static str: sqlx::ColumnIndex<R>,
{
    row.try_get(column).map_err(|source| Error::Decode {
        backend: <R::Database as sqlx::Database>::NAME,
        column,
        source,
    })
}

/// A count or size as the signed 64-bit integer both backends store.
pub(crate) fn to_i64(value: u64, what: &'static str) -> Result<i64> {
    i64::try_from(value).map_err(|_| Error::TooLarge { what })
}

/// A stored count back to unsigned; a negative one is malformed.
pub(crate) fn to_u64(value: i64, what: &'static str) -> Result<u64> {
    u64::try_from(value).map_err(|_| Error::BadValue { what })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_keep_milliseconds_on_both_backends() {
        let at = DateTime::from_timestamp(1_700_000_000, 123_456_789).unwrap_or_default();
        let pg = PgTime::dec(PgTime::enc(at)).unwrap_or_default();
        let lite = SqliteTime::dec(SqliteTime::enc(at)).unwrap_or_default();
        assert_eq!(pg, lite);
        assert_eq!(pg.timestamp_subsec_nanos(), 123_000_000);
        assert!(SqliteTime::dec(i64::MAX).is_err());
    }

    #[test]
    fn counts_convert_without_panicking() {
        assert!(to_i64(u64::MAX, "items").is_err());
        assert_eq!(to_i64(7, "items").ok(), Some(7));
        assert!(to_u64(-1, "items").is_err());
    }

    #[test]
    fn the_default_url_is_a_local_sqlite_file() {
        assert_eq!(default_url(), "sqlite://.dragnet/dragnet.db");
    }
}
