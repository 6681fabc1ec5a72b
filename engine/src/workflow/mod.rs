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
mod incremental;
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
use dragnet_located::{context, cursor, path, yaml};

use std::path::Path;

pub use diagnostic::{Diagnostic, Diagnostics};
pub use documents::DocumentSource;

/// Reads and compiles the workflow file at `path`. An unreadable file is
/// one diagnostic at 1:1.
pub fn load(path: &Path) -> Result<model::Workflow, Diagnostics> {
    let text = dragnet_located::load::read(path, "workflow file")?;
    load_str(path, &text)
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
    let kind = dragnet_located::load::Kind {
        when_empty: "the file is empty; a workflow needs `name`, `providers` and `steps`",
        when_failed: "the workflow could not be compiled",
    };
    dragnet_located::load::load(source, text, kind, |cx, root| {
        compile::compile(cx, root, source, documents)
    })
}

/// The JSON Schema (draft-07) of the workflow file format.
pub fn json_schema() -> serde_json::Value {
    schema::json_schema()
}
