//! Schedules on both backends: a tick is recorded, with its run, only
//! while its schedule is active — a scheduler pass that read a schedule
//! before a push retired it fires nothing afterwards (the test that found
//! it: `cli/tests/scale_out.rs`, where a tick's run appeared without its
//! tick's row being counted).

use anyhow::{ensure, Result};
use chrono::Utc;
use dragnet_store::{on_both_backends, Db, NewRun, RunOwner, ScheduleSpec, TickStatus, TickWrite};
use serde_json::json;

on_both_backends!(a_retired_schedule_fires_no_tick);

fn spec() -> ScheduleSpec {
    ScheduleSpec {
        schedule_id: "sch_1".into(),
        cron: "* * * * * *".into(),
        timezone: "UTC".into(),
        catch_up: "last".into(),
        overlap: "allow".into(),
        pause_after_failed: Some(3),
        pause_after_partial: None,
    }
}

fn tick<'a>(run_id: &'a str, inputs: &'a serde_json::Value, second: i64) -> TickWrite<'a> {
    TickWrite {
        schedule_id: "sch_1",
        scheduled_for: chrono::DateTime::from_timestamp(1_800_000_000 + second, 0)
            .unwrap_or_default(),
        status: TickStatus::Fired,
        reason: None,
        run: Some(NewRun {
            run_id,
            team_id: "t1",
            workflow: "wf",
            version: 1,
            source: "wf.yaml",
            inputs,
            idempotency: None,
            launch: None,
            claim: None,
            trigger: None,
        }),
    }
}

async fn a_retired_schedule_fires_no_tick(db: Db) -> Result<()> {
    let now = Utc::now();
    db.teams().create_team("t1", "team one", now).await?;
    db.schedules()
        .sync_schedules("t1", "wf", &[spec()], now)
        .await?;
    let owner = RunOwner::this_process();
    let inputs = json!({});
    ensure!(
        db.schedules()
            .record_tick(&tick("run_1", &inputs, 1), &owner, now)
            .await?
    );
    ensure!(db.runs().get_run("run_1").await?.is_some());
    // A new version without the trigger retires the schedule.
    db.schedules().sync_schedules("t1", "wf", &[], now).await?;
    ensure!(
        !db.schedules()
            .record_tick(&tick("run_2", &inputs, 2), &owner, now)
            .await?,
        "a retired schedule's tick is refused"
    );
    ensure!(
        db.runs().get_run("run_2").await?.is_none(),
        "and creates no run"
    );
    Ok(())
}
