//! Starting a run of a submitted workflow (or a rerun of an earlier run):
//! its version compiled (documents from the upload, else the
//! workflows_dir), inputs typed, the run's row written `queued` with its
//! idempotency key, and the run itself started as a tracked task of this
//! process. The task waits at the concurrency gate, runs, writes its record
//! as it goes and its stream's events when it ends.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dragnet_engine::run::{
    self, Fanout, RunCache, RunObserver, RunOptions, RunRecord, RunStatus, StepRecord, StepStatus,
    StepType,
};
use dragnet_engine::workflow::{self, model::Workflow, Diagnostics, DocumentSource};
use dragnet_store::{
    Fencing, Lease, NewRun, ObserverOptions, RunOwner, RunPages, StoreObserver, Submitted,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::gate::Slot;
use crate::live::{LiveRun, StreamObserver};
use crate::state::AppState;

/// What a run request asks for.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Input values by name, typed by the workflow's inputs.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub inputs: Map<String, Value>,
    /// Never read the cache.
    #[serde(default)]
    pub experiment: bool,
    /// Bypass cached walks and replace them.
    #[serde(default)]
    pub refresh: bool,
}

/// The run a request started, or the one its idempotency key names.
#[derive(Debug, Clone)]
pub struct Started {
    pub run_id: String,
    pub version: i64,
    /// False when an earlier request with the same key made it.
    pub created: bool,
}

/// Compiles workflow text as the server reads it: `openapi:` paths from
/// `documents`, else under the workflows_dir, nothing elsewhere.
pub async fn compile(
    state: &AppState,
    file_name: &str,
    source: String,
    documents: BTreeMap<String, String>,
) -> ApiResult<Result<Workflow, Diagnostics>> {
    let documents = DocumentSource::Confined {
        uploaded: documents,
        root: state.config().workflows_dir.clone(),
    };
    let file = file_name.to_string();
    tokio::task::spawn_blocking(move || workflow::load_with(Path::new(&file), &source, &documents))
        .await
        .map_err(|_| ApiError::Conflict {
            kind: "compile_failed",
            message: "compiling the workflow ended abnormally".into(),
        })
}

/// The team's workflow `name` at its current version, compiled, and that
/// version.
pub async fn current(state: &AppState, team_id: &str, name: &str) -> ApiResult<(Workflow, i64)> {
    let db = state.db();
    let version = db
        .current_version(team_id, name)
        .await?
        .ok_or_else(|| ApiError::not_found("workflow", name))?;
    let text = db
        .workflow_version(team_id, name, version)
        .await?
        .ok_or_else(|| ApiError::not_found("workflow", name))?;
    let wf = compile(state, &text.info.file_name, text.source, text.documents)
        .await?
        .map_err(ApiError::InvalidWorkflow)?;
    Ok((wf, version))
}

