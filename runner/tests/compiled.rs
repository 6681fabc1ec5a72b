//! Compiled workflow versions, on both backends: a version whose
//! documents were all uploaded is compiled once and shared by every later
//! start of it; one that reads its document from the workflows_dir is
//! compiled again at every start and sees the folder as it is then; two
//! teams' versions of the same name and number are never shared.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{ensure, Result};
use chrono::Utc;
use dragnet_core::clock::SystemClock;
use dragnet_runner::compile::{self, Compiled};
use dragnet_runner::{Error, Launcher, RunnerConfig};
use dragnet_store::{on_both_backends, Db, NewVersion};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

on_both_backends!(
    an_uploaded_version_is_compiled_once,
    a_version_reading_the_folder_is_compiled_at_each_start,
    teams_never_share_a_compiled_version
);

const DOCUMENT: &str = r#"
openapi: 3.0.0
info: { title: things, version: "1" }
paths:
  /things:
    get:
      operationId: listThings
      responses: { "200": { description: ok } }
"#;

/// A workflow of one step calling `api.{tool}`, its document at `api.yaml`.
fn workflow(name: &str, step: &str, tool: &str) -> String {
    format!(
        "name: {name}\nproviders:\n  api:\n    openapi: api.yaml\n    base_url: http://127.0.0.1:9\n\
         steps:\n  - id: {step}\n    tool: api.{tool}\n"
    )
}

/// Pushes `source` as the next version of `team`'s workflow `name`.
async fn push(db: &Db, team: &str, name: &str, source: &str, uploaded: bool) -> Result<i64> {
    let mut documents = BTreeMap::new();
    if uploaded {
        documents.insert("api.yaml".to_string(), DOCUMENT.to_string());
    }
    let hash = format!("{team}/{name}/{}", source.len());
    let pushed = db
        .workflows()
        .push_workflow(
            NewVersion {
                team_id: team,
                name,
                file_name: &format!("{name}.yaml"),
                source,
                documents: &documents,
                content_hash: &hash,
            },
            Utc::now(),
        )
        .await?;
    Ok(pushed.version)
}

fn launcher(db: &Db, workflows_dir: Option<&Path>) -> Launcher {
    let config = RunnerConfig {
        workflows_dir: workflows_dir.map(Path::to_path_buf),
        ..RunnerConfig::default()
    };
    Launcher::new(
        db.clone(),
        config,
        Arc::new(SystemClock),
        TaskTracker::new(),
        CancellationToken::new(),
    )
}

async fn an_uploaded_version_is_compiled_once(db: Db) -> Result<()> {
    db.teams().create_team("t1", "team one", Utc::now()).await?;
    let version = push(&db, "t1", "wf", &workflow("wf", "one", "listThings"), true).await?;
    let launcher = launcher(&db, None);
    let first = compile::version(&launcher, "t1", "wf", version).await?;
    let again = compile::version(&launcher, "t1", "wf", version).await?;
    ensure!(
        Arc::ptr_eq(&first, &again),
        "the second start reuses the first compile"
    );
    let (current, at) = compile::current(&launcher, "t1", "wf").await?;
    ensure!(
        at == version && Arc::ptr_eq(&first, &current),
        "and so does the current version"
    );
    ensure!(launcher.compiled().len() == 1, "one version kept");
    Ok(())
}

async fn a_version_reading_the_folder_is_compiled_at_each_start(db: Db) -> Result<()> {
    let dir = dragnet_store::testing::temp_dir("compiled-folder");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("api.yaml"), DOCUMENT)?;
    db.teams().create_team("t1", "team one", Utc::now()).await?;
    let version = push(&db, "t1", "wf", &workflow("wf", "one", "listThings"), false).await?;
    let launcher = launcher(&db, Some(&dir));
    let first = compile::version(&launcher, "t1", "wf", version).await?;
    ensure!(first.steps.len() == 1, "compiled from the folder");
    ensure!(
        launcher.compiled().is_empty(),
        "not kept: the folder may change"
    );
    std::fs::write(
        dir.join("api.yaml"),
        DOCUMENT.replace("listThings", "listOthers"),
    )?;
    let after = compile::version(&launcher, "t1", "wf", version).await;
    ensure!(
        matches!(after, Err(Error::InvalidWorkflow(_))),
        "the next start reads the folder as it is now: {:?}",
        after.map(|wf| wf.name.clone())
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

async fn teams_never_share_a_compiled_version(db: Db) -> Result<()> {
    for team in ["t1", "t2"] {
        db.teams().create_team(team, team, Utc::now()).await?;
    }
    let one = push(
        &db,
        "t1",
        "wf",
        &workflow("wf", "from_one", "listThings"),
        true,
    )
    .await?;
    let two = push(
        &db,
        "t2",
        "wf",
        &workflow("wf", "from_two", "listThings"),
        true,
    )
    .await?;
    ensure!(one == two, "the same name and version number in both teams");
    let launcher = launcher(&db, None);
    let a = compile::version(&launcher, "t1", "wf", one).await?;
    let b = compile::version(&launcher, "t2", "wf", two).await?;
    ensure!(a.steps[0].id.as_str() == "from_one", "team one's own text");
    ensure!(
        b.steps[0].id.as_str() == "from_two",
        "team two's own text, not team one's"
    );
    ensure!(launcher.compiled().len() == 2, "kept apart");
    Ok(())
}

#[test]
fn the_oldest_version_is_dropped_beyond_the_capacity() {
    let kept = Compiled::default();
    let documents = dragnet_engine::workflow::DocumentSource::Confined {
        uploaded: BTreeMap::from([("api.yaml".to_string(), DOCUMENT.to_string())]),
        root: None,
    };
    let source = workflow("w", "one", "listThings");
    let compiled = dragnet_engine::workflow::load_with(Path::new("w.yaml"), &source, &documents)
        .unwrap_or_else(|d| panic!("{d:?}"));
    let wf = Arc::new(compiled);
    let key = |n: i64| compile::VersionKey {
        team_id: "t1".into(),
        name: "w".into(),
        version: n,
    };
    for n in 0..(Compiled::CAPACITY as i64 + 1) {
        kept.keep(key(n), wf.clone());
    }
    assert_eq!(kept.len(), Compiled::CAPACITY);
    assert!(kept.get(&key(0)).is_none(), "the oldest went first");
    assert!(kept.get(&key(Compiled::CAPACITY as i64)).is_some());
}
