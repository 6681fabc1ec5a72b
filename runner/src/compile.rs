//! Workflow text compiled as a server reads it: `openapi:` paths from the
//! documents uploaded with it, else under the workflows_dir, nothing
//! elsewhere; and a team's workflow at its current version.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dragnet_engine::workflow::{self, model::Workflow, Diagnostics, DocumentSource};
use dragnet_store::Db;

use crate::error::{Error, Result};

/// Compiles workflow text with its documents confined to `documents` and
/// `workflows_dir`; the inner `Err` is the file's diagnostics.
pub async fn compile(
    workflows_dir: Option<PathBuf>,
    file_name: &str,
    source: String,
    documents: BTreeMap<String, String>,
) -> Result<Result<Workflow, Diagnostics>> {
    let documents = DocumentSource::Confined {
        uploaded: documents,
        root: workflows_dir,
    };
    let file = file_name.to_string();
    tokio::task::spawn_blocking(move || workflow::load_with(Path::new(&file), &source, &documents))
        .await
        .map_err(|_| Error::CompileAborted)
}

/// Version `version` of the team's workflow `name`, compiled.
pub async fn version(
    db: &Db,
    workflows_dir: Option<PathBuf>,
    team_id: &str,
    name: &str,
    version: i64,
) -> Result<Workflow> {
    let text = db
        .workflows()
        .workflow_version(team_id, name, version)
        .await?
        .ok_or_else(|| Error::not_found("workflow", name))?;
    compile(
        workflows_dir,
        &text.info.file_name,
        text.source,
        text.documents,
    )
    .await?
    .map_err(Error::InvalidWorkflow)
}

/// The team's workflow `name` at its current version, compiled, and that
/// version.
pub async fn current(
    db: &Db,
    workflows_dir: Option<PathBuf>,
    team_id: &str,
    name: &str,
) -> Result<(Workflow, i64)> {
    let current = db
        .workflows()
        .current_version(team_id, name)
        .await?
        .ok_or_else(|| Error::not_found("workflow", name))?;
    let wf = version(db, workflows_dir, team_id, name, current).await?;
    Ok((wf, current))
}
