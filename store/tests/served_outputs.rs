//! Step outputs served from the cache, on both backends: a run's step that
//! a cache hit served as stored is written as a pointer at the cached
//! payload (no second copy) and reads back byte for byte what the step
//! rendered; the payload it points at outlives its entry (replaced, purged,
//! swept) as long as the output is kept, and goes with the retention that
//! clears the output; a payload gone before the step is written means the
//! output is written whole.

mod common;

use anyhow::{ensure, Context};
use chrono::{DateTime, Duration as Span, Utc};
use common::t0;
use dragnet_core::ports::cache::{CacheEntry, CacheMode, PayloadRow};
use dragnet_core::Payload;
use dragnet_engine::run::{RunRecord, RunStatus, StepRecord, StepStatus, StepType};
use dragnet_store::{on_both_backends, Db, RunOwner};
use dragnet_walk::cache::{around, stored};
use dragnet_walk::{LoopOptions, LoopResult};
use serde_json::json;
use sqlx::Row;

on_both_backends!(
    a_served_output_points_at_the_payload_and_reads_back_identical,
    the_payload_outlives_its_entry_while_the_output_is_kept,
    a_payload_gone_before_the_write_is_written_whole,
    entries_stored_inline_by_older_builds_serve_no_pointer,
);

fn owner() -> RunOwner {
    RunOwner {
        host: "test-host".into(),
        pid: 4242,
    }
}

/// An envelope around `n` orders, as a walk keeps it.
fn payload(n: usize, tag: &str) -> anyhow::Result<Payload> {
    let orders: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id":{i},"note":"{tag} \"{i}\"","total":{}.5}}"#,
                i % 97
            )
        })
        .collect();
    let body = format!(
        r#"{{"total":{n},"data":[{}],"next":null}}"#,
        orders.join(",")
    );
    common::collection_payload(&body, "data")
}

fn entry(payload: &Payload, at: DateTime<Utc>) -> CacheEntry {
    CacheEntry {
        scope: "org:acme".into(),
        key: "shop.listOrders{}".into(),
        tool: "shop.listOrders".into(),
        payload: stored::encode(payload),
        items: payload.items().len() as u64,
        cached_at: at,
        expires_at: at + Span::hours(1),
        payload_row: None,
    }
}

/// The hit a run's step gets for the entry stored now, as the walk makes it.
async fn hit(db: &Db) -> anyhow::Result<LoopResult> {
    let entry = db
        .cache()
        .cache_get("org:acme", "shop.listOrders{}", t0())
        .await?
        .context("the entry is there")?;
    let payload = stored::decode(entry.payload.clone()).context("it decodes")?;
    Ok(around::hit(
        payload,
        &entry,
        &LoopOptions::default(),
        CacheMode::On,
    ))
}

/// A finished step with `result`'s workflow rendering, and the pointer the
/// engine sets on it.
fn step_of(result: &LoopResult) -> StepRecord {
    let mut step = StepRecord::pending("orders", StepType::Tool);
    step.status = StepStatus::Succeeded;
    step.started_at = Some(t0());
    step.finished_at = Some(t0());
    step.attempts = 1;
    step.output = Some(result.workflow_document());
    step.served_from = result.served_from(None);
    step
}

fn run_of(run_id: &str, step: StepRecord) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        workflow: "orders".into(),
        source: "orders.yaml".into(),
        status: RunStatus::Succeeded,
        started_at: t0(),
        finished_at: Some(t0() + Span::minutes(1)),
        duration_ms: 60_000,
        inputs: json!({}),
        steps: vec![step],
        trigger: None,
    }
}

/// Step 0's output of run `run_id`, read back.
async fn output(db: &Db, run_id: &str) -> anyhow::Result<Option<String>> {
    let run = db.runs().get_run(run_id).await?.context("the run")?;
    Ok(run.steps[0].output.as_ref().map(|d| d.get().to_string()))
}

/// `(output_packed is set, output_payload)` of step 0 of `run_id`.
async fn columns(db: &Db, run_id: &str) -> anyhow::Result<(bool, Option<i64>)> {
    const Q: &str = "SELECT output_packed IS NOT NULL AS packed, output_payload \
                     FROM run_steps WHERE run_id = $1 AND idx = 0";
    Ok(match db {
        Db::Postgres(pool) => {
            let row = sqlx::query(Q).bind(run_id).fetch_one(pool).await?;
            (row.try_get("packed")?, row.try_get("output_payload")?)
        }
        Db::Sqlite(pool) => {
            let row = sqlx::query(Q).bind(run_id).fetch_one(pool).await?;
            (row.try_get("packed")?, row.try_get("output_payload")?)
        }
    })
}

async fn payload_rows(db: &Db) -> anyhow::Result<i64> {
    const Q: &str = "SELECT COUNT(*) FROM cache_payloads";
    Ok(match db {
        Db::Postgres(pool) => sqlx::query_scalar(Q).fetch_one(pool).await?,
        Db::Sqlite(pool) => sqlx::query_scalar(Q).fetch_one(pool).await?,
    })
}

