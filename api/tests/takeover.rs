//! Takeover on both backends, with two servers on one store (two
//! processes in all but name): server A runs a two-step run under a lease;
//! when the lease is another attempt's and has expired, server B's claim
//! pass takes the run over with the next attempt and resumes it after its
//! last finished step — the shop sees the first step's request once — and
//! in the middle of its walk: the pages A fetched and kept are read back,
//! not fetched again, and the verdict says the walk resumed. A, whose next
//! renewal is refused, gives the run up and writes nothing more: the run
//! ends succeeded, as B ran it, and its kept pages are deleted. A run is
//! cancelled through any server: one running on A by a request to B (A
//! reads it with its next heartbeat), one nobody runs (submitted by a
//! server with no slots of its own) at once. A server streams a run
//! another runs from the store: each step's change, then the real end.

mod support;

use std::time::Duration;

use anyhow::{ensure, Result};
use dragnet_api::ServerConfig;
use dragnet_engine::run::{RunStatus, StepStatus};
use dragnet_runner::{claimer, RunnerConfig};
use dragnet_store::{on_both_backends, Db, LeaseLength};
use reqwest::{Method, StatusCode};
use support::Api;

on_both_backends!(
    a_run_whose_lease_expired_is_taken_over_and_resumed,
    a_claimed_run_that_cannot_start_is_recorded_failed_once,
    a_run_is_cancelled_through_any_server,
    a_run_on_another_server_is_streamed_from_the_store
);

fn config() -> ServerConfig {
    runner(RunnerConfig {
        lease: LeaseLength::new(Duration::from_secs(1)).expect("a valid lease"),
        // Passes only when the test asks.
        claim_every: None,
        ..RunnerConfig::default()
    })
}

fn runner(runner: RunnerConfig) -> ServerConfig {
    ServerConfig {
        runner,
        ..ServerConfig::default()
    }
}

/// A server with no slots of its own: it runs nothing, claims nothing.
async fn api_only(db: &Db) -> Result<Api> {
    Api::start_with(
        db.clone(),
        runner(RunnerConfig {
            max_running_runs: 0,
            ..config().runner
        }),
    )
    .await
}

