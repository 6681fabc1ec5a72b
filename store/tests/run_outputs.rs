//! Step outputs at rest on both backends: written once, LZ4-compressed
//! (the old text column left empty), read back byte for byte; rows an
//! older build wrote as text still read; retention clears the outputs of
//! runs finished long enough ago, keeping every run and step row, and the
//! store's sweeper applies it.

mod common;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context};
use chrono::{DateTime, Duration as Span, Utc};
use common::{t0, TestClock};
use dragnet_engine::run::{RunRecord, RunStatus, StepRecord, StepStatus, StepType, StepVerdict};
use dragnet_store::{on_both_backends, spawn_store_sweeper, Db, RunOwner};
use serde_json::json;
use sqlx::Row;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

on_both_backends!(
    packed_columns_skip_postgres_compression,
    outputs_are_stored_compressed_and_read_back_identical,
    outputs_written_as_text_by_older_builds_still_read,
    retention_clears_old_outputs_and_keeps_the_runs,
    the_store_sweeper_applies_the_retention,
);

fn owner() -> RunOwner {
    RunOwner {
        host: "test-host".into(),
        pid: 4242,
    }
}

/// A big output, as a step renders it (spaces and key order kept).
fn output_text(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "name": "order {i}", "total": "{}.25"}}"#,
                i % 89
            )
        })
        .collect();
    format!(
        r#"{{"data": [{}], "_loop": {{"complete": true}}}}"#,
        rows.join(", ")
    )
}

fn step(id: &str, output: &str, at: DateTime<Utc>) -> anyhow::Result<StepRecord> {
    let mut step = StepRecord::pending(id, StepType::Tool);
    step.status = StepStatus::Succeeded;
    step.started_at = Some(at);
    step.finished_at = Some(at + Span::seconds(1));
    step.duration_ms = 1000;
    step.attempts = 1;
    step.verdict = Some(StepVerdict {
        complete: true,
        requests: 3,
        item_count: 3,
        stopped_by: None,
        note: "complete".into(),
        cache_hit: None,
        pages: 0,
        upstream_errors: 0,
        throttled: 0,
        no_collection: false,
        incremental: None,
    });
    step.output = Some(dragnet_core::Document::parse(output.to_string())?);
    Ok(step)
}

/// A run started at `at`, finished a minute later unless `running`.
fn run(run_id: &str, at: DateTime<Utc>, running: bool) -> anyhow::Result<RunRecord> {
    Ok(RunRecord {
        run_id: run_id.into(),
        workflow: "orders".into(),
        source: "orders.yaml".into(),
        status: if running {
            RunStatus::Running
        } else {
            RunStatus::Succeeded
        },
        started_at: at,
        finished_at: (!running).then(|| at + Span::minutes(1)),
        duration_ms: if running { 0 } else { 60_000 },
        inputs: json!({}),
        steps: vec![
            step("fetch", &output_text(50), at)?,
            step("sum", "[1, 2]", at)?,
        ],
        trigger: None,
    })
}

/// `(output IS NULL, length of output_packed, output_bytes)` of a step row.
async fn raw_columns(db: &Db, run_id: &str, idx: i64) -> anyhow::Result<(bool, usize, i64)> {
    const Q: &str = "SELECT output, output_packed, output_bytes FROM run_steps \
         WHERE run_id = $1 AND idx = $2";
    Ok(match db {
        Db::Sqlite(pool) => {
            let row = sqlx::query(Q)
                .bind(run_id)
                .bind(idx)
                .fetch_one(pool)
                .await?;
            let text: Option<String> = row.try_get("output")?;
            let packed: Option<Vec<u8>> = row.try_get("output_packed")?;
            let bytes: Option<i64> = row.try_get("output_bytes")?;
            (
                text.is_none(),
                packed.map_or(0, |p| p.len()),
                bytes.unwrap_or(0),
            )
        }
        Db::Postgres(pool) => {
            let row = sqlx::query(Q)
                .bind(run_id)
                .bind(idx)
                .fetch_one(pool)
                .await?;
            let text: Option<String> = row.try_get("output")?;
            let packed: Option<Vec<u8>> = row.try_get("output_packed")?;
            let bytes: Option<i64> = row.try_get("output_bytes")?;
            (
                text.is_none(),
                packed.map_or(0, |p| p.len()),
                bytes.unwrap_or(0),
            )
        }
    })
}

fn output_of(run: &RunRecord, idx: usize) -> Option<String> {
    run.steps[idx].output.as_ref().map(|o| o.get().to_string())
}

/// PostgreSQL stores the packed columns as they come: they are LZ4
/// already, and its own compression only costs time.
async fn packed_columns_skip_postgres_compression(db: Db) -> anyhow::Result<()> {
    let Db::Postgres(pool) = &db else {
        return Ok(());
    };
    for (table, column) in [
        ("run_steps", "output_packed"),
        ("cache_entries", "payload"),
        ("cache_payloads", "payload"),
    ] {
        let row = sqlx::query(
            "SELECT a.attstorage::text AS s FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid \
             WHERE c.relname = $1 AND a.attname = $2 AND pg_table_is_visible(c.oid)",
        )
        .bind(table)
        .bind(column)
        .fetch_one(pool)
        .await?;
        let storage: String = row.try_get("s")?;
        ensure!(
            storage == "e",
            "{table}.{column} has storage {storage}, not external"
        );
    }
    Ok(())
}

