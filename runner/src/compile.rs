//! Workflow text compiled as a server reads it: `openapi:` paths from the
//! documents uploaded with it, else under the workflows_dir, nothing
//! elsewhere; and a team's workflow at a version, compiled once.
//!
//! A pushed version's text and uploaded documents never change (a new
//! push is a new version; deleting a workflow hides it and keeps its
//! versions), so compiling it again gives the same workflow: a run
//! compiled on submission and again when claimed, or a thousand runs of
//! one version, share one compiled [`Workflow`] from [`Compiled`]. A
//! version that reads a document from the workflows_dir is compiled again
//! each time a run starts, so the run uses the folder as it is then.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dragnet_engine::workflow::{self, model::Workflow, Diagnostics, DocumentSource};

use crate::error::{Error, Result};
use crate::launcher::Launcher;

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
    compile_from(file_name, source, documents)
        .await
        .map(|compiled| compiled.map(|(wf, _)| wf))
}

/// Compiles `source` reading its documents from `documents`; with the
/// workflow, whether every document it read was uploaded with it.
async fn compile_from(
    file_name: &str,
    source: String,
    documents: DocumentSource,
) -> Result<Result<(Workflow, bool), Diagnostics>> {
    let file = file_name.to_string();
    tokio::task::spawn_blocking(move || {
        workflow::load_with(Path::new(&file), &source, &documents).map(|wf| {
            let uploaded = wf
                .providers
                .values()
                .filter_map(|p| p.openapi())
                .all(|p| documents.is_uploaded(&p.document));
            (wf, uploaded)
        })
    })
    .await
    .map_err(|_| Error::CompileAborted)
}

/// Version `version` of the team's workflow `name`, compiled (once, when
/// all its documents were uploaded with it).
pub async fn version(
    launcher: &Launcher,
    team_id: &str,
    name: &str,
    version: i64,
) -> Result<Arc<Workflow>> {
    let key = VersionKey {
        team_id: team_id.to_string(),
        name: name.to_string(),
        version,
    };
    if let Some(wf) = launcher.compiled().get(&key) {
        return Ok(wf);
    }
    let text = launcher
        .db()
        .workflows()
        .workflow_version(team_id, name, version)
        .await?
        .ok_or_else(|| Error::not_found("workflow", name))?;
    let documents = DocumentSource::Confined {
        uploaded: text.documents,
        root: launcher.config().workflows_dir.clone(),
    };
    let (wf, uploaded) = compile_from(&text.info.file_name, text.source, documents)
        .await?
        .map_err(Error::InvalidWorkflow)?;
    let wf = Arc::new(wf);
    if uploaded {
        launcher.compiled().keep(key, wf.clone());
    }
    Ok(wf)
}

/// The team's workflow `name` at its current version, compiled, and that
/// version.
pub async fn current(
    launcher: &Launcher,
    team_id: &str,
    name: &str,
) -> Result<(Arc<Workflow>, i64)> {
    let current = launcher
        .db()
        .workflows()
        .current_version(team_id, name)
        .await?
        .ok_or_else(|| Error::not_found("workflow", name))?;
    let wf = version(launcher, team_id, name, current).await?;
    Ok((wf, current))
}

/// Which version of whose workflow.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VersionKey {
    pub team_id: String,
    pub name: String,
    pub version: i64,
}

/// Compiled versions kept by this process: the [`Compiled::CAPACITY`]
/// most recently compiled, the oldest dropped first.
#[derive(Default)]
pub struct Compiled(Mutex<Kept>);

#[derive(Default)]
struct Kept {
    by_key: HashMap<VersionKey, Arc<Workflow>>,
    /// Keys in the order they were kept.
    order: VecDeque<VersionKey>,
}

impl Compiled {
    /// How many versions are kept at most.
    pub const CAPACITY: usize = 64;

    /// The compiled version `key`, when kept.
    pub fn get(&self, key: &VersionKey) -> Option<Arc<Workflow>> {
        self.lock().by_key.get(key).cloned()
    }

    /// Keeps `wf` as version `key`, dropping the oldest kept beyond
    /// [`Compiled::CAPACITY`].
    pub fn keep(&self, key: VersionKey, wf: Arc<Workflow>) {
        let mut kept = self.lock();
        if kept.by_key.insert(key.clone(), wf).is_none() {
            kept.order.push_back(key);
        }
        while kept.order.len() > Self::CAPACITY {
            if let Some(oldest) = kept.order.pop_front() {
                kept.by_key.remove(&oldest);
            }
        }
    }

    /// How many versions are kept.
    pub fn len(&self) -> usize {
        self.lock().by_key.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The map, whatever a panicking holder left (each change is whole).
    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
