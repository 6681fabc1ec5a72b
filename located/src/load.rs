//! The frame every located file is read in: text (a BOM dropped) parsed
//! into the positioned tree, its syntax problems reported, an empty file
//! refused with what it needs, then the caller's compile pass, and every
//! problem returned at once, sorted. Also the check of a mapping's keys
//! against the ones it may have.

use std::path::Path;

use crate::context::{reword, Ctx};
use crate::cursor::Cursor;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::yaml::{self, Node, Pos};

/// What a file is, for the messages of `load`.
pub struct Kind {
    /// Said of an empty file, e.g. "the file is empty; a workflow needs …".
    pub when_empty: &'static str,
    /// Said when the compile pass gave nothing yet reported nothing.
    pub when_failed: &'static str,
}

/// The text of the file at `path`; an unreadable file is one diagnostic
/// at 1:1, "cannot read the `what`: …".
pub fn read(path: &Path, what: &str) -> Result<String, Diagnostics> {
    std::fs::read_to_string(path).map_err(|e| {
        Diagnostics(vec![Diagnostic {
            file: path.to_path_buf(),
            line: 1,
            column: 1,
            path: String::new(),
            message: format!("cannot read the {what}: {e}"),
        }])
    })
}

/// Parses `text` (named `source`) and runs `compile` over its tree; the
/// result only when no problem was found.
pub fn load<T>(
    source: &Path,
    text: &str,
    kind: Kind,
    compile: impl FnOnce(&mut Ctx, &Node) -> Option<T>,
) -> Result<T, Diagnostics> {
    let mut cx = Ctx::new(source);
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let parsed = match yaml::parse(text) {
        Ok(parsed) => parsed,
        Err(problem) => {
            cx.at(problem.pos, "", problem.message);
            return Err(cx.finish());
        }
    };
    for problem in parsed.problems {
        cx.at(problem.pos, "", problem.message);
    }
    let Some(root) = parsed.root else {
        cx.at(Pos::START, "", kind.when_empty);
        return Err(cx.finish());
    };
    match compile(&mut cx, &root) {
        Some(value) if cx.count() == 0 => Ok(value),
        _ => {
            if cx.count() == 0 {
                cx.at(root.pos, "", kind.when_failed);
            }
            Err(cx.finish())
        }
    }
}

/// Reports every key of mapping `map` that is not in `keys`, in serde's
/// words made plain ("did you mean …?").
pub fn check_keys(cx: &mut Ctx, map: &Cursor<'_>, keys: &[&str]) {
    for (key, pos) in map.keys() {
        if !keys.contains(&key) {
            let expected: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
            let serde_like = format!(
                "unknown field `{key}`, expected one of {}",
                expected.join(", ")
            );
            cx.at(pos, map.path.key(key), reword(&serde_like));
        }
    }
}
