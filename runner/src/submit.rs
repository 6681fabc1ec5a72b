//! Run submission, built once: a compiled workflow version with its typed
//! inputs becomes the run's row — written `queued` with what another
//! process needs to start it (its `$.trigger`, cache flags, kept steps),
//! claimed by this process while it has a free slot — and then runs here,
//! or is announced for anyone with room to claim. API requests, reruns and
//! the scheduler's ticks (fired now, or queued earlier) all submit here;
//! they differ only in how the row is written ([`Write`]).

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use dragnet_engine::run::{self, StepRecord};
use dragnet_engine::workflow::model::Workflow;
use dragnet_store::{NewRun, RunOwner, TickStatus, TickWrite};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::launch::{spawn_run, Launch, LaunchRecord, RunRequest};
use crate::launcher::Launcher;

/// A run to submit: whose, which workflow version, with what.
pub struct Submission {
    pub team_id: String,
    pub workflow: Arc<Workflow>,
    pub version: i64,
    pub request: RunRequest,
    /// The inputs typed by the workflow (what the row keeps).
    pub inputs: Value,
    /// What `$.trigger` holds.
    pub trigger: Value,
    /// Who asked (a token's id), kept with the row's trigger.
    pub started_by: Option<String>,
    /// Steps of an earlier run it keeps (a rerun), by id.
    pub reuse: HashMap<String, StepRecord>,
    /// A rerun: the run whose steps `reuse` holds.
    pub rerun_of: Option<String>,
}

/// How the run's row is written.
pub enum Write<'a> {
    /// A request, with its `Idempotency-Key` and a hash of what it asked.
    Request {
        idempotency: Option<(&'a str, &'a str)>,
    },
    /// A due tick of a schedule, written with its run in one transaction.
    Tick {
        schedule_id: &'a str,
        at: DateTime<Utc>,
    },
    /// A tick queued earlier behind the schedule's previous run.
    QueuedTick {
        schedule_id: &'a str,
        at: DateTime<Utc>,
    },
}

/// What a submission did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Written: it runs here, or waits for anyone to claim it.
    Created { run_id: String },
    /// An earlier request with the same `Idempotency-Key` made this run.
    Existing { run_id: String },
    /// Another scheduler handled the tick first.
    NotWritten,
}

impl Launcher {
    /// Writes the run's row as `write` says and starts it: here when it
    /// was written claimed, else announced for any process with room.
    pub async fn submit(
        &self,
        submission: Submission,
        write: Write<'_>,
        now: DateTime<Utc>,
    ) -> Result<Outcome> {
        let Submission {
            team_id,
            workflow: wf,
            version,
            request,
            inputs,
            trigger,
            started_by,
            reuse,
            rerun_of,
        } = submission;
        let run_id = run::new_run_id(now);
        let launch_record = LaunchRecord {
            trigger: trigger.clone(),
            experiment: request.experiment,
            refresh: request.refresh,
            rerun_of,
            kept: reuse.keys().cloned().collect(),
        }
        .to_json();
        let source = wf.source.display().to_string();
        let row_trigger = run::RunTrigger::from_value(&trigger).map(|t| match started_by {
            Some(who) => t.by(Some(who)),
            None => t,
        });
        let new_run = NewRun {
            run_id: &run_id,
            team_id: &team_id,
            workflow: &wf.name,
            version,
            source: &source,
            inputs: &inputs,
            idempotency: match write {
                Write::Request { idempotency } => idempotency,
                Write::Tick { .. } | Write::QueuedTick { .. } => None,
            },
            launch: Some(&launch_record),
            claim: self.claim_on_submit(),
            trigger: row_trigger,
        };
        let lease = new_run.lease();
        let owner = RunOwner::this_process();
        let db = self.db();
        let written = match write {
            Write::Request { .. } => match db.runs().submit_run(new_run, &owner, now).await? {
                dragnet_store::Submitted::Created => true,
                dragnet_store::Submitted::Existing { run_id } => {
                    return Ok(Outcome::Existing { run_id })
                }
                dragnet_store::Submitted::KeyReused => return Err(Error::KeyReused),
            },
            Write::Tick { schedule_id, at } => {
                let tick = TickWrite {
                    schedule_id,
                    scheduled_for: at,
                    status: TickStatus::Fired,
                    reason: None,
                    run: Some(new_run),
                };
                db.schedules().record_tick(&tick, &owner, now).await?
            }
            Write::QueuedTick { schedule_id, at } => {
                db.schedules()
                    .fire_queued(schedule_id, at, &new_run, &owner, now)
                    .await?
            }
        };
        if !written {
            return Ok(Outcome::NotWritten);
        }
        match lease {
            Some(lease) => {
                let launch = Launch {
                    team_id: &team_id,
                    run_id: &run_id,
                    trigger,
                    reuse,
                    lease,
                };
                spawn_run(self, launch, wf, request, inputs);
            }
            // No room here: anyone with room claims it.
            None => self.announce().await,
        }
        Ok(Outcome::Created { run_id })
    }
}
