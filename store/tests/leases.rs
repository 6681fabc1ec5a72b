//! Leases on both backends: a run submitted with its claim is its
//! submitter's from the start; concurrent claimers never take the same run; a lease renewed
//! is kept, one that expired is taken over with the next attempt, and the
//! older attempt can then neither renew nor hand back, and no longer holds
//! the run; a lease handed back is claimable at once with its attempt
//! kept. A run's writer under a lease: its writes land while it holds
//! the lease; once another attempt has taken the run over, its next write
//! is refused, nothing of it lands, and the writer says it lost the run.
//! Its heartbeats renew the lease (by the database clock), and the first
//! renewal refused says so too. Fenced writes of many runs at once all
//! land (on SQLite they queue for the write lock instead of failing).
//! Picking the next run to claim reads the index of the runs that can be
//! claimed (`runs_claim_order`), not the history of ended runs.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Utc};
use dragnet_core::clock::SystemClock;
use dragnet_engine::run::{RunObserver, RunRecord, RunStatus, StepRecord, StepStatus, StepType};
use dragnet_store::{
    on_both_backends, Db, Fencing, LeaseLength, NewRun, ObserverOptions, RunOwner, StoreObserver,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

on_both_backends!(
    a_run_is_claimed_once_and_taken_over_only_after_its_lease,
    concurrent_claimers_never_share_a_run,
    a_writer_whose_lease_was_taken_over_writes_nothing_more,
    heartbeats_renew_the_lease_until_another_attempt_holds_it,
    concurrent_fenced_writes_all_land,
    kept_pages_come_back_whole_with_their_next_link,
    a_claim_reads_only_the_runs_that_can_be_claimed
);

fn now() -> DateTime<Utc> {
    Utc::now()
}

fn length(ms: u64) -> LeaseLength {
    LeaseLength::new(Duration::from_millis(ms)).expect("a valid lease")
}

/// Submits run `run_id`, claimed by `claimer` as it is written (a 1 s
/// lease) or left for any claimer; the submitter's lease.
async fn submit(
    db: &Db,
    run_id: &str,
    claimer: Option<&str>,
) -> Result<Option<dragnet_store::Lease>> {
    let run = NewRun {
        run_id,
        team_id: "t1",
        workflow: "wf",
        version: 1,
        source: "wf.yaml",
        inputs: &json!({}),
        idempotency: None,
        launch: None,
        claim: claimer.map(|c| (c, length(1_000))),
        trigger: None,
    };
    db.runs()
        .submit_run(run.clone(), &RunOwner::this_process(), now())
        .await?;
    Ok(run.lease())
}

async fn a_run_is_claimed_once_and_taken_over_only_after_its_lease(db: Db) -> Result<()> {
    db.teams().create_team("t1", "team one", now()).await?;
    // Claimed as it is written: its submitter's from the start, never seen
    // unclaimed by anyone else.
    let mine = submit(&db, "run_a", Some("proc-1"))
        .await?
        .context("the submitter's lease")?;
    ensure!(mine.attempt == 1, "{mine:?}");
    ensure!(
        db.leases()
            .claim_next("proc-2", length(1_000))
            .await?
            .is_none(),
        "a live lease is not taken over"
    );
    ensure!(db
        .leases()
        .renew_lease(&mine, length(1_000))
        .await?
        .is_some());
    ensure!(db.leases().holds_lease(&mine).await?);
    // The holder stalls past its lease: another process takes over.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let theirs = db
        .leases()
        .claim_next("proc-2", length(5_000))
        .await?
        .context("an expired lease is taken over")?;
    ensure!(
        theirs.run_id == "run_a" && theirs.attempt == 2,
        "{theirs:?}"
    );
    ensure!(
        db.leases()
            .renew_lease(&mine, length(1_000))
            .await?
            .is_none(),
        "the old attempt cannot renew"
    );
    ensure!(!db.leases().release_lease(&mine).await?, "nor hand back");
    ensure!(!db.leases().holds_lease(&mine).await?);
    ensure!(db.leases().holds_lease(&theirs).await?);
    // Handed back: claimable at once, the attempt counting on.
    ensure!(db.leases().release_lease(&theirs).await?);
    let again = db
        .leases()
        .claim_next("proc-3", length(5_000))
        .await?
        .context("a handed-back lease is claimable")?;
    ensure!(again.attempt == 3, "{again:?}");
    Ok(())
}

async fn concurrent_claimers_never_share_a_run(db: Db) -> Result<()> {
    db.teams().create_team("t1", "team one", now()).await?;
    for i in 0..20 {
        submit(&db, &format!("run_{i:02}"), None).await?;
    }
    let mut tasks = Vec::new();
    for p in 0..4 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(lease) = db
                .leases()
                .claim_next(&format!("proc-{p}"), length(60_000))
                .await?
            {
                got.push(lease.run_id);
            }
            anyhow::Ok(got)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let distinct: HashSet<&String> = all.iter().collect();
    ensure!(all.len() == 20, "every run claimed once: {all:?}");
    ensure!(distinct.len() == 20, "no run claimed twice: {all:?}");
    Ok(())
}

fn record(run_id: &str) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        workflow: "wf".into(),
        source: "wf.yaml".into(),
        status: RunStatus::Running,
        started_at: now(),
        finished_at: None,
        duration_ms: 0,
        inputs: json!({}),
        steps: vec![
            StepRecord::pending("first", StepType::Tool),
            StepRecord::pending("second", StepType::Tool),
        ],
        trigger: None,
    }
}

