//! What started a run, stored with it (issue 21), on both backends: a
//! submitted run's trigger (kind, tick, fired time, schedule, who) reads
//! back as written and is kept by the run's later writes (which do not
//! know who asked); a local run records `manual` with its first write; a
//! listing names each run's kind and filters by it; rows from before the
//! columns read back without one.

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Utc};
use dragnet_engine::run::{
    RunLog, RunRecord, RunStatus, RunTrigger, StepRecord, StepType, TriggerKind,
};
use dragnet_store::{on_both_backends, Db, NewRun, RunFilter, RunOwner};
use serde_json::json;

on_both_backends!(triggers_are_kept_read_back_and_filtered);

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

fn record(run_id: &str, started: DateTime<Utc>, trigger: Option<RunTrigger>) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        workflow: "wf".into(),
        source: "wf.yaml".into(),
        status: RunStatus::Succeeded,
        started_at: started,
        finished_at: Some(started),
        duration_ms: 1,
        inputs: json!({}),
        steps: vec![StepRecord::pending("a", StepType::Tool)],
        trigger,
    }
}

async fn triggers_are_kept_read_back_and_filtered(db: Db) -> Result<()> {
    let owner = RunOwner::this_process();
    db.teams().create_team("t1", "team one", at(1_000)).await?;
    let tick = RunTrigger {
        kind: TriggerKind::Schedule,
        scheduled_for: Some(at(1_764_648_000_000)),
        fired_at: Some(at(1_764_648_001_250)),
        schedule_id: Some("sch_1".into()),
        started_by: None,
    };
    let api = RunTrigger {
        kind: TriggerKind::Api,
        scheduled_for: None,
        fired_at: None,
        schedule_id: None,
        started_by: Some("token:tok_1".into()),
    };
    for (run_id, trigger, started) in [("run_tick", &tick, 2_000), ("run_api", &api, 3_000)] {
        db.runs()
            .submit_run(
                NewRun {
                    run_id,
                    team_id: "t1",
                    workflow: "wf",
                    version: 1,
                    source: "wf.yaml",
                    inputs: &json!({}),
                    idempotency: None,
                    launch: None,
                    claim: None,
                    trigger: Some(trigger.clone()),
                },
                &owner,
                at(started),
            )
            .await?;
    }
    // The run's own writes know its kind but not who asked: both are kept.
    let as_run_knows = RunTrigger {
        started_by: None,
        ..api.clone()
    };
    db.runs()
        .write_run(
            &record("run_api", at(3_000), Some(as_run_knows)),
            &owner,
            at(3_001),
        )
        .await?;
    // A local run: its first write records it.
    let manual = RunTrigger {
        kind: TriggerKind::Manual,
        scheduled_for: None,
        fired_at: None,
        schedule_id: None,
        started_by: None,
    };
    db.runs()
        .write_run(
            &record("run_local", at(4_000), Some(manual.clone())),
            &owner,
            at(4_000),
        )
        .await?;
    // A row written without one (as before this was kept).
    db.runs()
        .write_run(&record("run_old", at(500), None), &owner, at(500))
        .await?;

    let read = |id: &'static str| {
        let db = db.clone();
        async move {
            db.runs()
                .get_run(id)
                .await?
                .with_context(|| format!("run {id}"))
                .map(|r| r.trigger)
        }
    };
    ensure!(
        read("run_tick").await? == Some(tick.clone()),
        "{:?}",
        read("run_tick").await?
    );
    ensure!(
        read("run_api").await? == Some(api.clone()),
        "{:?}",
        read("run_api").await?
    );
    ensure!(
        read("run_local").await? == Some(manual),
        "{:?}",
        read("run_local").await?
    );
    ensure!(read("run_old").await?.is_none());

    let listed = db.runs().list_runs(10).await?;
    let kinds: Vec<(String, Option<TriggerKind>)> = listed
        .iter()
        .map(|r| (r.run_id.clone(), r.trigger))
        .collect();
    ensure!(
        kinds
            == [
                ("run_local".to_string(), Some(TriggerKind::Manual)),
                ("run_api".to_string(), Some(TriggerKind::Api)),
                ("run_tick".to_string(), Some(TriggerKind::Schedule)),
                ("run_old".to_string(), None),
            ],
        "{kinds:?}"
    );
    let only = |kind| {
        let db = db.clone();
        async move {
            let filter = RunFilter {
                team_id: Some("t1".into()),
                trigger: Some(kind),
                ..RunFilter::default()
            };
            let runs = db.runs().list_runs_where(&filter, 10).await?;
            anyhow::Ok(runs.into_iter().map(|r| r.run_id).collect::<Vec<_>>())
        }
    };
    ensure!(only(TriggerKind::Schedule).await? == ["run_tick"]);
    ensure!(only(TriggerKind::Api).await? == ["run_api"]);
    // Local runs belong to no team; through the RunLog port they are listed.
    let local = db
        .runs()
        .list_triggered(10, Some(TriggerKind::Manual))
        .await?;
    ensure!(
        local.len() == 1 && local[0].run_id == "run_local",
        "{local:?}"
    );
    ensure!(db
        .runs()
        .list_triggered(10, Some(TriggerKind::Rerun))
        .await?
        .is_empty());
    Ok(())
}