async fn a_served_output_points_at_the_payload_and_reads_back_identical(
    db: Db,
) -> anyhow::Result<()> {
    db.cache()
        .cache_put(&entry(&payload(3000, "a")?, t0()))
        .await?;
    let result = hit(&db).await?;
    let row = result
        .served_from(None)
        .context("a plain hit can be pointed at")?
        .row;
    let step = step_of(&result);
    let rendered = step.output.as_ref().map(|d| d.get().to_string());
    db.runs()
        .write_run(&run_of("r1", step.clone()), &owner(), t0())
        .await?;
    ensure!(
        columns(&db, "r1").await? == (false, Some(row.0)),
        "a pointer, no copy: {:?}",
        columns(&db, "r1").await?
    );
    ensure!(output(&db, "r1").await? == rendered, "byte for byte");
    // The final write of the same step (the writer's last one) too.
    db.runs().write_step("r1", 0, &step).await?;
    ensure!(output(&db, "r1").await? == rendered);
    // Filtered or projected rows are not the payload: written whole.
    let mut shaped = hit(&db).await?;
    shaped.shaped = Some(dragnet_core::json_rows::Rows::default());
    ensure!(shaped.served_from(None).is_none());
    Ok(())
}

async fn the_payload_outlives_its_entry_while_the_output_is_kept(db: Db) -> anyhow::Result<()> {
    db.cache()
        .cache_put(&entry(&payload(500, "old")?, t0()))
        .await?;
    let result = hit(&db).await?;
    let step = step_of(&result);
    let rendered = step.output.as_ref().map(|d| d.get().to_string());
    db.runs()
        .write_run(&run_of("r1", step), &owner(), t0())
        .await?;

    // A refresh replaces the entry: the old payload stays for the output.
    db.cache()
        .cache_put(&entry(&payload(400, "new")?, t0()))
        .await?;
    ensure!(payload_rows(&db).await? == 2, "the old payload is kept");
    ensure!(output(&db, "r1").await? == rendered, "after a replace");
    let fresh = hit(&db).await?;
    ensure!(
        fresh.payload.items().len() == 400,
        "the cache serves the new rows"
    );

    // Purged and swept, the output still reads the rows it was served.
    db.cache().cache_purge(None).await?;
    db.cache().cache_sweep(t0() + Span::days(1)).await?;
    ensure!(
        payload_rows(&db).await? == 1,
        "only the pointed-at payload stays"
    );
    ensure!(output(&db, "r1").await? == rendered, "after a purge");

    // Retention clears the output; the sweep's collection takes the payload.
    let cleared = db.runs().prune_outputs(t0() + Span::days(2)).await?;
    ensure!(cleared == 1, "{cleared} outputs cleared");
    ensure!(output(&db, "r1").await?.is_none());
    ensure!(db.cache().collect_payloads().await? == 1);
    ensure!(payload_rows(&db).await? == 0);
    Ok(())
}

async fn a_payload_gone_before_the_write_is_written_whole(db: Db) -> anyhow::Result<()> {
    db.cache()
        .cache_put(&entry(&payload(200, "a")?, t0()))
        .await?;
    let result = hit(&db).await?;
    let mut step = step_of(&result);
    let rendered = step.output.as_ref().map(|d| d.get().to_string());
    // The cache replaced and collected the payload after the hit read it.
    db.cache()
        .cache_put(&entry(&payload(10, "b")?, t0()))
        .await?;
    ensure!(
        payload_rows(&db).await? == 1,
        "the replaced payload was collected"
    );
    db.runs()
        .write_run(&run_of("r1", step.clone()), &owner(), t0())
        .await?;
    ensure!(columns(&db, "r1").await? == (true, None), "written whole");
    ensure!(output(&db, "r1").await? == rendered);
    // A row that never existed, the same.
    step.served_from = step.served_from.map(|mut from| {
        from.row = PayloadRow(i64::MAX);
        from
    });
    db.runs().write_step("r1", 0, &step).await?;
    ensure!(columns(&db, "r1").await? == (true, None));
    ensure!(output(&db, "r1").await? == rendered);
    Ok(())
}

async fn entries_stored_inline_by_older_builds_serve_no_pointer(db: Db) -> anyhow::Result<()> {
    db.cache()
        .cache_put_zlib(&entry(&payload(50, "old")?, t0()))
        .await?;
    let result = hit(&db).await?;
    ensure!(result.served_from(None).is_none(), "nothing to point at");
    db.runs()
        .write_run(&run_of("r1", step_of(&result)), &owner(), t0())
        .await?;
    ensure!(columns(&db, "r1").await? == (true, None));
    ensure!(output(&db, "r1").await? == Some(result.workflow_document().get().to_string()));
    Ok(())
}
