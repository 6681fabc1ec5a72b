//! What a team asks of its runs (through the API or the UI): start one of
//! a workflow's current version, run an earlier run again (whole, or from
//! a step), cancel one wherever it runs.

use std::collections::HashMap;

use dragnet_engine::run::{self, RunRecord, RunStatus};
use serde_json::{Map, Value};

use crate::compile;
use crate::error::{Error, Result};
use crate::launch::end_unstarted;
use crate::launch::RunRequest;
use crate::launcher::Launcher;
use crate::submit::{Outcome, Submission, Write};

/// Who asks: the team, and who of it (a token's id).
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    pub team_id: &'a str,
    pub started_by: &'a str,
}

/// The run a request started, or the one its idempotency key names.
#[derive(Debug, Clone)]
pub struct Started {
    pub run_id: String,
    pub version: i64,
    /// False when an earlier request with the same key made it.
    pub created: bool,
}

/// Starts a run of the team's workflow `name` (its current version).
pub async fn start(
    launcher: &Launcher,
    asker: Asker<'_>,
    name: &str,
    request: RunRequest,
    idempotency: Option<(&str, &str)>,
) -> Result<Started> {
    if launcher.stopping().is_cancelled() {
        return Err(Error::ShuttingDown);
    }
    let (wf, version) = compile::current(launcher, asker.team_id, name).await?;
    let inputs = run::resolve_inputs(&wf, &request.inputs).map_err(|e| match e {
        dragnet_engine::Error::Input { name, message } => Error::InvalidInput { name, message },
        other => Error::Engine(other),
    })?;
    let submission = Submission {
        team_id: asker.team_id.to_string(),
        workflow: wf,
        version,
        request,
        inputs,
        trigger: run::trigger_value("api", None),
        started_by: Some(asker.started_by.to_string()),
        reuse: HashMap::new(),
        rerun_of: None,
    };
    let now = launcher.clock().now();
    match launcher
        .submit(submission, Write::Request { idempotency }, now)
        .await?
    {
        Outcome::Created { run_id } => Ok(Started {
            run_id,
            version,
            created: true,
        }),
        Outcome::Existing { run_id } => {
            let version = launcher
                .db()
                .runs()
                .run_owner(&run_id)
                .await?
                .and_then(|o| o.1)
                .unwrap_or(version);
            Ok(Started {
                run_id,
                version,
                created: false,
            })
        }
        // A request's row is always written (or names an existing run).
        Outcome::NotWritten => Err(Error::not_found("run", "(not written)")),
    }
}

/// Starts a new run of the run `original` ran: the same workflow version
/// and inputs. With `from`, the succeeded tool steps that neither are
/// `from` nor depend on it keep their recorded outputs; the rest run again.
pub async fn rerun(
    launcher: &Launcher,
    asker: Asker<'_>,
    original: &RunRecord,
    version: i64,
    from: Option<&str>,
) -> Result<Started> {
    if launcher.stopping().is_cancelled() {
        return Err(Error::ShuttingDown);
    }
    let wf = compile::version(launcher, asker.team_id, &original.workflow, version).await?;
    let mut reuse = HashMap::new();
    if let Some(step) = from {
        let Some(index) = wf.steps.iter().position(|s| s.id.as_str() == step) else {
            return Err(Error::UnknownStep {
                step: step.to_string(),
                workflow: wf.name.clone(),
                version,
                steps: wf.steps.iter().map(|s| s.id.as_str().to_string()).collect(),
            });
        };
        let again = dragnet_engine::plan::Plan::new(&wf)
            .map_err(dragnet_engine::Error::from)?
            .downstream(index);
        for (i, s) in wf.steps.iter().enumerate() {
            if again.contains(&i) {
                continue;
            }
            if let Some(kept) = original.step(s.id.as_str()) {
                reuse.insert(kept.id.clone(), kept.clone());
            }
        }
    }
    let given = match &original.inputs {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let inputs = run::resolve_inputs(&wf, &given)?;
    let mut trigger = run::trigger_value("rerun", None);
    if let Some(obj) = trigger.as_object_mut() {
        obj.insert("rerun_of".into(), Value::String(original.run_id.clone()));
        obj.insert(
            "from".into(),
            from.map_or(Value::Null, |f| Value::String(f.into())),
        );
    }
    let submission = Submission {
        team_id: asker.team_id.to_string(),
        workflow: wf,
        version,
        request: RunRequest {
            inputs: given,
            ..RunRequest::default()
        },
        inputs,
        trigger,
        started_by: Some(asker.started_by.to_string()),
        reuse,
        rerun_of: Some(original.run_id.clone()),
    };
    let now = launcher.clock().now();
    let outcome = launcher
        .submit(submission, Write::Request { idempotency: None }, now)
        .await?;
    match outcome {
        Outcome::Created { run_id } | Outcome::Existing { run_id } => Ok(Started {
            run_id,
            version,
            created: true,
        }),
        Outcome::NotWritten => Err(Error::not_found("run", "(not written)")),
    }
}

/// Cancels run `run_id` of team `team_id`; false when it is not running.
///
/// A run this process runs stops at once. One another process runs is
/// asked through the store: its holder reads the request at its next
/// heartbeat (a third of the lease) and stops it there. One nobody holds
/// (queued and unclaimed, or its process gone) is claimed here and
/// recorded cancelled. False when it has ended.
pub async fn cancel(launcher: &Launcher, team_id: &str, run_id: &str) -> Result<bool> {
    if let Some(live) = launcher.live().get(run_id) {
        if live.team_id == team_id {
            live.cancel.cancel();
            return Ok(true);
        }
    }
    let db = launcher.db();
    if !db.leases().request_cancel(run_id).await? {
        return Ok(false);
    }
    let claimed = db
        .leases()
        .claim_unheld(run_id, launcher.lease_owner(), launcher.config().lease)
        .await?;
    if let Some(lease) = claimed {
        end_unstarted(
            launcher,
            &lease,
            RunStatus::Cancelled,
            "the run was cancelled while queued",
        )
        .await;
    }
    Ok(true)
}
