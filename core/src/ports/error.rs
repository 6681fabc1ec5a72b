//! The ports' error: what the implementation of a port reports.
//! A store's own error crosses whole, as its source (a caller may downcast
//! it), with whether trying again may succeed — never as a message alone.

/// Any error a port's implementation hands over.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A port's failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store behind the port failed; its message is the store's own.
    #[error("{source}")]
    Store {
        source: BoxError,
        /// Whether the same call may pass if tried again (a lost
        /// connection, a busy database), as the store judged it.
        transient: bool,
    },
}

impl Error {
    /// The store failed with `source`; `transient` when trying again may
    /// pass.
    pub fn store(source: impl Into<BoxError>, transient: bool) -> Error {
        Error::Store {
            source: source.into(),
            transient,
        }
    }

    /// Whether the failed call may pass if tried again.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Store { transient, .. } => *transient,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("the database went away")]
    struct Gone;

    #[test]
    fn a_store_error_crosses_whole() {
        let e = Error::store(Gone, true);
        assert_eq!(e.to_string(), "the database went away");
        assert!(e.is_transient());
        let source = std::error::Error::source(&e).expect("the store's error");
        assert!(source.downcast_ref::<Gone>().is_some());
        assert!(!Error::store(Gone, false).is_transient());
    }
}