fn finished(id: &str) -> StepRecord {
    let mut step = StepRecord::pending(id, StepType::Tool);
    step.status = StepStatus::Succeeded;
    step.started_at = Some(now());
    step.finished_at = Some(now());
    step
}

/// Run `run_id` submitted and claimed by `proc-1` (a 1 s lease), with a
/// writer fenced by that lease beating every `heartbeat`; the lease, the
/// writer, and the token it cancels when it loses the run.
async fn leased_writer(
    db: &Db,
    run_id: &str,
    heartbeat: Duration,
) -> Result<(dragnet_store::Lease, StoreObserver, CancellationToken)> {
    db.teams().create_team("t1", "team one", now()).await?;
    let lease = submit(db, run_id, Some("proc-1"))
        .await?
        .context("claimed")?;
    let lost = CancellationToken::new();
    let observer = StoreObserver::start(
        db.runs(),
        Arc::new(SystemClock),
        ObserverOptions {
            heartbeat,
            grace: Duration::from_secs(5),
            owner: RunOwner::this_process(),
            fencing: Some(Fencing {
                lease: lease.clone(),
                leases: db.leases(),
                length: length(1_000),
                lost: lost.clone(),
                cancel_requested: CancellationToken::new(),
            }),
            watermarks: None,
        },
        &TaskTracker::new(),
        CancellationToken::new(),
    );
    Ok((lease, observer, lost))
}

async fn a_writer_whose_lease_was_taken_over_writes_nothing_more(db: Db) -> Result<()> {
    // No beat within the test: the lease runs out on its own.
    let (_lease, observer, lost) = leased_writer(&db, "run_f", Duration::from_secs(600)).await?;
    let mut run = record("run_f");
    observer.run_started(&run);
    observer.step_finished(&finished("first"));
    observer.flush().await;
    let stored = db.runs().get_run("run_f").await?.context("stored")?;
    ensure!(
        stored.steps[0].status == StepStatus::Succeeded,
        "{stored:?}"
    );
    ensure!(!lost.is_cancelled());
    // Stalled past its lease: another process takes the run over.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let theirs = db
        .leases()
        .claim_next("proc-2", length(60_000))
        .await?
        .context("taken over")?;
    ensure!(theirs.attempt == 2);
    observer.step_finished(&finished("second"));
    run.status = RunStatus::Succeeded;
    run.steps = vec![finished("first"), finished("second")];
    run.finished_at = Some(now());
    observer.run_finished(&run);
    observer.close().await;
    ensure!(lost.is_cancelled(), "the writer says it lost the run");
    let stored = db.runs().get_run("run_f").await?.context("stored")?;
    ensure!(
        stored.steps[1].status == StepStatus::Pending && stored.status != RunStatus::Succeeded,
        "nothing of the old attempt landed: {stored:?}"
    );
    Ok(())
}

async fn heartbeats_renew_the_lease_until_another_attempt_holds_it(db: Db) -> Result<()> {
    let (lease, observer, lost) = leased_writer(&db, "run_h", Duration::from_millis(100)).await?;
    ensure!(lease.attempt == 1);
    observer.run_started(&record("run_h"));
    // Well past the first expiry, the beats have kept the lease alive.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    ensure!(
        db.leases()
            .claim_next("proc-2", length(60_000))
            .await?
            .is_none(),
        "a renewed lease is not taken over"
    );
    ensure!(!lost.is_cancelled());
    // Taken by another attempt behind the writer's back (a release and a
    // claim in between two beats, here in one statement, so no beat can
    // renew the released lease first): the next beat is refused.
    dragnet_store::testing::steal_lease(&db, "run_h", "proc-2").await?;
    ensure!(!db.leases().holds_lease(&lease).await?);
    tokio::time::sleep(Duration::from_millis(400)).await;
    ensure!(lost.is_cancelled(), "the refused renewal is reported");
    observer.close().await;
    Ok(())
}

