//! The crate's one error type. Variants are structured and carry what was
//! being done and on which backend; none holds a password, a connection URL
//! or a stored payload.

use std::path::PathBuf;

/// Which backend an error came from, as shown to people.
pub type Backend = &'static str;

/// A store failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL names neither PostgreSQL nor SQLite.
    #[error("unsupported database URL scheme `{scheme}`: use postgres://…, postgresql://… or sqlite://…")]
    UnsupportedScheme { scheme: String },

    /// The URL could not be read as a URL of this backend.
    #[error("invalid {backend} URL: {reason}")]
    InvalidUrl { backend: Backend, reason: String },

    /// PostgreSQL did not accept a connection.
    #[error("cannot connect to PostgreSQL at {target}: {reason} — {hint}")]
    PostgresUnreachable {
        /// `host:port/database` (never the user's password).
        target: String,
        reason: String,
        hint: &'static str,
    },

    /// The SQLite file (or its folder) could not be created or opened.
    #[error("cannot open SQLite database {path}: {reason}")]
    SqliteOpen { path: PathBuf, reason: String },

    /// The lock serialising first-time setup of a SQLite file could not be
    /// taken.
    #[error("cannot take the setup lock {path}: {reason}")]
    SetupLock { path: PathBuf, reason: String },

    /// A write of a run's attempt whose lease another attempt holds now:
    /// nothing was written (SPEC §9 fencing).
    #[error(
        "run {run_id}: attempt {attempt} no longer holds the run's lease; the write was refused"
    )]
    Fenced { run_id: String, attempt: i64 },

    /// Another process already serves this SQLite store.
    #[error(
        "another `dragnet serve` or `dragnet worker` is already running on the SQLite store {db}; \
         SQLite takes one such process. Stop it, or use PostgreSQL (DATABASE_URL=postgres://…) \
         to run several"
    )]
    StoreServed { db: PathBuf },

    /// Applying the embedded migrations failed.
    #[error("migrating the {backend} schema: {source}")]
    Migrate {
        backend: Backend,
        #[source]
        source: sqlx::migrate::MigrateError,
    },

    /// A statement failed.
    #[error("{backend} {op}: {source}")]
    Query {
        backend: Backend,
        /// What was being done, e.g. `cache.put`.
        op: &'static str,
        #[source]
        source: sqlx::Error,
    },

    /// A column could not be read as the type expected.
    #[error("{backend} reading column `{column}`: {source}")]
    Decode {
        backend: Backend,
        column: &'static str,
        #[source]
        source: sqlx::Error,
    },

    /// A stored cache payload did not decompress to what was written.
    #[error("cache entry of tool `{tool}` is corrupt: {reason}")]
    CorruptEntry { tool: String, reason: &'static str },

    /// A stored row holds a value that cannot be read back.
    #[error("stored {what} is out of range or malformed")]
    BadValue { what: &'static str },

    /// A value does not fit the column it goes to (a count past i64).
    #[error("{what} is too large to store")]
    TooLarge { what: &'static str },

    /// Compressing or decompressing failed.
    #[error("compressing a cache payload: {source}")]
    Compress {
        #[source]
        source: std::io::Error,
    },

    /// A record could not be turned into JSON text.
    #[error("encoding {what} as JSON: {source}")]
    Json {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    /// A row with this name exists already (a team of that name).
    #[error("a {what} named `{name}` exists already")]
    Exists { what: &'static str, name: String },

    /// A row a write refers to does not exist (a team, a token).
    #[error("no {what} `{name}`")]
    Missing { what: &'static str, name: String },

    /// A blocking job (compression) ended abnormally.
    #[error("a background job of the store ended abnormally")]
    Background,

    /// A setting outside the range it takes (a pool's size, a lease's
    /// length).
    #[error("{what} of {value} {unit}: give from {min} to {max}")]
    OutOfRange {
        /// What was given, e.g. `a pool`.
        what: &'static str,
        value: u64,
        /// What `value`, `min` and `max` count, e.g. `connections`.
        unit: &'static str,
        min: u64,
        max: u64,
    },
}

impl Error {
    /// Whether the same write, tried again shortly, may succeed: the
    /// connection was lost or not to be had in time, the database gave up
    /// on the transaction to break a conflict (PostgreSQL's serialization
    /// failure and deadlock, a lock not available, a server shutting down
    /// or refusing connections for now), or SQLite's file was busy or
    /// locked past the busy timeout. Not a refusal (`Fenced`), a row that
    /// breaks a constraint, a value that cannot be read or written, a
    /// missing or existing row, or a failure to open or migrate a store:
    /// those fail the same way every time.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Query { source, .. } => transient(source),
            Error::UnsupportedScheme { .. }
            | Error::InvalidUrl { .. }
            | Error::PostgresUnreachable { .. }
            | Error::SqliteOpen { .. }
            | Error::SetupLock { .. }
            | Error::Fenced { .. }
            | Error::StoreServed { .. }
            | Error::Migrate { .. }
            | Error::Decode { .. }
            | Error::CorruptEntry { .. }
            | Error::BadValue { .. }
            | Error::TooLarge { .. }
            | Error::Compress { .. }
            | Error::Json { .. }
            | Error::Exists { .. }
            | Error::Missing { .. }
            | Error::Background
            | Error::OutOfRange { .. } => false,
        }
    }

    /// A closure mapping a sqlx error of `op` on `backend`.
    pub(crate) fn query(backend: Backend, op: &'static str) -> impl FnOnce(sqlx::Error) -> Error {
        move |source| Error::Query {
            backend,
            op,
            source,
        }
    }
}

/// Whether a statement that failed with `e` may succeed tried again.
fn transient(e: &sqlx::Error) -> bool {
    match e {
        // The connection broke, the pool had none free in time, or SQLite's
        // worker thread for the connection died (the pool opens another).
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
                postgres_transient(pg.code())
            } else if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                db.code()
                    .and_then(|code| code.parse::<i32>().ok())
                    .is_some_and(sqlite_transient)
            } else {
                false
            }
        }
        _ => false,
    }
}

