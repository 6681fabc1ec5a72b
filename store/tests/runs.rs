//! Run records on both backends: written by `StoreObserver` as the run
//! progresses (checked after each event), read back as typed records
//! through the engine's `RunLog` (serializing exactly as written), listed
//! newest first, heartbeats, and interrupted runs.

mod common;

use dragnet_store::on_both_backends;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context};
use chrono::{DateTime, Duration as Span, Utc};
use common::{t0, TestClock};
use dragnet_core::clock::Clock;
use dragnet_core::StopReason;
use dragnet_engine::run::{
    RunLog, RunObserver, RunRecord, RunStatus, StepRecord, StepStatus, StepType, StepVerdict,
};
use dragnet_store::{pid_alive, Db, ObserverOptions, RunOwner, StoreObserver};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

on_both_backends!(
    records_are_written_as_the_run_progresses,
    runs_list_newest_first,
    the_heartbeat_ticks_while_the_run_runs,
    a_run_never_heard_starting_is_written_whole,
    cancellation_still_writes_the_final_status,
    dead_processes_and_stale_heartbeats_interrupt_runs,
    runs_read_back_typed_through_the_run_log,
    a_batch_of_many_steps_is_written_whole_and_a_step_named_twice_as_last_said,
);

fn owner() -> RunOwner {
    RunOwner {
        host: "test-host".into(),
        pid: 4242,
    }
}

fn record(run_id: &str, started_at: DateTime<Utc>) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        workflow: "orders-report".into(),
        source: "examples/orders.yaml".into(),
        status: RunStatus::Running,
        started_at,
        finished_at: None,
        duration_ms: 0,
        inputs: json!({"since": "2025-01-01", "limit": 5}),
        steps: vec![
            StepRecord::pending("fetch", StepType::Tool),
            StepRecord::pending("decide", StepType::Branch),
            StepRecord::pending("report", StepType::Tool),
        ],
        trigger: None,
    }
}

fn finished_fetch(at: DateTime<Utc>) -> StepRecord {
    let mut step = StepRecord::pending("fetch", StepType::Tool);
    step.status = StepStatus::Succeeded;
    step.started_at = Some(at);
    step.finished_at = Some(at + Span::milliseconds(1500));
    step.duration_ms = 1500;
    step.attempts = 1;
    step.verdict = Some(StepVerdict {
        complete: false,
        requests: 20,
        item_count: 2000,
        stopped_by: Some(StopReason::Pages),
        note: "stopped after 20 pages".into(),
        cache_hit: None,
        pages: 0,
        upstream_errors: 0,
        throttled: 0,
        no_collection: false,
        incremental: None,
    });
    let output = r#"{"data":[{"id":1},{"id":2}],"_loop":{"complete":false,"requests":20}}"#;
    step.output = Some(dragnet_core::Document::parse(output.into()).expect("valid JSON"));
    step
}

fn observer(
    db: &Db,
    clock: Arc<TestClock>,
    heartbeat: Duration,
    tracker: &TaskTracker,
    cancel: CancellationToken,
) -> StoreObserver {
    let options = ObserverOptions {
        heartbeat,
        grace: Duration::from_secs(5),
        owner: owner(),
        fencing: None,
        watermarks: None,
    };
    StoreObserver::start(db.runs(), clock, options, tracker, cancel)
}

/// The stored run as it serializes (to compare with what was written).
async fn run_json(db: &Db, run_id: &str) -> anyhow::Result<Value> {
    let run = db
        .runs()
        .get_run(run_id)
        .await?
        .context("the run is stored")?;
    Ok(serde_json::to_value(run)?)
}

