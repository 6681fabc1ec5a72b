//! Running a run whose row is written, as a tracked task of this process:
//! it waits, queued, at the concurrency gate (renewing its lease), runs
//! through the engine with its team's secrets, writes its record as it
//! goes (every write fenced by its lease) and its stream's events when it
//! ends; a run handed back at shutdown is released for another process.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use dragnet_engine::run::{
    self, Fanout, RunCache, RunObserver, RunOptions, RunRecord, RunStatus, StepRecord, StepStatus,
    StepType,
};
use dragnet_engine::workflow::model::Workflow;
use dragnet_store::{
    Fencing, Lease, ObserverOptions, RunOwner, RunPages, StoreObserver, TeamWatermarks,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::gate::{Place, Slot};
use crate::launcher::Launcher;
use crate::live::{LiveRun, StreamObserver};
use crate::task::{self, TaskName};

/// What a run is asked with: its inputs as given, and the cache flags.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Input values by name, typed by the workflow's inputs.
    pub inputs: Map<String, Value>,
    /// Never read the cache.
    pub experiment: bool,
    /// Bypass cached walks and replace them.
    pub refresh: bool,
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

/// Team `team_id`'s watermarks, as its runs read and move them.
fn team_watermarks(launcher: &Launcher, team_id: &str) -> TeamWatermarks {
    TeamWatermarks {
        watermarks: launcher.db().watermarks(),
        team_id: team_id.to_string(),
    }
}

/// Runs a run whose row is written as a tracked task; returns at once.
pub fn spawn_run(
    launcher: &Launcher,
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
    let cancel = launcher.halt().child_token();
    let live = launcher.live().add(run_id, team_id, cancel.clone());
    // A cancel asked for through another process arrives with a renewal.
    let cancel_requested = cancel.clone();
    let config = launcher.config();
    let cache =
        (config.cache_mode != dragnet_core::ports::cache::CacheMode::Off).then(|| RunCache {
            store: Arc::new(launcher.db().cache()),
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
        clock: launcher.clock().clone(),
        // Pages its walks fetch are kept: a process taking it over
        // continues from there.
        journal: Some(Arc::new(RunPages::new(launcher.db().runs(), lease.clone()))),
        hosts: Some(config.upstream_hosts.clone()),
        // Only the programs the operator declared are started.
        mcp_servers: config.mcp_servers.clone(),
        mcp_commands: false,
        watermarks: Some(Arc::new(team_watermarks(launcher, team_id))),
        ..RunOptions::default()
    };
    let launcher = launcher.clone();
    // Every write of the run is fenced by its lease; losing the lease (a
    // refused write or renewal) stops the run here.
    let lost = CancellationToken::new();
    let queued_lease = lease.clone();
    let store = Arc::new(StoreObserver::start(
        launcher.db().runs(),
        launcher.clock().clone(),
        ObserverOptions {
            heartbeat: (config.lease.get() / 3).max(Duration::from_millis(100)),
            fencing: Some(Fencing {
                lease,
                leases: launcher.db().leases(),
                length: config.lease,
                lost: lost.clone(),
                cancel_requested,
            }),
            watermarks: Some(team_watermarks(&launcher, team_id)),
            ..ObserverOptions::default()
        },
        launcher.tracker(),
        launcher.halt().child_token(),
    ));
    let observer = Arc::new(StreamObserver::new(
        live.clone(),
        Arc::new(Fanout(vec![
            store.clone(),
            Arc::new(crate::metrics::MetricsObserver::new(
                launcher.metrics().clone(),
                &wf,
            )),
        ])),
    ));
    live.announce_queued(&wf.name);
    // Its place in line is taken now, before its task first runs: runs
    // start in the order they came here.
    let place = launcher.gate().line_up(team_id, &wf.name, wf.concurrency);
    let team = team_id.to_string();
    let waiting = options.cancel.clone();
    let span = tracing::info_span!("run", run_id = %run_id, workflow = %wf.name, team = %team_id);
    let tracker = launcher.tracker().clone();
    let task = async move {
        let ended = match wait_for_slot(&launcher, &live, place, &waiting, &queued_lease, &lost)
            .await
        {
            Ok(_slot) => {
                let mut options = options;
                options.secrets = Some(Arc::new(run_secrets(&launcher, &team, &wf).await));
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
                            unstarted(&wf, &live.run_id, &launcher, inputs, RunStatus::Failed);
                        RunObserver::run_finished(observer.as_ref(), &record);
                        RunStatus::Failed
                    }
                }
            }
            Err(status) => {
                let record = unstarted(&wf, &live.run_id, &launcher, inputs, status);
                RunObserver::run_finished(observer.as_ref(), &record);
                status
            }
        };
        let handed_back = live.is_handed_back() && !lost.is_cancelled();
        // The record is stored: now the stream may end.
        store.close().await;
        if handed_back {
            // Its writer has stopped: the run is anyone's to claim now.
            match launcher.db().leases().hand_back(&queued_lease).await {
                Ok(true) => {
                    tracing::info!(run_id = %live.run_id, "the run is handed back for another process to resume");
                    launcher.announce().await;
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
                if let Err(error) = launcher.db().runs().forget_pages(&live.run_id).await {
                    tracing::warn!(run_id = %live.run_id, %error, "the run's kept pages could not be deleted");
                }
            }
            if let Err(error) = launcher
                .db()
                .runs()
                .append_run_events(&live.run_id, &live.all_events())
                .await
            {
                tracing::error!(run_id = %live.run_id, %error, "the run's events could not be stored");
            }
        }
        launcher.live().remove(&live.run_id);
        // Its slots are back: a run queued in the store can be claimed.
        launcher.slot_freed().notify_one();
    };
    let name = TaskName::with_id("run", run_id);
    task::spawn(&tracker, name, tracing::Instrument::instrument(task, span));
}

/// The team's secrets the run's workflow names, opened; a store failure
/// is logged and leaves them out (the steps needing one fail saying so).
async fn run_secrets(
    launcher: &Launcher,
    team_id: &str,
    wf: &Workflow,
) -> HashMap<String, dragnet_core::secret::Secret> {
    let sealer = launcher.config().secrets.as_deref();
    crate::secrets::for_run(launcher.db(), sealer, team_id, wf)
        .await
        .unwrap_or_else(|error| {
            tracing::error!(%error, "the run's team secrets could not be read");
            HashMap::new()
        })
}

/// Waits, queued at `place`, for the run's concurrency slots, renewing its lease
/// (and heartbeat) every third of the lease. A run cancelled while waiting
/// ends `cancelled`; one the server stops for is handed back; one
/// whose lease another attempt took is given up (`lost` is cancelled and
/// nothing more is written).
async fn wait_for_slot(
    launcher: &Launcher,
    live: &LiveRun,
    place: Place,
    cancel: &CancellationToken,
    lease: &Lease,
    lost: &CancellationToken,
) -> Result<Slot, RunStatus> {
    let enter = place.enter();
    tokio::pin!(enter);
    let length = launcher.config().lease;
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
            () = launcher.stopping().cancelled() => {
                // Queued: it goes back at once for another process.
                live.hand_back();
                return Err(RunStatus::Queued);
            }
            _ = beat.tick() => {
                match launcher.db().leases().renew_lease(lease, length).await {
                    Ok(Some(renewal)) => {
                        if renewal.cancel_requested {
                            cancel.cancel();
                        }
                        if let Err(error) = launcher.db().runs().heartbeat(&live.run_id, launcher.clock().now()).await {
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
    launcher: &Launcher,
    inputs: Value,
    status: RunStatus,
) -> RunRecord {
    let now = launcher.clock().now();
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

/// Ends claimed run `lease.run_id` without running it: the run `status`
/// (failed, or cancelled), each unfinished step too, saying `reason`.
pub(crate) async fn end_unstarted(
    launcher: &Launcher,
    lease: &Lease,
    status: RunStatus,
    reason: &str,
) {
    let db = launcher.db();
    let Ok(Some(mut record)) = db.runs().get_run(&lease.run_id).await else {
        return;
    };
    let now = launcher.clock().now();
    record.status = status;
    record.finished_at = Some(now);
    let step_status = match status {
        RunStatus::Cancelled => StepStatus::Cancelled,
        _ => StepStatus::Failed,
    };
    for step in &mut record.steps {
        if !step.is_finished() {
            step.status = step_status;
            step.reason = Some(reason.to_string());
        }
    }
    let written = db
        .runs()
        .write_run_fenced(&record, &RunOwner::this_process(), now, Some(lease))
        .await;
    match written {
        Ok(()) => {
            if let Err(error) = db.runs().forget_pages(&lease.run_id).await {
                tracing::warn!(run_id = %lease.run_id, %error, "the run's kept pages could not be deleted");
            }
        }
        Err(error) => {
            tracing::warn!(run_id = %lease.run_id, %error, "recording a run that ended unstarted")
        }
    }
}

/// Stops every running run now and hands each back (SPEC §9): another
/// process, or this server started again, resumes it.
pub fn hand_back_all(launcher: &Launcher) {
    for run in launcher.live().all() {
        run.hand_back();
    }
}
