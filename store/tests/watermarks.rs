//! Incremental walks' watermarks on both backends: none until one is
//! advanced; a watermark only moves forward (an older walk ending late
//! leaves the newer one); at the same value the row keys are joined; a
//! change of scale replaces it; teams, workflows and steps are apart; a
//! reset forgets it.

use anyhow::{ensure, Result};
use chrono::{DateTime, Utc};
use dragnet_engine::watermark::Scale;
use dragnet_store::{on_both_backends, Db, StoredWatermark, WatermarkKey};
use serde_json::{json, Value};

on_both_backends!(a_watermark_only_moves_forward_and_is_its_steps_alone);

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn mark(value: Value, keys: &[&str], run: &str) -> StoredWatermark {
    StoredWatermark {
        scale: match value {
            Value::String(_) => Scale::Time,
            _ => Scale::Number,
        },
        value,
        row_keys: keys.iter().map(|k| k.to_string()).collect(),
        run_id: run.into(),
        updated_at: at("2026-06-01T10:00:00Z"),
    }
}

async fn a_watermark_only_moves_forward_and_is_its_steps_alone(db: Db) -> Result<()> {
    let w = db.watermarks();
    let key = WatermarkKey {
        team_id: "t1",
        workflow: "orders",
        step: "recent",
    };
    ensure!(w.watermark(key).await?.is_none());
    ensure!(
        w.advance(
            key,
            &mark(json!("2026-06-01T09:00:00+01:00"), &["7"], "run_a")
        )
        .await?
    );
    let first = w.watermark(key).await?;
    ensure!(
        first.as_ref().map(|s| &s.value) == Some(&json!("2026-06-01T09:00:00+01:00")),
        "{first:?}"
    );
    // A walk that started earlier and ended later does not move it back
    // (09:00+01:00 is 08:00Z).
    ensure!(
        !w.advance(key, &mark(json!("2026-06-01T07:59:59Z"), &["1"], "run_old"))
            .await?
    );
    ensure!(w.watermark(key).await? == first);
    // The same instant written otherwise joins its keys.
    ensure!(
        w.advance(
            key,
            &mark(json!("2026-06-01T08:00:00Z"), &["3", "7"], "run_b")
        )
        .await?
    );
    let joined = w.watermark(key).await?;
    ensure!(
        joined.as_ref().map(|s| s.row_keys.clone()) == Some(vec!["3".into(), "7".into()]),
        "{joined:?}"
    );
    ensure!(
        !w.advance(key, &mark(json!("2026-06-01T08:00:00Z"), &["3"], "run_c"))
            .await?
    );
    // Later moves it.
    ensure!(
        w.advance(key, &mark(json!(1_780_304_400), &[], "run_d"))
            .await?
    );
    let later = w.watermark(key).await?;
    ensure!(
        later.as_ref().map(|s| s.run_id.as_str()) == Some("run_d"),
        "{later:?}"
    );
    ensure!(
        later.as_ref().is_some_and(|s| s.row_keys.is_empty()),
        "{later:?}"
    );
    // Other teams, workflows and steps are apart.
    for other in [
        WatermarkKey {
            team_id: "t2",
            ..key
        },
        WatermarkKey {
            workflow: "invoices",
            ..key
        },
        WatermarkKey { step: "old", ..key },
        WatermarkKey { team_id: "", ..key },
    ] {
        ensure!(w.watermark(other).await?.is_none(), "{other:?}");
    }
    // A new scale replaces it, even with a lower number.
    let number_key = WatermarkKey { step: "ids", ..key };
    ensure!(
        w.advance(number_key, &mark(json!(500), &[], "run_e"))
            .await?
    );
    ensure!(
        !w.advance(number_key, &mark(json!(499), &[], "run_f"))
            .await?
    );
    ensure!(
        w.advance(number_key, &mark(json!("2026-01-01"), &[], "run_g"))
            .await?
    );
    let listed = w.team_watermarks("t1").await?;
    let steps: Vec<(&str, &str)> = listed
        .iter()
        .map(|(wf, s, _)| (wf.as_str(), s.as_str()))
        .collect();
    ensure!(
        steps == [("orders", "ids"), ("orders", "recent")],
        "{steps:?}"
    );
    ensure!(w.reset(key).await?);
    ensure!(!w.reset(key).await?);
    ensure!(w.watermark(key).await?.is_none());
    Ok(())
}
