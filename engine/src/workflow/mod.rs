//! The workflow file: format, validation, compiled model.
//!
//! A file is parsed into a positioned YAML tree (`yaml`), read piece by
//! piece through serde types that mirror the format (`file`, `de`), and
//! compiled into `model::Workflow` with every problem collected as a
//! `Diagnostic` carrying file, line, column and YAML path. `json_schema`
//! publishes the format for editors.

pub mod model;

mod compile;
pub mod documents;
pub mod file;
mod graph;
mod looping;
mod providers;
mod schema;
mod sections;
mod steps;
mod template;
mod tool;
mod values;

// Files read with positions kept: shared with the agent gateway's config.
pub use dragnet_located::diagnostic;
use dragnet_located::{context, cursor, yaml};

use std::path::Path;

pub(crate) use context::last_line;
use context::Ctx;
pub use diagnostic::{Diagnostic, Diagnostics};
pub use documents::DocumentSource;
use yaml::Pos;

/// Reads and compiles the workflow file at `path`. An unreadable file is
/// one diagnostic at 1:1.
pub fn load(path: &Path) -> Result<model::Workflow, Diagnostics> {
    match std::fs::read_to_string(path) {
        Ok(text) => load_str(path, &text),
        Err(e) => Err(Diagnostics(vec![Diagnostic {
            file: path.to_path_buf(),
            line: 1,
            column: 1,
            path: String::new(),
            message: format!("cannot read the workflow file: {e}"),
        }])),
    }
}

/// Compiles workflow text. `source` names the file in diagnostics and
/// anchors relative provider document paths.
pub fn load_str(source: &Path, text: &str) -> Result<model::Workflow, Diagnostics> {
    let documents = DocumentSource::Files {
        base: source.parent().unwrap_or(Path::new("")).to_path_buf(),
    };
    load_with(source, text, &documents)
}

/// Compiles workflow text whose provider documents are read from
/// `documents` (a server's uploads and its `workflows_dir`).
pub fn load_with(
    source: &Path,
    text: &str,
    documents: &DocumentSource,
) -> Result<model::Workflow, Diagnostics> {
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
        cx.at(
            Pos::START,
            "",
            "the file is empty; a workflow needs `name`, `providers` and `steps`",
        );
        return Err(cx.finish());
    };
    match compile::compile(&mut cx, &root, source, documents) {
        Some(workflow) if cx.count() == 0 => Ok(workflow),
        _ => {
            if cx.count() == 0 {
                cx.at(root.pos, "", "the workflow could not be compiled");
            }
            Err(cx.finish())
        }
    }
}

/// The JSON Schema (draft-07) of the workflow file format.
pub fn json_schema() -> serde_json::Value {
    schema::json_schema()
}
