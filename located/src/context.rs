//! The compile context: the file being compiled and the problems found so
//! far. Every check reports through it and carries on, so one load names
//! every problem at once.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::cursor::Cursor;
use super::de::{from_cursor, DeError};
use super::diagnostic::{close_matches, Diagnostic, Diagnostics};
use super::yaml::Pos;

pub struct Ctx {
    pub file: PathBuf,
    diags: Vec<Diagnostic>,
}

impl Ctx {
    pub fn new(file: &Path) -> Ctx {
        Ctx {
            file: file.to_path_buf(),
            diags: Vec::new(),
        }
    }

    /// Problems so far; compare before and after a check to see whether it
    /// added any.
    pub fn count(&self) -> usize {
        self.diags.len()
    }

    pub fn at(&mut self, pos: Pos, path: impl std::fmt::Display, message: impl Into<String>) {
        let message: String = message.into();
        self.diags.push(Diagnostic {
            file: self.file.clone(),
            line: pos.line,
            column: pos.column,
            path: path.to_string(),
            message: one_line(&message),
        });
    }

    /// A problem with the node under `c`.
    pub fn error(&mut self, c: &Cursor<'_>, message: impl Into<String>) {
        self.at(c.pos(), &c.path, message);
    }

    /// A problem with `key` of the mapping under `parent`, at the key itself
    /// (or at the mapping when the key is absent).
    pub fn key_error(&mut self, parent: &Cursor<'_>, key: &str, message: impl Into<String>) {
        match parent.key_site(key) {
            Some((pos, path)) => self.at(pos, &path, message),
            None => self.error(parent, message),
        }
    }

    /// A problem with the value of `key` of the mapping under `parent`
    /// (or with the mapping when the key is absent).
    pub fn value_error(&mut self, parent: &Cursor<'_>, key: &str, message: impl Into<String>) {
        match parent.key(key) {
            Some(value) => self.error(&value, message),
            None => self.error(parent, message),
        }
    }

    /// A problem with entry `entry` of the mapping under `section`: at the
    /// value of its `key` when given and present, else at the entry's key.
    pub fn entry_error(
        &mut self,
        section: &Cursor<'_>,
        entry: &str,
        key: Option<&str>,
        message: impl Into<String>,
    ) {
        match (key, section.key(entry)) {
            (Some(key), Some(at)) if at.key(key).is_some() => self.value_error(&at, key, message),
            _ => self.key_error(section, entry, message),
        }
    }

    /// Deserializes a piece of the file; a failure is reported and `None`.
    pub fn deserialize<T: DeserializeOwned>(&mut self, c: &Cursor<'_>) -> Option<T> {
        match from_cursor(c) {
            Ok(v) => Some(v),
            Err(e) => {
                self.serde_error(e, c);
                None
            }
        }
    }

    fn serde_error(&mut self, e: DeError, fallback: &Cursor<'_>) {
        let message = reword(&e.message);
        match e.at {
            Some((pos, path)) => self.at(pos, &path, message),
            None => self.error(fallback, message),
        }
    }

    pub fn finish(self) -> Diagnostics {
        Diagnostics::sorted(self.diags)
    }
}

/// Diagnostics are one line each: a multi-line message (a parser's
/// caret drawing) keeps its first line and its `= note` lines.
pub fn one_line(message: &str) -> String {
    let mut lines = message.lines();
    let mut out = lines.next().unwrap_or_default().trim_end().to_string();
    for line in lines {
        let line = line.trim();
        if let Some(note) = line.strip_prefix("= ") {
            out.push_str("; ");
            out.push_str(note.trim());
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The last non-empty line of a multi-line error (the cron crate puts the
/// expression and a caret first).
pub fn last_line(message: &str) -> &str {
    message
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
}

/// Serde's `unknown field `x`, expected one of `a`, `b`` becomes
/// `unknown field `x`; did you mean a?` or `…; expected one of a, b`;
/// other messages pass through.
pub fn reword(message: &str) -> String {
    let (rest, what) = if let Some(rest) = message.strip_prefix("unknown field `") {
        (rest, "field")
    } else if let Some(rest) = message.strip_prefix("unknown variant `") {
        (rest, "value")
    } else {
        return message.to_string();
    };
    let Some((field, tail)) = rest.split_once('`') else {
        return message.to_string();
    };
    let expected: Vec<&str> = tail
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.is_empty())
        .collect();
    if expected.is_empty() {
        return format!("unknown {what} `{field}`; this mapping takes no fields");
    }
    let close = close_matches(field, expected.iter().copied());
    if close.is_empty() {
        format!(
            "unknown {what} `{field}`; expected one of {}",
            expected.join(", ")
        )
    } else {
        format!(
            "unknown {what} `{field}`; did you mean {}?",
            close.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{last_line, one_line, reword};

    #[test]
    fn rewords_unknown_fields() {
        assert_eq!(
            reword("unknown field `tol`, expected one of `id`, `tool`, `needs`"),
            "unknown field `tol`; did you mean tool?"
        );
        assert_eq!(
            reword("unknown field `zzz`, expected `key` or `values`"),
            "unknown field `zzz`; expected one of key, values"
        );
        assert_eq!(reword("missing field `id`"), "missing field `id`");
        assert_eq!(
            reword("unknown variant `oauth`, expected one of `bearer`, `header`, `basic`"),
            "unknown value `oauth`; expected one of bearer, header, basic"
        );
    }

    #[test]
    fn flattens_multi_line_messages() {
        let pest = "bad: Failed to parse rule:  --> 1:13\n  |\n1 | $.x[?(\n  |   ^---\n  |\n  = expected atom_expr";
        assert_eq!(
            one_line(pest),
            "bad: Failed to parse rule: --> 1:13; expected atom_expr"
        );
        assert_eq!(
            last_line("0 0 25 * * *\n    ^\nHours must be less than 23."),
            "Hours must be less than 23."
        );
    }
}