/// PostgreSQL's SQLSTATEs worth a new try: connection exceptions (class
/// 08), serialization failure and deadlock (40001, 40P01), a lock not
/// available (55P03), too many connections (53300), and a server shutting
/// down or starting (57P01, 57P02, 57P03).
fn postgres_transient(sqlstate: &str) -> bool {
    sqlstate.starts_with("08")
        || matches!(
            sqlstate,
            "40001" | "40P01" | "55P03" | "53300" | "57P01" | "57P02" | "57P03"
        )
}

/// SQLite's extended result codes whose primary code is SQLITE_BUSY (5) or
/// SQLITE_LOCKED (6): another connection held the lock past the busy
/// timeout.
fn sqlite_transient(extended: i32) -> bool {
    matches!(extended & 0xff, 5 | 6)
}

/// What the cache port of dragnet-core sees: the message only.
impl From<Error> for dragnet_core::ports::cache::StoreError {
    fn from(e: Error) -> Self {
        dragnet_core::ports::cache::StoreError(e.to_string())
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_of_conflicts_and_lost_connections_are_transient() {
        for code in [
            "40001", "40P01", "55P03", "53300", "57P01", "08006", "08001",
        ] {
            assert!(postgres_transient(code), "{code}");
        }
        // Unique, foreign key, not null, check; syntax; undefined table.
        for code in [
            "23505", "23503", "23502", "23514", "42601", "42P01", "22P02",
        ] {
            assert!(!postgres_transient(code), "{code}");
        }
    }

    #[test]
    fn sqlite_busy_and_locked_are_transient_whatever_their_extension() {
        // SQLITE_BUSY, SQLITE_LOCKED, SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE.
        for code in [5, 6, 517, 262] {
            assert!(sqlite_transient(code), "{code}");
        }
        // SQLITE_CONSTRAINT_UNIQUE, _TRIGGER, SQLITE_ERROR, SQLITE_READONLY.
        for code in [2067, 1811, 1, 8] {
            assert!(!sqlite_transient(code), "{code}");
        }
    }

    #[test]
    fn refusals_and_bad_values_are_not_transient() {
        let fenced = Error::Fenced {
            run_id: "r".into(),
            attempt: 2,
        };
        assert!(!fenced.is_transient());
        assert!(!Error::BadValue { what: "timestamp" }.is_transient());
        let lost = Error::Query {
            backend: "postgres",
            op: "runs.write",
            source: sqlx::Error::PoolTimedOut,
        };
        assert!(lost.is_transient());
        let missing = Error::Query {
            backend: "sqlite",
            op: "runs.write",
            source: sqlx::Error::RowNotFound,
        };
        assert!(!missing.is_transient());
    }
}