async fn records_are_written_as_the_run_progresses(db: Db) -> anyhow::Result<()> {
    let clock = Arc::new(TestClock::new(t0()));
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    let obs = observer(
        &db,
        clock.clone(),
        Duration::from_secs(3600),
        &tracker,
        cancel,
    );
    let mut run = record("run-1", t0());

    obs.run_started(&run);
    obs.flush().await;
    let stored = run_json(&db, "run-1").await?;
    ensure!(
        stored == serde_json::to_value(&run)?,
        "run_started: {stored:#}"
    );
    let listed = db.runs().list_runs(10).await?;
    ensure!(listed.len() == 1 && listed[0].status == RunStatus::Running && listed[0].steps == 3);

    clock.advance(Span::milliseconds(10));
    obs.step_started("fetch");
    obs.flush().await;
    let stored = run_json(&db, "run-1").await?;
    ensure!(stored["steps"][0]["status"] == "running");
    ensure!(stored["steps"][0]["started_at"] == serde_json::to_value(clock.now())?);
    ensure!(stored["steps"][1]["status"] == "pending");

    let fetch = finished_fetch(clock.now());
    obs.step_finished(&fetch);
    obs.flush().await;
    let stored = run_json(&db, "run-1").await?;
    ensure!(
        stored["steps"][0] == serde_json::to_value(&fetch)?,
        "step_finished: {:#}",
        stored["steps"][0]
    );

    let mut decide = StepRecord::pending("decide", StepType::Branch);
    decide.status = StepStatus::Skipped;
    decide.reason = Some("branch `check` chose `else`".into());
    obs.step_finished(&decide);
    obs.flush().await;
    let stored = run_json(&db, "run-1").await?;
    ensure!(stored["steps"][1] == serde_json::to_value(&decide)?);
    ensure!(db.runs().list_runs(10).await?[0].skipped == 1);

    clock.advance(Span::seconds(2));
    obs.step_started("report");
    let mut report = StepRecord::pending("report", StepType::Tool);
    report.status = StepStatus::Failed;
    report.reason = Some("upstream 500 after 3 attempts".into());
    report.started_at = Some(clock.now());
    report.finished_at = Some(clock.now() + Span::milliseconds(30));
    report.duration_ms = 30;
    report.attempts = 3;
    obs.step_finished(&report);
    obs.flush().await;
    let summary = &db.runs().list_runs(10).await?[0];
    ensure!(summary.failed == 1 && summary.skipped == 1 && summary.status == RunStatus::Running);

    run.steps = vec![fetch, decide, report];
    run.finished_at = Some(clock.now() + Span::milliseconds(31));
    run.duration_ms = 2041;
    run.settle(false);
    obs.run_finished(&run);
    obs.close().await;
    let stored = run_json(&db, "run-1").await?;
    ensure!(
        stored == serde_json::to_value(&run)?,
        "run_finished: {stored:#}"
    );
    let summary = &db.runs().list_runs(10).await?[0];
    ensure!(
        summary.status == RunStatus::Failed
            && summary.duration_ms == 2041
            && summary.started_at == t0()
    );
    tracker.close();
    tracker.wait().await;
    ensure!(db.runs().get_run("no-such-run").await?.is_none());
    Ok(())
}

async fn runs_list_newest_first(db: Db) -> anyhow::Result<()> {
    for (i, id) in ["old", "newest", "middle"].iter().enumerate() {
        let at = t0() + Span::minutes([0, 20, 10][i]);
        db.runs().write_run(&record(id, at), &owner(), at).await?;
    }
    let listed = db.runs().list_runs(2).await?;
    let ids: Vec<&str> = listed.iter().map(|r| r.run_id.as_str()).collect();
    ensure!(ids == ["newest", "middle"], "{ids:?}");
    ensure!(db.runs().list_runs(0).await?.is_empty());
    ensure!(db.runs().list_runs(100).await?.len() == 3);
    Ok(())
}

/// The stored heartbeat of a run, read straight from the table.
async fn heartbeat_of(db: &Db, run_id: &str) -> anyhow::Result<DateTime<Utc>> {
    let sql = "SELECT heartbeat_at FROM runs WHERE run_id = $1";
    Ok(match db {
        Db::Postgres(pool) => {
            sqlx::query_scalar::<_, DateTime<Utc>>(sql)
                .bind(run_id)
                .fetch_one(pool)
                .await?
        }
        Db::Sqlite(pool) => {
            let ms: i64 = sqlx::query_scalar(sql).bind(run_id).fetch_one(pool).await?;
            DateTime::from_timestamp_millis(ms).context("millis")?
        }
    })
}

