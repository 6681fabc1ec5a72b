//! The retrieval tools over a real store, on both backends: a result the
//! gateway keeps (for `RESULT_TTL`) is queried and sliced from PostgreSQL
//! and SQLite, reads as expired after its time, and as unknown once swept.

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Duration, Utc};
use dragnet_core::items::Items;
use dragnet_core::Payload;
use dragnet_core::ResultScope;
use dragnet_gateway::guard::SizeBudget;
use dragnet_gateway::results::keep;
use dragnet_gateway::retrieval::{fetch, query};
use dragnet_gateway::{StoredResult, RESULT_TTL};
use dragnet_store::{on_both_backends, Db, EXPIRED_KEPT};
use serde_json::{json, Value};

on_both_backends!(the_retrieval_tools_read_a_result_kept_in_the_store);

fn at() -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
}

fn orders(n: usize) -> StoredResult {
    let mut items = Items::new();
    let mut texts = Vec::new();
    for i in 0..n {
        let t = json!({"id": i, "status": if i % 2 == 0 {"open"} else {"paid"}}).to_string();
        items.push_text(&t);
        texts.push(t);
    }
    StoredResult {
        text: format!(
            "{{\"data\":[{}],\"_pagingComplete\":true}}",
            texts.join(",")
        ),
        form: dragnet_core::Form::json(),
        payload: Payload::Items(items),
    }
}

async fn the_retrieval_tools_read_a_result_kept_in_the_store(db: Db) -> Result<()> {
    let db = db.results();
    let me = ResultScope {
        org: "acme".into(),
        thread: "thread-1".into(),
    };
    let id = keep(&db, &me, &orders(1000), at()).await?;
    let args = |v: Value| v.as_object().cloned().unwrap_or_default();
    let q = args(json!({
        "resultId": id.as_str(),
        "filter": [{"field": "status", "op": "eq", "value": "paid"}],
        "fields": ["id"],
        "limit": 3,
    }));
    let answer: Value =
        serde_json::from_str(&query(&db, &me, &q, SizeBudget::default(), at()).await?)?;
    ensure!(
        answer["total"] == 500 && answer["items"] == json!([{"id": 1}, {"id": 3}, {"id": 5}]),
        "{answer}"
    );
    let f = args(json!({"resultId": id.as_str(), "offset": 0, "length": 9}));
    let slice: Value = serde_json::from_str(&fetch(&db, &me, &f, at()).await?)?;
    ensure!(slice["text"] == "{\"data\":[", "{slice}");

    // Kept for RESULT_TTL: expired after it, unknown once swept.
    let later = at() + RESULT_TTL + Duration::minutes(1);
    let e = query(&db, &me, &q, SizeBudget::default(), later)
        .await
        .err()
        .context("an error")?;
    ensure!(e.kind() == "expired_result", "{e}");
    let swept = db
        .sweep_results(at() + RESULT_TTL + EXPIRED_KEPT + Duration::seconds(1))
        .await?;
    ensure!(swept == 1, "{swept}");
    let e = query(&db, &me, &q, SizeBudget::default(), later)
        .await
        .err()
        .context("an error")?;
    ensure!(e.kind() == "unknown_result", "{e}");
    Ok(())
}