async fn a_run_whose_lease_expired_is_taken_over_and_resumed(db: Db) -> Result<()> {
    let a = Api::start_with(db.clone(), config()).await?;
    let t = a.team("acme").await?;
    a.push(&t, "two", &a.workflow("two", Some("latency=300")))
        .await?;
    let run = a.run(&t, "two", r#"{"inputs": {"min_total": 0}}"#).await?;
    // Wait until the first step is done and the second under way.
    let mut started = false;
    for _ in 0..200 {
        let record = db.runs().get_run(&run).await?;
        if let Some(r) = record {
            let status = |i: usize| r.steps.get(i).map(|s| s.status);
            if status(0) == Some(StepStatus::Succeeded) && status(1) == Some(StepStatus::Running) {
                started = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    ensure!(started, "the run did not reach its second step");
    // And until its walk has kept a few pages.
    for _ in 0..200 {
        if db.runs().kept_pages(&run, Some("open_orders")).await? >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // As if A had stalled past its lease and a process that then died had
    // claimed the run: A's renewals are refused from now on, and the
    // lease is expired, so B's pass takes the run over.
    dragnet_store::testing::steal_lease(&db, &run, "a-process-that-died").await?;
    // A learns at its next beat that the run is not its own, and stops.
    for _ in 0..200 {
        if a.state.live().all().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    ensure!(a.state.live().all().is_empty(), "A gave the run up");
    // What A's walk fetched and kept before it lost the run (its later
    // pages were refused: they are not the attempt's that holds the run).
    let kept = db.runs().kept_pages(&run, Some("open_orders")).await?;
    ensure!(kept >= 3, "A kept {kept} of its pages");
    let seen_by_a = a.shop.requests().len();
    dragnet_store::testing::expire_lease(&db, &run).await?;
    let b = Api::start_with(db.clone(), config()).await?;
    let claimed = claimer::pass(b.state.launcher()).await?;
    ensure!(claimed == 1, "B claimed {claimed} runs");
    let done = b.finished(&t, &run).await?;
    ensure!(done["status"] == "succeeded", "{done}");
    // B resumed the walk: the pages A kept were read back, not fetched.
    let log = a.shop.requests();
    let page = |r: &dragnet_shop::RecordedRequest| format!("{}?{:?}", r.path, r.query);
    let walk: Vec<String> = log
        .iter()
        .filter(|r| r.path.ends_with("/orders"))
        .map(page)
        .collect();
    let distinct: std::collections::HashSet<&String> = walk.iter().collect();
    let by_b = log[seen_by_a..]
        .iter()
        .filter(|r| r.path.ends_with("/orders"))
        .count() as u64;
    ensure!(
        by_b == distinct.len() as u64 - kept,
        "B fetched {by_b} pages of {}, {kept} of them kept by A",
        distinct.len()
    );
    let (_, with) = b.get(&format!("/v1/runs/{run}?outputs=true"), &t).await?;
    let note = with["steps"][1]["output"]["_loop"]["note"]
        .as_str()
        .unwrap_or_default();
    let plural = if kept == 1 { "page" } else { "pages" };
    ensure!(
        note.contains(&format!("Resumed: {kept} {plural} read back")),
        "{note}"
    );
    ensure!(
        db.runs().kept_pages(&run, None).await? == 0,
        "the ended run's pages are deleted"
    );
    let record = db.runs().get_run(&run).await?.expect("the run is stored");
    ensure!(record.status == RunStatus::Succeeded, "{:?}", record.status);
    ensure!(record
        .steps
        .iter()
        .all(|s| s.status == StepStatus::Succeeded));
    // The first step ran once, on A; B kept its record.
    let properties = a
        .shop
        .requests()
        .iter()
        .filter(|r| r.path == "/properties")
        .count();
    ensure!(
        properties == 1,
        "listProperties was requested {properties} times"
    );
    Ok(())
}

async fn a_claimed_run_that_cannot_start_is_recorded_failed_once(db: Db) -> Result<()> {
    let a = Api::start_with(db.clone(), config()).await?;
    let _ = a.team("acme").await?;
    let team = db
        .teams()
        .team_by_name("acme")
        .await?
        .ok_or_else(|| anyhow::anyhow!("no team"))?;
    // A run of a workflow version that does not exist (left by a process
    // that died), nobody's yet.
    db.runs()
        .submit_run(
            dragnet_store::NewRun {
                run_id: "run_ghost",
                team_id: &team.team_id,
                workflow: "ghost",
                version: 9,
                source: "ghost.yaml",
                inputs: &serde_json::json!({}),
                idempotency: None,
                launch: None,
                claim: None,
                trigger: None,
            },
            &dragnet_store::RunOwner::this_process(),
            chrono::Utc::now(),
        )
        .await?;
    ensure!(claimer::pass(a.state.launcher()).await? == 0);
    let record = db.runs().get_run("run_ghost").await?.expect("stored");
    ensure!(record.status == RunStatus::Failed, "{:?}", record.status);
    // Final now: not claimed again.
    ensure!(claimer::pass(a.state.launcher()).await? == 0);
    ensure!(db
        .leases()
        .claim_next("someone", LeaseLength::DEFAULT)
        .await?
        .is_none());
    Ok(())
}

async fn a_run_is_cancelled_through_any_server(db: Db) -> Result<()> {
    let a = Api::start_with(db.clone(), config()).await?;
    let t = a.team("acme").await?;
    a.push(&t, "slow", &a.slow_workflow("slow", 300, ""))
        .await?;
    let running = a.run(&t, "slow", "{}").await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    // B runs nothing itself: what it submits waits for a process with room.
    let b = api_only(&db).await?;
    let cancel = |run: &str| format!("/v1/runs/{run}/cancel");
    let (code, _) = b
        .send(Method::POST, &cancel(&running), Some(&t), None, &[])
        .await?;
    ensure!(code == StatusCode::ACCEPTED, "{code}");
    let done = a.finished(&t, &running).await?;
    ensure!(done["status"] == "cancelled", "{done}");

    let waiting = b.run(&t, "slow", "{}").await?;
    let (_, record) = b.get(&format!("/v1/runs/{waiting}"), &t).await?;
    ensure!(record["status"] == "queued", "{record}");
    ensure!(b.state.live().get(&waiting).is_none(), "B does not run it");
    let (code, _) = b
        .send(Method::POST, &cancel(&waiting), Some(&t), None, &[])
        .await?;
    ensure!(code == StatusCode::ACCEPTED, "{code}");
    let (_, record) = b.get(&format!("/v1/runs/{waiting}"), &t).await?;
    ensure!(record["status"] == "cancelled", "{record}");
    // Ended: another cancel is a conflict.
    let (code, _) = b
        .send(Method::POST, &cancel(&waiting), Some(&t), None, &[])
        .await?;
    ensure!(code == StatusCode::CONFLICT, "{code}");
    Ok(())
}

/// PostgreSQL wakes claimers: a worker polling only once a minute claims,
/// at once, a run an API-only server left for anyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_left_for_anyone_wakes_the_claimers_at_once() {
    dragnet_store::testing::on_postgres(|db| async move {
        let api = api_only(&db).await?;
        let t = api.team("acme").await?;
        api.push(&t, "slow", &api.slow_workflow("slow", 10, ""))
            .await?;
        let worker = Api::start_with(
            db.clone(),
            runner(RunnerConfig {
                claim_every: Some(Duration::from_secs(60)),
                ..config().runner
            }),
        )
        .await?;
        // The worker's first poll (at its start) is behind it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let run = api.run(&t, "slow", "{}").await?;
        let mut claimed = false;
        for _ in 0..100 {
            if worker.state.live().get(&run).is_some()
                || db
                    .runs()
                    .get_run(&run)
                    .await?
                    .is_some_and(|r| r.status == RunStatus::Succeeded)
            {
                claimed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ensure!(claimed, "the worker did not claim the run within 5 s");
        let done = api.finished(&t, &run).await?;
        ensure!(done["status"] == "succeeded", "{done}");
        Ok(())
    })
    .await;
}

async fn a_run_on_another_server_is_streamed_from_the_store(db: Db) -> Result<()> {
    let a = Api::start_with(db.clone(), config()).await?;
    let t = a.team("acme").await?;
    a.push(&t, "two", &a.workflow("two", Some("latency=100")))
        .await?;
    let run = a.run(&t, "two", r#"{"inputs": {"min_total": 0}}"#).await?;
    let b = api_only(&db).await?;
    let events = b.events(&t, &run, None).await?;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    ensure!(names.first() == Some(&"run"), "{names:?}");
    let end = events.last().map(|e| e.data.clone()).unwrap_or_default();
    ensure!(
        names.last() == Some(&"end") && end["status"] == "succeeded",
        "{events:?}"
    );
    let finished: Vec<&str> = events
        .iter()
        .filter(|e| e.event == "step" && e.data["status"] == "succeeded")
        .filter_map(|e| e.data["step"].as_str())
        .collect();
    ensure!(finished == ["properties", "open_orders"], "{events:?}");
    let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
    ensure!(ids == (1..=ids.len() as u64).collect::<Vec<_>>(), "{ids:?}");
    Ok(())
}
