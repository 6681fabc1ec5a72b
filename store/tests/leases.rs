//! Leases on both backends: the submitting process claims its own queued
//! run once; concurrent claimers never take the same run; a lease renewed
//! is kept, one that expired is taken over with the next attempt, and the
//! older attempt can then neither renew nor hand back, and no longer holds
//! the run; a lease handed back is claimable at once with its attempt
//! kept.

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Utc};
use dragnet_store::{on_both_backends, Db, LeaseLength, NewRun, RunOwner};
use serde_json::json;

on_both_backends!(
    a_run_is_claimed_once_and_taken_over_only_after_its_lease,
    concurrent_claimers_never_share_a_run
);

fn now() -> DateTime<Utc> {
    Utc::now()
}

fn length(ms: u64) -> LeaseLength {
    LeaseLength::new(Duration::from_millis(ms)).expect("a valid lease")
}

async fn submit(db: &Db, run_id: &str) -> Result<()> {
    db.submit_run(
        NewRun {
            run_id,
            team_id: "t1",
            workflow: "wf",
            version: 1,
            source: "wf.yaml",
            inputs: &json!({}),
            idempotency: None,
        },
        &RunOwner::this_process(),
        now(),
    )
    .await?;
    Ok(())
}

async fn a_run_is_claimed_once_and_taken_over_only_after_its_lease(db: Db) -> Result<()> {
    db.create_team("t1", "team one", now()).await?;
    submit(&db, "run_a").await?;
    let mine = db
        .claim_run("run_a", "proc-1", length(1_000))
        .await?
        .context("the submitter claims its run")?;
    ensure!(mine.attempt == 1, "{mine:?}");
    ensure!(db
        .claim_run("run_a", "proc-2", length(1_000))
        .await?
        .is_none());
    ensure!(
        db.claim_next("proc-2", length(1_000)).await?.is_none(),
        "a live lease is not taken over"
    );
    ensure!(db.renew_lease(&mine, length(1_000)).await?.is_some());
    ensure!(db.holds_lease(&mine).await?);
    // The holder stalls past its lease: another process takes over.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let theirs = db
        .claim_next("proc-2", length(5_000))
        .await?
        .context("an expired lease is taken over")?;
    ensure!(
        theirs.run_id == "run_a" && theirs.attempt == 2,
        "{theirs:?}"
    );
    ensure!(
        db.renew_lease(&mine, length(1_000)).await?.is_none(),
        "the old attempt cannot renew"
    );
    ensure!(!db.release_lease(&mine).await?, "nor hand back");
    ensure!(!db.holds_lease(&mine).await?);
    ensure!(db.holds_lease(&theirs).await?);
    // Handed back: claimable at once, the attempt counting on.
    ensure!(db.release_lease(&theirs).await?);
    let again = db
        .claim_next("proc-3", length(5_000))
        .await?
        .context("a handed-back lease is claimable")?;
    ensure!(again.attempt == 3, "{again:?}");
    Ok(())
}

async fn concurrent_claimers_never_share_a_run(db: Db) -> Result<()> {
    db.create_team("t1", "team one", now()).await?;
    for i in 0..20 {
        submit(&db, &format!("run_{i:02}")).await?;
    }
    let mut tasks = Vec::new();
    for p in 0..4 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(lease) = db.claim_next(&format!("proc-{p}"), length(60_000)).await? {
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
