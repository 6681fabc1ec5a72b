//! Stored results of agent calls on both backends, through dragnet-core's
//! `ResultStore` port: what is kept reads back whole (text and items),
//! another organisation or thread reads it as unknown, the owner reads it
//! as expired after its time, and the sweeper deletes it an hour later. A
//! store failure crosses the port whole. (The gateway's retrieval tools
//! over this store are tested in gateway/tests/stored_results.rs.)

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Duration, Utc};
use dragnet_core::items::Items;
use dragnet_core::Payload;
use dragnet_core::{Form, Lookup, ResultId, ResultScope, ResultStore, StoredResult};
use dragnet_store::{on_both_backends, Db, EXPIRED_KEPT};
use serde_json::json;

on_both_backends!(
    a_stored_result_is_its_scopes_alone_and_expires,
    what_a_stored_text_is_reads_back_with_it,
    a_store_failure_crosses_the_port_whole
);

fn at() -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
}

fn scope(org: &str, thread: &str) -> ResultScope {
    ResultScope {
        org: org.into(),
        thread: thread.into(),
    }
}

fn result(n: usize) -> StoredResult<Payload> {
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
        form: Form::json(),
        payload: Payload::Items(items),
    }
}

/// A binary block kept as base64 is read back as one, with its media type
/// (what `resources/read` answers with).
async fn what_a_stored_text_is_reads_back_with_it(db: Db) -> Result<()> {
    let me = scope("acme", "thread-1");
    let until = at() + Duration::minutes(15);
    for form in [
        Form::Base64 {
            media_type: "image/png".into(),
        },
        Form::Text {
            media_type: "text/plain".into(),
        },
    ] {
        let id = ResultId::new();
        let kept = StoredResult {
            text: "iVBORw0KGgo=".into(),
            form: form.clone(),
            payload: Payload::Items(Items::new()),
        };
        db.results().put(&id, &me, &kept, at(), until).await?;
        match db.results().get(&id, &me, at()).await? {
            Lookup::Found(back) => ensure!(back.form == form && back.text == kept.text),
            other => anyhow::bail!("{other:?}"),
        }
    }
    Ok(())
}

async fn a_stored_result_is_its_scopes_alone_and_expires(db: Db) -> Result<()> {
    let me = scope("acme", "thread-1");
    let kept = result(1000);
    let id = ResultId::new();
    let expires_at = at() + Duration::minutes(15);
    db.results().put(&id, &me, &kept, at(), expires_at).await?;
    match db.results().get(&id, &me, at()).await? {
        Lookup::Found(back) => {
            ensure!(back.text == kept.text);
            ensure!(back.payload.items().len() == 1000);
            ensure!(back.payload.items().get(7) == kept.payload.items().get(7));
        }
        other => anyhow::bail!("{other:?}"),
    }
    for other in [scope("acme", "thread-2"), scope("bravo", "thread-1")] {
        ensure!(matches!(
            db.results().get(&id, &other, at()).await?,
            Lookup::Unknown
        ));
    }

    let later = at() + Duration::minutes(16);
    match db.results().get(&id, &me, later).await? {
        Lookup::Expired { expired_at } => ensure!(expired_at == expires_at),
        other => anyhow::bail!("{other:?}"),
    }
    ensure!(matches!(
        db.results()
            .get(&id, &scope("bravo", "thread-1"), later)
            .await?,
        Lookup::Unknown
    ));
    // The sweeper keeps an expired row an hour, so its owner is told it expired.
    ensure!(db.results().sweep_results(later).await? == 0);
    let swept = db
        .results()
        .sweep_results(expires_at + EXPIRED_KEPT + Duration::seconds(1))
        .await?;
    ensure!(swept == 1, "{swept}");
    ensure!(matches!(
        db.results().get(&id, &me, later).await?,
        Lookup::Unknown
    ));
    Ok(())
}

/// A second result under one id is refused by the database; the port
/// hands over the store's own error (a query error, which trying again
/// would not mend), not a message.
async fn a_store_failure_crosses_the_port_whole(db: Db) -> Result<()> {
    let me = scope("acme", "thread-1");
    let id = ResultId::new();
    let until = at() + Duration::minutes(15);
    db.results().put(&id, &me, &result(2), at(), until).await?;
    let e = db
        .results()
        .put(&id, &me, &result(3), at(), until)
        .await
        .err()
        .context("a second put under one id fails")?;
    ensure!(!e.is_transient(), "{e}");
    let source = std::error::Error::source(&e).context("the store's error")?;
    let store = source
        .downcast_ref::<dragnet_store::Error>()
        .context("a dragnet_store::Error")?;
    ensure!(
        matches!(
            store,
            dragnet_store::Error::Query {
                op: "results.put",
                ..
            }
        ),
        "{store:?}"
    );
    ensure!(e.to_string() == store.to_string());
    Ok(())
}