/// Starts a run of the team's workflow `name` (its current version).
pub async fn start(
    state: &AppState,
    caller: &Caller,
    name: &str,
    request: RunRequest,
    idempotency: Option<(&str, &str)>,
) -> ApiResult<Started> {
    if state.stopping().is_cancelled() {
        return Err(ApiError::ShuttingDown);
    }
    let (wf, version) = current(state, caller.team_id(), name).await?;
    let inputs = run::resolve_inputs(&wf, &request.inputs).map_err(|e| match e {
        dragnet_engine::Error::Input { name, message } => ApiError::InvalidInput { name, message },
        other => ApiError::Engine(other),
    })?;
    let now = state.clock().now();
    let run_id = run::new_run_id(now);
    let owner = RunOwner::this_process();
    let db = state.db();
    let trigger = run::trigger_value("api", None);
    let launch_record = LaunchRecord {
        trigger: trigger.clone(),
        experiment: request.experiment,
        refresh: request.refresh,
        rerun_of: None,
        kept: Vec::new(),
    }
    .to_json();
    let source = wf.source.display().to_string();
    let new_run = NewRun {
        run_id: &run_id,
        team_id: caller.team_id(),
        workflow: &wf.name,
        version,
        source: &source,
        inputs: &inputs,
        idempotency,
        launch: Some(&launch_record),
        claim: state.claim_on_submit(),
        trigger: run::RunTrigger::from_value(&trigger).map(|t| t.by(Some(caller.started_by()))),
    };
    let lease = new_run.lease();
    let submitted = db.submit_run(new_run, &owner, now).await?;
    match submitted {
        Submitted::Existing { run_id } => {
            let version = db
                .run_owner(&run_id)
                .await?
                .and_then(|o| o.1)
                .unwrap_or(version);
            return Ok(Started {
                run_id,
                version,
                created: false,
            });
        }
        Submitted::KeyReused => {
            return Err(ApiError::Conflict {
                kind: "idempotency_key_reused",
                message: "this Idempotency-Key was used within 24 hours for another request".into(),
            })
        }
        Submitted::Created => {}
    }
    match lease {
        Some(lease) => {
            let launch = Launch {
                team_id: caller.team_id(),
                run_id: &run_id,
                trigger,
                reuse: HashMap::new(),
                lease,
            };
            spawn_run(state, launch, Arc::new(wf), request, inputs);
        }
        None => crate::claimer::announce(state).await,
    }
    Ok(Started {
        run_id,
        version,
        created: true,
    })
}

/// What a process that did not submit a run needs to start it, kept with
/// the run's row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchRecord {
    pub trigger: Value,
    pub experiment: bool,
    pub refresh: bool,
    /// A rerun: the run whose steps `kept` it keeps.
    pub rerun_of: Option<String>,
    pub kept: Vec<String>,
}

