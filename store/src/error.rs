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
    /// A closure mapping a sqlx error of `op` on `backend`.
    pub(crate) fn query(backend: Backend, op: &'static str) -> impl FnOnce(sqlx::Error) -> Error {
        move |source| Error::Query {
            backend,
            op,
            source,
        }
    }
}

/// What the cache seam of dragnet-steps sees: the message only.
impl From<Error> for dragnet_steps::cache::StoreError {
    fn from(e: Error) -> Self {
        dragnet_steps::cache::StoreError(e.to_string())
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
