//! dragnet-located reads the project's hand-written files — workflows, and
//! the agent gateway's configuration — keeping where every node sits: a
//! positioned YAML tree ([`yaml`]; JSON is YAML), cursors over it that know
//! their path ([`cursor`]), serde deserialisation of any subtree with errors
//! pointing at the offending node ([`de`]), a context collecting every
//! problem at once ([`context`]), the located, sorted diagnostics a failed
//! load returns ([`diagnostic`]), the frame a file is read in ([`load`]),
//! and the rules for names ([`names`]); a node's path is kept as the
//! steps to it and written out only when shown ([`path`]).
#![forbid(unsafe_code)]

pub mod context;
pub mod cursor;
pub mod de;
pub mod diagnostic;
pub mod load;
pub mod names;
pub mod path;
pub mod yaml;

pub use diagnostic::{Diagnostic, Diagnostics};

/// Where something sits in a file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    pub line: usize,
    pub column: usize,
    /// The YAML path, e.g. `steps[2].needs[0]`.
    pub path: String,
}
