//! A step's id: the vocabulary the workflow model and refs both name
//! (`$.steps.<id>`), below both.

use std::fmt;

/// A step id: `^[A-Za-z_][A-Za-z0-9_-]*$`, unique in its workflow.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepId(pub String);

impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StepId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
