//! Stored results of agent calls on both backends: what is kept reads back
//! whole (text and items), another organisation or thread reads it as
//! unknown, the owner reads it as expired after its time, and the sweeper
//! deletes it an hour later. The gateway's retrieval tools run over it.

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Duration, Utc};
use dragnet_gateway::guard::SizeBudget;
use dragnet_gateway::results::keep;
use dragnet_gateway::retrieval::{fetch, query};
use dragnet_gateway::{Lookup, ResultScope, ResultStore, StoredResult};
use dragnet_steps::items::Items;
use dragnet_steps::Payload;
use dragnet_store::{on_both_backends, Db, EXPIRED_KEPT};
use serde_json::{json, Value};

on_both_backends!(a_stored_result_is_its_scopes_alone_and_expires);

fn at() -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
}

fn scope(org: &str, thread: &str) -> ResultScope {
    ResultScope {
        org: org.into(),
        thread: thread.into(),
    }
}

fn result(n: usize) -> StoredResult {
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
        payload: Payload::Items(items),
    }
}

async fn a_stored_result_is_its_scopes_alone_and_expires(db: Db) -> Result<()> {
    let me = scope("acme", "thread-1");
    let kept = result(1000);
    let id = keep(&db, &me, &kept, at()).await?;
    match db.get(&id, &me, at()).await? {
        Lookup::Found(back) => {
            ensure!(back.text == kept.text);
            ensure!(back.payload.items().len() == 1000);
            ensure!(back.payload.items().get(7) == kept.payload.items().get(7));
        }
        other => anyhow::bail!("{other:?}"),
    }
    for other in [scope("acme", "thread-2"), scope("bravo", "thread-1")] {
        ensure!(matches!(db.get(&id, &other, at()).await?, Lookup::Unknown));
    }
    // The retrieval tools over the store.
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

    let later = at() + Duration::minutes(16);
    let expired_at = match db.get(&id, &me, later).await? {
        Lookup::Expired { expired_at } => expired_at,
        other => anyhow::bail!("{other:?}"),
    };
    ensure!(expired_at == at() + Duration::minutes(15));
    ensure!(matches!(
        db.get(&id, &scope("bravo", "thread-1"), later).await?,
        Lookup::Unknown
    ));
    // The sweeper keeps an expired row an hour, so its owner is told it expired.
    ensure!(db.sweep_results(later).await? == 0);
    let swept = db
        .sweep_results(expired_at + EXPIRED_KEPT + Duration::seconds(1))
        .await?;
    ensure!(swept == 1, "{swept}");
    ensure!(matches!(db.get(&id, &me, later).await?, Lookup::Unknown));
    let e = query(&db, &me, &q, SizeBudget::default(), later)
        .await
        .err()
        .context("an error")?;
    ensure!(e.kind() == "unknown_result");
    Ok(())
}