async fn outputs_are_stored_compressed_and_read_back_identical(db: Db) -> anyhow::Result<()> {
    let text = output_text(5000);
    let mut record = run("r1", t0(), false)?;
    record.steps[0] = step("fetch", &text, t0())?;
    db.runs().write_run(&record, &owner(), t0()).await?;
    let (no_text, packed, bytes) = raw_columns(&db, "r1", 0).await?;
    ensure!(no_text, "the text column is left empty");
    ensure!(bytes == text.len() as i64, "its length is kept: {bytes}");
    ensure!(
        packed > 0 && packed * 3 < text.len(),
        "stored compressed: {packed} of {} bytes",
        text.len()
    );
    let back = db
        .runs()
        .get_run("r1")
        .await?
        .context("the run reads back")?;
    ensure!(
        output_of(&back, 0).as_deref() == Some(text.as_str()),
        "byte for byte"
    );
    ensure!(output_of(&back, 1).as_deref() == Some("[1, 2]"));
    ensure!(serde_json::to_value(&back)? == serde_json::to_value(&record)?);
    // Written again (the final write of a step), it reads back the same.
    db.runs().write_step("r1", 1, &record.steps[1]).await?;
    let again = db.runs().get_run("r1").await?.context("the run")?;
    ensure!(serde_json::to_value(&again)? == serde_json::to_value(&record)?);
    Ok(())
}

async fn outputs_written_as_text_by_older_builds_still_read(db: Db) -> anyhow::Result<()> {
    let record = run("old", t0(), false)?;
    db.runs().write_run(&record, &owner(), t0()).await?;
    const OLD: &str =
        "UPDATE run_steps SET output = $1, output_packed = NULL, output_bytes = NULL \
         WHERE run_id = 'old' AND idx = 1";
    let text = r#"{"kept": [true,  "as written"]}"#;
    match &db {
        Db::Sqlite(pool) => {
            sqlx::query(OLD).bind(text).execute(pool).await?;
        }
        Db::Postgres(pool) => {
            sqlx::query(OLD).bind(text).execute(pool).await?;
        }
    }
    check_old(&db, text).await
}

async fn check_old(db: &Db, text: &str) -> anyhow::Result<()> {
    let back = db.runs().get_run("old").await?.context("the run")?;
    ensure!(
        output_of(&back, 1).as_deref() == Some(text),
        "{:?}",
        output_of(&back, 1)
    );
    ensure!(output_of(&back, 0) == Some(output_text(50)));
    Ok(())
}

/// Writes an old finished run, a recent one and an old one still running.
async fn three_runs(db: &Db) -> anyhow::Result<()> {
    db.runs()
        .write_run(&run("old", t0(), false)?, &owner(), t0())
        .await?;
    let recent = t0() + Span::days(40);
    db.runs()
        .write_run(&run("recent", recent, false)?, &owner(), recent)
        .await?;
    db.runs()
        .write_run(&run("running", t0(), true)?, &owner(), t0())
        .await?;
    Ok(())
}

/// Checks that only the old finished run lost its outputs, and kept the rest.
async fn only_old_outputs_are_gone(db: &Db) -> anyhow::Result<()> {
    let old = db
        .runs()
        .get_run("old")
        .await?
        .context("the old run stays")?;
    ensure!(old.status == RunStatus::Succeeded && old.steps.len() == 2);
    ensure!(
        old.steps.iter().all(|s| s.output.is_none()),
        "its outputs are gone"
    );
    ensure!(
        old.steps
            .iter()
            .all(|s| s.verdict.is_some() && s.status == StepStatus::Succeeded),
        "its steps keep their verdicts and statuses"
    );
    for kept in ["recent", "running"] {
        let run = db.runs().get_run(kept).await?.context("the run")?;
        ensure!(
            output_of(&run, 0) == Some(output_text(50)),
            "{kept} keeps its outputs"
        );
    }
    let listed: Vec<String> = db
        .runs()
        .list_runs(10)
        .await?
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    ensure!(listed.len() == 3, "every run is still listed: {listed:?}");
    Ok(())
}

async fn retention_clears_old_outputs_and_keeps_the_runs(db: Db) -> anyhow::Result<()> {
    three_runs(&db).await?;
    let cleared = db.runs().prune_outputs(t0() + Span::days(30)).await?;
    ensure!(cleared == 2, "the old run's two outputs: {cleared}");
    only_old_outputs_are_gone(&db).await?;
    ensure!(
        db.runs().prune_outputs(t0() + Span::days(30)).await? == 0,
        "nothing left to clear"
    );
    Ok(())
}

async fn the_store_sweeper_applies_the_retention(db: Db) -> anyhow::Result<()> {
    three_runs(&db).await?;
    let clock = Arc::new(TestClock::new(t0() + Span::days(45)));
    let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
    let keep = Some(Duration::from_secs(30 * 86_400));
    spawn_store_sweeper(
        &db,
        Duration::from_millis(20),
        keep,
        clock,
        &tracker,
        cancel.clone(),
    );
    let mut cleared = false;
    for _ in 0..500 {
        let old = db.runs().get_run("old").await?.context("the old run")?;
        if old.steps.iter().all(|s| s.output.is_none()) {
            cleared = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    tracker.close();
    tracker.wait().await;
    ensure!(cleared, "the sweeper cleared the old run's outputs");
    only_old_outputs_are_gone(&db).await
}
