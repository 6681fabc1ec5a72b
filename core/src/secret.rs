//! The redacting `Secret` newtype: a secret prints as `[redacted]` in
//! Debug and Display, so it cannot leak into logs or errors.

use std::fmt;

/// A value that must never be printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself, for building a request. Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let secret = Secret::new("s3cr3t");
        assert!(!format!("{secret:?}").contains("s3cr3t"));
        assert_eq!(secret.to_string(), "[redacted]");
        assert_eq!(secret.expose(), "s3cr3t");
    }
}