async fn concurrent_fenced_writes_all_land(db: Db) -> Result<()> {
    // A fenced write reads its fence before it writes: on SQLite, a
    // transaction begun deferred failed at once ("database is locked") when
    // another connection wrote in between. Many runs' writers at once.
    db.teams().create_team("t1", "team one", now()).await?;
    let mut leases = Vec::new();
    for i in 0..6 {
        let run_id = format!("run_w{i}");
        let lease = submit(&db, &run_id, Some("proc-1"))
            .await?
            .context("claimed")?;
        db.runs()
            .write_run_fenced(
                &record(&run_id),
                &RunOwner::this_process(),
                now(),
                Some(&lease),
            )
            .await?;
        leases.push(lease);
    }
    let mut writes = tokio::task::JoinSet::new();
    for lease in leases {
        for round in 0..15 {
            let (db, lease) = (db.clone(), lease.clone());
            writes.spawn(async move {
                let step = finished(if round % 2 == 0 { "first" } else { "second" });
                db.runs()
                    .write_steps_fenced(&lease.run_id, &[(round % 2, &step)], Some(&lease))
                    .await
            });
        }
    }
    let mut failures = Vec::new();
    while let Some(done) = writes.join_next().await {
        if let Err(e) = done? {
            failures.push(e.to_string());
        }
    }
    ensure!(
        failures.is_empty(),
        "{} writes failed: {failures:?}",
        failures.len()
    );
    Ok(())
}

/// A page kept under a lease comes back as it was kept, `Link` target
/// included (a walk that follows `Link` headers resumes along it); a
/// writer without the lease keeps nothing.
async fn kept_pages_come_back_whole_with_their_next_link(db: Db) -> Result<()> {
    use dragnet_core::ports::journal::{KeptPage, PageJournal};
    db.teams().create_team("t1", "team one", now()).await?;
    let lease = submit(&db, "run_p", Some("proc-1"))
        .await?
        .context("the submitter's lease")?;
    let pages = dragnet_store::RunPages::new(db.runs(), lease.clone());
    let linked = KeptPage {
        status: 200,
        next_link: Some("http://127.0.0.1:9/github/customers?after=ev_1".into()),
        body: b"[{\"id\":1}]".to_vec().into(),
    };
    let plain = KeptPage {
        status: 200,
        next_link: None,
        body: b"{\"items\":[]}".to_vec().into(),
    };
    pages.keep("step", "k1", &linked).await;
    pages.keep("step", "k2", &plain).await;
    ensure!(pages.recall("step", "k1").await.as_ref() == Some(&linked));
    ensure!(pages.recall("step", "k2").await.as_ref() == Some(&plain));
    ensure!(pages.recall("other", "k1").await.is_none());
    let stranger = dragnet_store::Lease {
        owner: "proc-2".into(),
        ..lease
    };
    dragnet_store::RunPages::new(db.runs(), stranger)
        .keep("step", "k3", &plain)
        .await;
    ensure!(
        pages.recall("step", "k3").await.is_none(),
        "only the holder keeps pages"
    );
    Ok(())
}

/// A claim used to walk the index of every run ever started, ended ones
/// included, when the planner's statistics were taken during a backlog
/// (most runs queued then) and the backlog has since drained: 5-7 ms a
/// claim with 6,000 runs behind it, in a benchmark. The plan must read an
/// index of the runs that can be claimed, on both backends.
async fn a_claim_reads_only_the_runs_that_can_be_claimed(db: Db) -> Result<()> {
    use dragnet_store::testing::{analyze_runs, end_every_run};
    db.teams().create_team("t1", "team one", now()).await?;
    for i in 0..500 {
        submit(&db, &format!("old_{i:04}"), None).await?;
    }
    analyze_runs(&db).await?;
    end_every_run(&db).await?;
    for i in 0..3 {
        submit(&db, &format!("new_{i}"), None).await?;
    }
    let plan = db.leases().claim_plan().await?.join("\n");
    ensure!(
        plan.contains("runs_claim_order"),
        "the claim reads the index of the runs that can be claimed:\n{plan}"
    );
    ensure!(
        !plan.contains("runs_started_at"),
        "the claim does not walk every run ever started:\n{plan}"
    );
    let first = db.leases().claim_next("proc-2", length(60_000)).await?;
    ensure!(
        first.as_ref().map(|l| l.run_id.as_str()) == Some("new_0"),
        "the oldest queued run is claimed first: {first:?}"
    );
    Ok(())
}