async fn the_heartbeat_ticks_while_the_run_runs(db: Db) -> anyhow::Result<()> {
    let clock = Arc::new(TestClock::new(t0()));
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    let obs = observer(
        &db,
        clock.clone(),
        Duration::from_millis(20),
        &tracker,
        cancel,
    );
    obs.run_started(&record("beating", t0()));
    obs.flush().await;
    ensure!(heartbeat_of(&db, "beating").await? == t0());
    let later = t0() + Span::minutes(5);
    clock.set(later);
    let mut beat = false;
    for _ in 0..250 {
        if heartbeat_of(&db, "beating").await? == later {
            beat = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    ensure!(beat, "the heartbeat reached the store");
    // A fresh heartbeat keeps the run from being taken for dead.
    let alive = |_| true;
    let stale = Duration::from_secs(60);
    ensure!(
        db.runs()
            .mark_interrupted("elsewhere", &alive, stale, later + Span::seconds(30))
            .await?
            == 0
    );
    obs.close().await;
    tracker.close();
    tracker.wait().await;
    Ok(())
}

async fn a_run_never_heard_starting_is_written_whole(db: Db) -> anyhow::Result<()> {
    let clock = Arc::new(TestClock::new(t0()));
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    let obs = observer(
        &db,
        clock.clone(),
        Duration::from_secs(3600),
        &tracker,
        cancel,
    );
    obs.step_started("fetch");
    obs.step_finished(&StepRecord::pending("ghost", StepType::Tool));
    let mut run = record("late", t0());
    run.steps[0] = finished_fetch(t0());
    run.finished_at = Some(t0() + Span::seconds(2));
    run.duration_ms = 2000;
    run.settle(false);
    obs.run_finished(&run);
    obs.close().await;
    ensure!(run_json(&db, "late").await? == serde_json::to_value(&run)?);
    // Events after close are dropped, not panics.
    obs.step_started("fetch");
    tracker.close();
    tracker.wait().await;
    Ok(())
}

async fn cancellation_still_writes_the_final_status(db: Db) -> anyhow::Result<()> {
    let clock = Arc::new(TestClock::new(t0()));
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    let obs = observer(
        &db,
        clock.clone(),
        Duration::from_millis(20),
        &tracker,
        cancel.clone(),
    );
    let mut run = record("cancelled", t0());
    obs.run_started(&run);
    obs.step_started("fetch");
    cancel.cancel();
    run.steps[0].status = StepStatus::Cancelled;
    run.finished_at = Some(t0() + Span::seconds(1));
    run.settle(true);
    obs.step_finished(&run.steps[0]);
    obs.run_finished(&run);
    tracker.close();
    tokio::time::timeout(Duration::from_secs(30), tracker.wait())
        .await
        .context("the writer stopped")?;
    let stored = run_json(&db, "cancelled").await?;
    ensure!(
        stored["status"] == "cancelled" && stored["steps"][0]["status"] == "cancelled",
        "{stored:#}"
    );
    obs.close().await;
    Ok(())
}

/// A pid that was alive a moment ago and is not any more.
fn dead_pid() -> anyhow::Result<u32> {
    let mut child = std::process::Command::new("true").spawn()?;
    let pid = child.id();
    child.wait()?;
    Ok(pid)
}

async fn dead_processes_and_stale_heartbeats_interrupt_runs(db: Db) -> anyhow::Result<()> {
    let now = t0() + Span::hours(1);
    let here = "this-host";
    let dead = RunOwner {
        host: here.into(),
        pid: dead_pid()?,
    };
    let me = RunOwner {
        host: here.into(),
        pid: std::process::id(),
    };
    let there = RunOwner {
        host: "other-host".into(),
        pid: 1,
    };

    // On this host, its process gone: one step done, one running, one pending.
    let mut orphan = record("orphan", t0());
    orphan.steps[0] = finished_fetch(t0());
    orphan.steps[1].status = StepStatus::Running;
    orphan.steps[1].started_at = Some(t0() + Span::seconds(2));
    let last_beat = now - Span::seconds(5);
    db.runs().write_run(&orphan, &dead, last_beat).await?;
    // Elsewhere with a stale heartbeat; elsewhere and fresh; here and alive;
    // and one that finished long ago.
    db.runs()
        .write_run(&record("stale", t0()), &there, now - Span::minutes(10))
        .await?;
    db.runs()
        .write_run(&record("fresh", t0()), &there, now - Span::seconds(5))
        .await?;
    db.runs()
        .write_run(&record("mine", t0()), &me, now - Span::seconds(5))
        .await?;
    let mut done = record("done", t0());
    done.status = RunStatus::Succeeded;
    db.runs().write_run(&done, &dead, t0()).await?;

    let marked = db
        .runs()
        .mark_interrupted(here, &pid_alive, Duration::from_secs(120), now)
        .await?;
    ensure!(marked == 2, "orphan and stale: {marked}");
    let stored = run_json(&db, "orphan").await?;
    ensure!(stored["status"] == "interrupted");
    ensure!(stored["finished_at"] == serde_json::to_value(last_beat)?);
    ensure!(
        stored["steps"][0] == serde_json::to_value(&orphan.steps[0])?,
        "finished steps keep their records"
    );
    ensure!(stored["steps"][1]["status"] == "interrupted");
    ensure!(stored["steps"][1]["reason"]
        .as_str()
        .is_some_and(|r| r.contains("gone")));
    ensure!(stored["steps"][2]["status"] == "pending");
    ensure!(run_json(&db, "stale").await?["status"] == "interrupted");
    for untouched in ["fresh", "mine"] {
        ensure!(
            run_json(&db, untouched).await?["status"] == "running",
            "{untouched}"
        );
    }
    ensure!(run_json(&db, "done").await?["status"] == "succeeded");
    let listed = db.runs().list_runs(10).await?;
    ensure!(
        listed
            .iter()
            .filter(|r| r.status == RunStatus::Interrupted)
            .count()
            == 2
    );
    ensure!(
        db.runs()
            .mark_interrupted(here, &pid_alive, Duration::from_secs(120), now)
            .await?
            == 0,
        "once"
    );
    Ok(())
}

async fn runs_read_back_typed_through_the_run_log(db: Db) -> anyhow::Result<()> {
    let here = "this-host";
    let dead = RunOwner {
        host: here.into(),
        pid: dead_pid()?,
    };
    let mut run = record("typed", t0());
    run.steps[0] = finished_fetch(t0());
    run.steps[1].status = StepStatus::Running;
    run.steps[1].started_at = Some(t0() + Span::seconds(2));
    db.runs()
        .write_run(&run, &dead, t0() + Span::seconds(3))
        .await?;
    let mut done = record("done", t0() + Span::minutes(1));
    done.steps[0] = finished_fetch(t0() + Span::minutes(1));
    done.finished_at = Some(t0() + Span::minutes(2));
    done.settle(false);
    db.runs()
        .write_run(&done, &dead, t0() + Span::minutes(2))
        .await?;
    db.runs()
        .mark_interrupted(
            here,
            &pid_alive,
            Duration::from_secs(120),
            t0() + Span::hours(1),
        )
        .await?;

    // Read as a reader of runs does: through the port, not the store.
    let log: &dyn RunLog = &db.runs();
    let got = log.get("typed").await?.context("stored")?;
    ensure!(got.status == RunStatus::Interrupted, "{:?}", got.status);
    ensure!(got.steps[1].status == StepStatus::Interrupted);
    ensure!(got.steps[1]
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("gone")));
    ensure!(got.steps[2].status == StepStatus::Pending && got.steps[2].started_at.is_none());
    let kinds: Vec<StepType> = got.steps.iter().map(|s| s.kind).collect();
    ensure!(kinds == [StepType::Tool, StepType::Branch, StepType::Tool]);
    let fetch = &got.steps[0];
    ensure!(fetch.verdict == run.steps[0].verdict, "{:?}", fetch.verdict);
    ensure!(fetch.verdict.as_ref().and_then(|v| v.stopped_by) == Some(StopReason::Pages));
    ensure!(fetch.attempts == 1 && fetch.duration_ms == 1500);
    ensure!(
        fetch.output.as_ref().map(|o| o.get()) == run.steps[0].output.as_ref().map(|o| o.get()),
        "the output is the JSON text written"
    );
    ensure!(got.inputs == run.inputs && got.started_at == t0());
    ensure!(log.get("nope").await?.is_none());

    let listed = log.list(10).await?;
    let statuses: Vec<(&str, RunStatus)> = listed
        .iter()
        .map(|r| (r.run_id.as_str(), r.status))
        .collect();
    ensure!(
        statuses
            == [
                ("done", RunStatus::Partial),
                ("typed", RunStatus::Interrupted)
            ],
        "{statuses:?}"
    );
    ensure!(listed[1].steps == 3 && listed[1].failed == 0);
    Ok(())
}

/// A batch larger than two statements' rows (500 each), with one step named
/// twice: every row lands, each as its record says, the twice-named one
/// as the later record.
async fn a_batch_of_many_steps_is_written_whole_and_a_step_named_twice_as_last_said(
    db: Db,
) -> anyhow::Result<()> {
    // More than two statements' worth of rows (500 each), and one over.
    let n = 1_001;
    let mut run = record("many", t0());
    run.steps = (0..n)
        .map(|i| StepRecord::pending(&format!("s{i}"), StepType::Branch))
        .collect();
    db.runs().write_run(&run, &owner(), t0()).await?;
    let finished: Vec<StepRecord> = (0..n)
        .map(|i| {
            let mut step = StepRecord::pending(&format!("s{i}"), StepType::Branch);
            step.status = StepStatus::Succeeded;
            step.started_at = Some(t0());
            step.finished_at = Some(t0() + Span::milliseconds(i as i64));
            step.duration_ms = i as u64;
            step.attempts = 1;
            step
        })
        .collect();
    let mut again = finished[7].clone();
    again.status = StepStatus::Failed;
    again.reason = Some("failed on the second try".into());
    let mut batch: Vec<(usize, &StepRecord)> = finished.iter().enumerate().collect();
    batch.insert(3, (7, &finished[7]));
    batch.push((7, &again));
    db.runs().write_steps("many", &batch).await?;
    let got = db.runs().get_run("many").await?.context("stored")?;
    ensure!(got.steps.len() == n, "{} steps", got.steps.len());
    for (i, step) in got.steps.iter().enumerate() {
        ensure!(step.id == format!("s{i}"), "step {i} is {}", step.id);
        ensure!(
            step.duration_ms == i as u64,
            "step {i}: {}",
            step.duration_ms
        );
        let want = if i == 7 {
            StepStatus::Failed
        } else {
            StepStatus::Succeeded
        };
        ensure!(step.status == want, "step {i}: {:?}", step.status);
    }
    ensure!(got.steps[7].reason.as_deref() == Some("failed on the second try"));
    Ok(())
}
