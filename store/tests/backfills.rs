//! Backfills on both backends: recorded with their ticks pending in start
//! order; one pass at a time holds a backfill's turn (another is refused
//! until it is given back or its hold passes); a tick is marked once;
//! cancelling ends it, marks its pending ticks and is refused once ended;
//! another team's reads as none.

use anyhow::{ensure, Result};
use chrono::{DateTime, Duration, Utc};
use dragnet_store::{on_both_backends, Db, NewBackfill};

on_both_backends!(one_pass_holds_a_backfill_s_turn_and_a_cancel_ends_it);

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

async fn one_pass_holds_a_backfill_s_turn_and_a_cancel_ends_it(db: Db) -> Result<()> {
    let b = db.backfills();
    let now = at("2026-06-02T12:00:00Z");
    let ticks: Vec<(DateTime<Utc>, String)> = (0..3)
        .map(|h| {
            (
                at("2026-06-01T00:00:00Z") + Duration::hours(h),
                "sch_1".into(),
            )
        })
        .rev()
        .collect();
    b.create_backfill(&NewBackfill {
        backfill_id: "bf_1",
        team_id: "t1",
        workflow: "hourly",
        from: at("2026-06-01T00:00:00Z"),
        to: at("2026-06-01T02:00:00Z"),
        newest_first: true,
        concurrency: 2,
        rerun: false,
        created_by: Some("token:tok_1"),
        created_at: now,
        ticks: &ticks,
    })
    .await?;
    let row = b.backfill("t1", "bf_1").await?;
    ensure!(row
        .as_ref()
        .is_some_and(|r| r.status == "running" && r.newest_first));
    ensure!(b.backfill("t2", "bf_1").await?.is_none());
    let listed = b.backfill_ticks("bf_1").await?;
    ensure!(listed.len() == 3 && listed.iter().all(|t| t.state == "pending"));
    ensure!(
        listed[0].scheduled_for == at("2026-06-01T02:00:00Z"),
        "{listed:?}"
    );

    // One holder at a time; given back, or past its hold, it is free.
    let until = now + Duration::seconds(60);
    ensure!(b.take_turn("bf_1", now, until).await?);
    ensure!(
        !b.take_turn("bf_1", now + Duration::seconds(1), until)
            .await?
    );
    b.end_turn("bf_1").await?;
    ensure!(b.take_turn("bf_1", now, until).await?);
    ensure!(
        b.take_turn("bf_1", until, until + Duration::seconds(60))
            .await?
    );
    b.end_turn("bf_1").await?;

    // A tick is marked once.
    ensure!(
        b.mark_tick("bf_1", 0, "skipped", None, Some("complete"))
            .await?
    );
    ensure!(
        !b.mark_tick("bf_1", 0, "started", Some("run_1"), None)
            .await?
    );

    // Cancelled: the pending ticks too; a second cancel finds it ended.
    let going = b.cancel_backfill("t1", "bf_1", now).await?;
    ensure!(going == Some(Vec::new()), "{going:?}");
    let ticks = b.backfill_ticks("bf_1").await?;
    let states: Vec<&str> = ticks.iter().map(|t| t.state.as_str()).collect();
    ensure!(
        states == ["skipped", "cancelled", "cancelled"],
        "{states:?}"
    );
    ensure!(b.cancel_backfill("t1", "bf_1", now).await?.is_none());
    ensure!(!b.take_turn("bf_1", now, until).await?);
    ensure!(b.running_backfills().await?.is_empty());
    Ok(())
}