impl LaunchRecord {
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "trigger": self.trigger,
            "experiment": self.experiment,
            "refresh": self.refresh,
            "rerun_of": self.rerun_of,
            "kept": self.kept,
        })
    }

    /// Reads what `to_json` wrote; anything missing keeps its default.
    pub fn from_json(value: &Value) -> LaunchRecord {
        LaunchRecord {
            trigger: value.get("trigger").cloned().unwrap_or(Value::Null),
            experiment: value["experiment"].as_bool().unwrap_or(false),
            refresh: value["refresh"].as_bool().unwrap_or(false),
            rerun_of: value["rerun_of"].as_str().map(String::from),
            kept: value["kept"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// Starts a new run of the run `original` ran: the same workflow version
/// and inputs. With `from`, the succeeded tool steps that neither are
/// `from` nor depend on it keep their recorded outputs; the rest run again.
pub async fn rerun(
    state: &AppState,
    caller: &Caller,
    original: &RunRecord,
    version: i64,
    from: Option<&str>,
) -> ApiResult<Started> {
    if state.stopping().is_cancelled() {
        return Err(ApiError::ShuttingDown);
    }
    let db = state.db();
    let text = db
        .workflow_version(caller.team_id(), &original.workflow, version)
        .await?
        .ok_or_else(|| ApiError::not_found("workflow", &original.workflow))?;
    let wf = compile(state, &text.info.file_name, text.source, text.documents)
        .await?
        .map_err(ApiError::InvalidWorkflow)?;
    let mut reuse = HashMap::new();
    if let Some(step) = from {
        let Some(index) = wf.steps.iter().position(|s| s.id.as_str() == step) else {
            return Err(ApiError::Rejected {
                kind: "unknown_step",
                message: format!(
                    "`{step}` is not a step of `{}` version {version}; its steps: {}",
                    wf.name,
                    wf.steps
                        .iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
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
    let inputs = run::resolve_inputs(&wf, &given).map_err(ApiError::Engine)?;
    let now = state.clock().now();
    let run_id = run::new_run_id(now);
    let source = wf.source.display().to_string();
    let mut trigger = run::trigger_value("rerun", None);
    if let Some(obj) = trigger.as_object_mut() {
        obj.insert("rerun_of".into(), Value::String(original.run_id.clone()));
        obj.insert(
            "from".into(),
            from.map_or(Value::Null, |f| Value::String(f.into())),
        );
    }
    let launch_record = LaunchRecord {
        trigger: trigger.clone(),
        rerun_of: Some(original.run_id.clone()),
        kept: reuse.keys().cloned().collect(),
        ..LaunchRecord::default()
    }
    .to_json();
    let new_run = NewRun {
        run_id: &run_id,
        team_id: caller.team_id(),
        workflow: &wf.name,
        version,
        source: &source,
        inputs: &inputs,
        idempotency: None,
        launch: Some(&launch_record),
        claim: state.claim_on_submit(),
        trigger: run::RunTrigger::from_value(&trigger).map(|t| t.by(Some(caller.started_by()))),
    };
    let lease = new_run.lease();
    db.submit_run(new_run, &RunOwner::this_process(), now)
        .await?;
    // Written claimed: this process runs it; else anyone with room.
    if lease.is_none() {
        crate::claimer::announce(state).await;
    }
    if let Some(lease) = lease {
        let launch = Launch {
            team_id: caller.team_id(),
            run_id: &run_id,
            trigger,
            reuse,
            lease,
        };
        let request = RunRequest {
            inputs: given,
            ..RunRequest::default()
        };
        spawn_run(state, launch, Arc::new(wf), request, inputs);
    }
    Ok(Started {
        run_id,
        version,
        created: true,
    })
}

/// Whose run it is, its id, what `$.trigger` holds, the steps it keeps
/// (of an earlier run, or its own finished ones when taken over), and the
/// lease it runs under.
pub struct Launch<'a> {
    pub team_id: &'a str,
    pub run_id: &'a str,
    pub trigger: Value,
    pub reuse: HashMap<String, StepRecord>,
    pub lease: Lease,
}

/// Runs a run whose row is written as a tracked task; returns at once.
pub fn spawn_run(
    state: &AppState,
    launch: Launch<'_>,
    wf: Arc<Workflow>,
    request: RunRequest,
    inputs: Value,
) {
    let Launch {
        team_id,
        run_id,
        trigger,
        reuse,
        lease,
    } = launch;
    let cancel = state.halt().child_token();
    let live = state.live().add(run_id, team_id, cancel.clone());
    // A cancel asked for through another process arrives with a renewal.
    let cancel_requested = cancel.clone();
    let config = state.config();
    let cache = (config.cache_mode != dragnet_steps::cache::CacheMode::Off).then(|| RunCache {
        store: Arc::new(state.db().clone()),
        mode: config.cache_mode,
        // Entries are the team's own: no team reads another's.
        org: format!("team:{team_id}"),
        experiment: request.experiment,
        refresh: request.refresh,
    });
    let options = RunOptions {
        run_id: Some(run_id.to_string()),
        inputs: request.inputs,
        trigger,
        reuse,
        concurrency: config.step_concurrency.max(1),
        limits: config.limits.clone(),
        // Credentials are the team's secrets (read when the run starts),
        // never this process's environment.
        env: Arc::new(|_| None),
        cancel,
        cache,
        clock: state.clock().clone(),
        // Pages its walks fetch are kept: a process taking it over
        // continues from there.
        journal: Some(Arc::new(RunPages::new(state.db().clone(), lease.clone()))),
        hosts: Some(config.upstream_hosts.clone()),
        ..RunOptions::default()
    };
    let state = state.clone();
    // Every write of the run is fenced by its lease; losing the lease (a
    // refused write or renewal) stops the run here.
    let lost = CancellationToken::new();
    let queued_lease = lease.clone();
    let store = Arc::new(StoreObserver::start(
        state.db().clone(),
        state.clock().clone(),
        ObserverOptions {
            heartbeat: (config.lease.get() / 3).max(Duration::from_millis(100)),
            fencing: Some(Fencing {
                lease,
                length: config.lease,
                lost: lost.clone(),
                cancel_requested,
            }),
            ..ObserverOptions::default()
        },
        state.tracker(),
        state.halt().child_token(),
    ));
    let observer = Arc::new(StreamObserver::new(
        live.clone(),
        Arc::new(Fanout(vec![
            store.clone(),
            Arc::new(crate::metrics::MetricsObserver::new(
                state.metrics().clone(),
                &wf,
            )),
        ])),
    ));
    live.announce_queued(&wf.name);
    let team = team_id.to_string();
    let waiting = options.cancel.clone();
    let span = tracing::info_span!("run", run_id = %run_id, workflow = %wf.name, team = %team_id);
    let tracker = state.tracker().clone();
    let task = async move {
        let ended = match wait_for_slot(&state, &live, &team, &wf, &waiting, &queued_lease, &lost)
            .await
        {
            Ok(_slot) => {
                let mut options = options;
                options.secrets = Some(Arc::new(run_secrets(&state, &team, &wf).await));
                let stop = options.cancel.clone();
                let running = run::run(wf.clone(), options, observer.clone());
                tokio::pin!(running);
                let mut told = false;
                let ran = loop {
                    tokio::select! {
                        ran = &mut running => break ran,
                        () = lost.cancelled(), if !told => {
                            told = true;
                            tracing::warn!(run_id = %live.run_id, "the run's lease was taken over: this process gives the run up");
                            stop.cancel();
                        }
                    }
                };
                match ran {
                    Ok(record) => record.status,
                    Err(error) => {
                        // The workflow compiled and its inputs were typed, so
                        // this is rare; the run is recorded failed.
                        tracing::error!(run_id = %live.run_id, %error, "a run could not start");
                        let record =
                            unstarted(&wf, &live.run_id, &state, inputs, RunStatus::Failed);
                        RunObserver::run_finished(observer.as_ref(), &record);
                        RunStatus::Failed
                    }
                }
            }
            Err(status) => {
                let record = unstarted(&wf, &live.run_id, &state, inputs, status);
                RunObserver::run_finished(observer.as_ref(), &record);
                status
            }
        };
        let handed_back = live.is_handed_back() && !lost.is_cancelled();
        // The record is stored: now the stream may end.
        store.close().await;
        if handed_back {
            // Its writer has stopped: the run is anyone's to claim now.
            match state.db().hand_back(&queued_lease).await {
                Ok(true) => {
                    tracing::info!(run_id = %live.run_id, "the run is handed back for another process to resume");
                    crate::claimer::announce(&state).await;
                }
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(run_id = %live.run_id, %error, "handing the run back failed: it is taken over once its lease expires")
                }
            }
        }
        observer.end();
        // A run given up or handed back is another process's now: its
        // events are not ours.
        if !lost.is_cancelled() && !handed_back {
            // It ended here: the pages kept for a takeover go.
            if ended != RunStatus::Running {
                if let Err(error) = state.db().forget_pages(&live.run_id).await {
                    tracing::warn!(run_id = %live.run_id, %error, "the run's kept pages could not be deleted");
                }
            }
            if let Err(error) = state
                .db()
                .append_run_events(&live.run_id, &live.all_events())
                .await
            {
                tracing::error!(run_id = %live.run_id, %error, "the run's events could not be stored");
            }
        }
        state.live().remove(&live.run_id);
    };
    tracker.spawn(tracing::Instrument::instrument(task, span));
}

/// The team's secrets the run's workflow names, opened; a store failure
/// is logged and leaves them out (the steps needing one fail saying so).
async fn run_secrets(
    state: &AppState,
    team_id: &str,
    wf: &Workflow,
) -> HashMap<String, dragnet_steps::http::Secret> {
    crate::secrets::for_run(state, team_id, wf)
        .await
        .unwrap_or_else(|error| {
            tracing::error!(%error, "the run's team secrets could not be read");
            HashMap::new()
        })
}

/// Waits, queued, for the run's concurrency slots, renewing its lease
/// (and heartbeat) every third of the lease. A run cancelled while waiting
/// ends `cancelled`; one the server stops for is handed back; one
/// whose lease another attempt took is given up (`lost` is cancelled and
/// nothing more is written).
async fn wait_for_slot(
    state: &AppState,
    live: &LiveRun,
    team_id: &str,
    wf: &Workflow,
    cancel: &CancellationToken,
    lease: &Lease,
    lost: &CancellationToken,
) -> Result<Slot, RunStatus> {
    let enter = state.gate().enter(team_id, &wf.name, wf.concurrency);
    tokio::pin!(enter);
    let length = state.config().lease;
    let every = (length.get() / 3).max(Duration::from_millis(100));
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            slot = &mut enter => return Ok(slot),
            () = cancel.cancelled() => {
                return Err(match live.is_handed_back() {
                    true => RunStatus::Queued,
                    false => RunStatus::Cancelled,
                })
            }
            () = state.stopping().cancelled() => {
                // Queued: it goes back at once for another process.
                live.hand_back();
                return Err(RunStatus::Queued);
            }
            _ = beat.tick() => {
                match state.db().renew_lease(lease, length).await {
                    Ok(Some(renewal)) => {
                        if renewal.cancel_requested {
                            cancel.cancel();
                        }
                        if let Err(error) = state.db().heartbeat(&live.run_id, state.clock().now()).await {
                            tracing::warn!(run_id = %live.run_id, %error, "a queued run's heartbeat");
                        }
                    }
                    Ok(None) => {
                        tracing::warn!(run_id = %live.run_id, "the queued run's lease was taken over: this process gives the run up");
                        lost.cancel();
                        return Err(RunStatus::Interrupted);
                    }
                    Err(error) => {
                        tracing::warn!(run_id = %live.run_id, %error, "renewing a queued run's lease");
                    }
                }
            }
        }
    }
}

/// The record of a run that ended without running: every step ends with
/// the run's status and says why.
fn unstarted(
    wf: &Workflow,
    run_id: &str,
    state: &AppState,
    inputs: Value,
    status: RunStatus,
) -> RunRecord {
    let now = state.clock().now();
    let (step_status, reason) = match status {
        RunStatus::Cancelled => (StepStatus::Cancelled, "the run was cancelled while queued"),
        RunStatus::Interrupted => (
            StepStatus::Interrupted,
            "the server stopped while the run was queued",
        ),
        _ => (StepStatus::Failed, "the run could not start"),
    };
    RunRecord {
        run_id: run_id.to_string(),
        workflow: wf.name.clone(),
        source: wf.source.display().to_string(),
        status,
        started_at: now,
        finished_at: Some(now),
        duration_ms: 0,
        inputs,
        // The row written at submit keeps what started it.
        trigger: None,
        steps: wf
            .steps
            .iter()
            .map(|s| {
                let kind = match s.kind {
                    dragnet_engine::workflow::model::StepKind::Branch(_) => StepType::Branch,
                    _ => StepType::Tool,
                };
                let mut step = StepRecord::pending(s.id.as_str(), kind);
                step.status = step_status;
                step.reason = Some(reason.to_string());
                step
            })
            .collect(),
    }
}

/// Stops every running run now and hands each back (SPEC §9): another
/// process, or this server started again, resumes it.
pub fn hand_back_all(state: &AppState) {
    for run in state.live().all() {
        run.hand_back();
    }
}

/// Cancels run `run_id` of the caller's team; false when it is not running.
///
/// A run this process runs stops at once. One another process runs is
/// asked through the store: its holder reads the request at its next
/// heartbeat (a third of the lease) and stops it there. One nobody holds
/// (queued and unclaimed, or its process gone) is claimed here and
/// recorded cancelled. False when it has ended.
pub async fn cancel(state: &AppState, caller: &Caller, run_id: &str) -> ApiResult<bool> {
    if let Some(live) = state.live().get(run_id) {
        if live.team_id == caller.team_id() {
            live.cancel.cancel();
            return Ok(true);
        }
    }
    let db = state.db();
    if !db.request_cancel(run_id).await? {
        return Ok(false);
    }
    let claimed = db
        .claim_unheld(run_id, state.lease_owner(), state.config().lease)
        .await?;
    if let Some(lease) = claimed {
        crate::claimer::end_unstarted(
            state,
            &lease,
            RunStatus::Cancelled,
            "the run was cancelled while queued",
        )
        .await;
    }
    Ok(true)
}
