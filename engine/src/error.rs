//! The one error type of dragnet-engine.

use crate::plan::Cycle;
use crate::workflow::Diagnostics;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workflow file did not validate.
    #[error("{0}")]
    Invalid(#[from] Diagnostics),
    /// The step graph has a cycle.
    #[error("{0}")]
    Cycle(#[from] Cycle),
    /// A run input is unknown, missing or of the wrong type.
    #[error("input `{name}`: {message}")]
    Input { name: String, message: String },
    /// A provider named on the command line does not exist.
    #[error("unknown provider `{name}`; the workflow's providers are: {known}")]
    UnknownProvider { name: String, known: String },
}
