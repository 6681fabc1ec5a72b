//! `ResultId`: the opaque name of a stored result — `res_` and 32 hex
//! digits of randomness (128 bits), so ids cannot be guessed or counted.
//! Text that does not have that shape is refused before any lookup.

use std::fmt;

/// A stored result's id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResultId(String);

const PREFIX: &str = "res_";
const HEX: usize = 32;

impl ResultId {
    /// A fresh id.
    pub fn new() -> ResultId {
        let bits: u128 = rand::random();
        ResultId(format!("{PREFIX}{bits:032x}"))
    }

    /// `text` as an id, when it has an id's shape.
    pub fn parse(text: &str) -> Option<ResultId> {
        let hex = text.strip_prefix(PREFIX)?;
        (hex.len() == HEX && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| ResultId(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ResultId {
    fn default() -> Self {
        ResultId::new()
    }
}

impl fmt::Display for ResultId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_fresh_and_only_their_shape_parses() {
        let a = ResultId::new();
        let b = ResultId::new();
        assert_ne!(a, b);
        assert_eq!(ResultId::parse(a.as_str()), Some(a.clone()));
        assert_eq!(a.as_str().len(), 4 + 32);
        for bad in [
            "",
            "res_",
            "res_XYZ",
            "run_0123",
            &format!("{a}0"),
            "res_0123456789abcdef0123456789ABCDEF",
        ] {
            assert!(ResultId::parse(bad).is_none(), "{bad}");
        }
    }
}
