//! The runner's one error type: why a run could not be submitted,
//! started or scheduled. The API maps each variant to its answer.

use dragnet_engine::workflow::Diagnostics;

/// Why a run could not be submitted, started or scheduled.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The team has no such workflow (or version, or run).
    #[error("no {what} `{name}`")]
    NotFound { what: &'static str, name: String },

    /// The workflow's stored text no longer compiles.
    #[error("the workflow file has {} problem(s)", .0.len())]
    InvalidWorkflow(Diagnostics),

    /// An input value does not fit the workflow's inputs.
    #[error("input `{name}`: {message}")]
    InvalidInput { name: String, message: String },

    /// A rerun `from` a step the workflow version does not have.
    #[error(
        "`{step}` is not a step of `{workflow}` version {version}; its steps: {}",
        .steps.join(", ")
    )]
    UnknownStep {
        step: String,
        workflow: String,
        version: i64,
        steps: Vec<String>,
    },

    /// The `Idempotency-Key` was used within 24 hours for another request.
    #[error("this Idempotency-Key was used within 24 hours for another request")]
    KeyReused,

    /// Compiling ended abnormally (its blocking task panicked).
    #[error("compiling the workflow ended abnormally")]
    CompileAborted,

    /// A schedule's stored trigger does not parse.
    #[error("{message}")]
    BadSchedule {
        schedule_id: String,
        message: String,
    },

    /// A backfill that cannot be made: its window, its concurrency, a
    /// workflow without schedules.
    #[error("{message}")]
    BadBackfill { message: String },

    /// This process has stopped taking work.
    #[error("the server is shutting down")]
    ShuttingDown,

    #[error("the store failed")]
    Store(#[from] dragnet_store::Error),

    #[error("the run could not start: {0}")]
    Engine(#[from] dragnet_engine::Error),
}

impl Error {
    pub(crate) fn not_found(what: &'static str, name: impl Into<String>) -> Error {
        Error::NotFound {
            what,
            name: name.into(),
        }
    }
}

/// The runner's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
