//! The cache of complete walks on both backends: migrations, hits and
//! misses, expiry on an injected clock, scopes, purge, list and sweep.

mod common;

use dragnet_store::on_both_backends;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context};
use chrono::Duration as Span;
use common::{entry, t0, TestClock};
use dragnet_core::clock::Clock;
use dragnet_core::ports::cache::{CacheEntry, CacheStore};
use dragnet_store::{spawn_sweeper, sweep_store_once, Db};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

on_both_backends!(
    migrations_are_idempotent,
    hits_and_misses,
    expiry_follows_the_injected_clock,
    scopes_are_isolated,
    purge_all_or_by_tool,
    list_shows_every_entry,
    sweep_deletes_only_expired_entries,
    the_sweeper_sweeps_a_real_store,
    a_one_shot_sweep_deletes_what_expired,
);

async fn migrations_are_idempotent(db: Db) -> anyhow::Result<()> {
    db.migrate().await?;
    db.migrate().await?;
    ensure!(db.cache().list().await?.is_empty());
    db.cache()
        .put(&entry("org:a", "k", "t", b"[1]", t0(), Span::hours(1)))
        .await?;
    db.migrate().await?;
    ensure!(
        db.cache().list().await?.len() == 1,
        "migrating again kept the data"
    );
    ensure!(db.backend() == "postgres" || db.backend() == "sqlite");
    Ok(())
}

async fn hits_and_misses(db: Db) -> anyhow::Result<()> {
    let store: Arc<dyn CacheStore> = Arc::new(db.cache());
    let now = t0();
    ensure!(
        store.get("org:a", "k1", now).await?.is_none(),
        "an empty store misses"
    );
    let first = entry(
        "org:a",
        "k1",
        "shop.listOrders",
        br#"{"v":1,"body":[1,2,3]}"#,
        now,
        Span::hours(24),
    );
    store.put(&first).await?;
    let hit = store
        .get("org:a", "k1", now)
        .await?
        .context("a hit after a put")?;
    // It says where its payload is kept (a run's step may point there).
    let row = hit
        .payload_row
        .context("the payload has a row of its own")?;
    let hit = CacheEntry {
        payload_row: None,
        ..hit
    };
    ensure!(hit == first, "the entry reads back as written: {hit:?}");
    ensure!(
        store.get("org:a", "k2", now).await?.is_none(),
        "another key misses"
    );
    // A put on the same key replaces the entry.
    let second = entry(
        "org:a",
        "k1",
        "shop.listOrders",
        br#"{"v":1,"body":[4]}"#,
        now + Span::seconds(5),
        Span::hours(1),
    );
    store.put(&second).await?;
    let replaced = store
        .get("org:a", "k1", now)
        .await?
        .context("the new entry")?;
    ensure!(
        replaced.payload_row.is_some_and(|new| new != row),
        "a new payload row"
    );
    let replaced = CacheEntry {
        payload_row: None,
        ..replaced
    };
    ensure!(replaced == second);
    ensure!(store.list().await?.len() == 1);
    Ok(())
}

async fn expiry_follows_the_injected_clock(db: Db) -> anyhow::Result<()> {
    let clock = Arc::new(TestClock::new(t0()));
    let put = entry(
        "user:acme:ada",
        "k",
        "t",
        b"payload",
        clock.now(),
        Span::hours(1),
    );
    db.cache().put(&put).await?;
    ensure!(db
        .cache()
        .get("user:acme:ada", "k", clock.now())
        .await?
        .is_some());
    clock.advance(Span::minutes(59));
    ensure!(db
        .cache()
        .get("user:acme:ada", "k", clock.now())
        .await?
        .is_some());
    clock.set(put.expires_at - Span::milliseconds(1));
    ensure!(
        db.cache()
            .get("user:acme:ada", "k", clock.now())
            .await?
            .is_some(),
        "live 1 ms before expiry"
    );
    clock.set(put.expires_at);
    ensure!(
        db.cache()
            .get("user:acme:ada", "k", clock.now())
            .await?
            .is_none(),
        "expires_at <= now is a miss"
    );
    clock.advance(Span::days(3));
    ensure!(db
        .cache()
        .get("user:acme:ada", "k", clock.now())
        .await?
        .is_none());
    // Still listed until swept.
    ensure!(db.cache().list().await?.len() == 1);
    Ok(())
}

async fn scopes_are_isolated(db: Db) -> anyhow::Result<()> {
    let now = t0();
    db.cache()
        .put(&entry(
            "org:acme",
            "same-key",
            "t",
            b"acme",
            now,
            Span::hours(1),
        ))
        .await?;
    db.cache()
        .put(&entry(
            "org:globex",
            "same-key",
            "t",
            b"globex",
            now,
            Span::hours(1),
        ))
        .await?;
    let acme = db
        .cache()
        .get("org:acme", "same-key", now)
        .await?
        .context("acme hit")?;
    let globex = db
        .cache()
        .get("org:globex", "same-key", now)
        .await?
        .context("globex hit")?;
    ensure!(acme.payload == b"acme" && globex.payload == b"globex");
    ensure!(
        db.cache()
            .get("user:acme:ada", "same-key", now)
            .await?
            .is_none(),
        "no scope falls back to another"
    );
    ensure!(db.cache().get("org:acm", "same-key", now).await?.is_none());
    Ok(())
}

async fn purge_all_or_by_tool(db: Db) -> anyhow::Result<()> {
    let now = t0();
    for (i, tool) in ["a.list", "a.list", "b.list"].iter().enumerate() {
        db.cache()
            .put(&entry(
                "org:x",
                &format!("k{i}"),
                tool,
                b"[]",
                now,
                Span::hours(1),
            ))
            .await?;
    }
    ensure!(db.cache().purge(Some("c.list")).await? == 0);
    ensure!(db.cache().purge(Some("a.list")).await? == 2);
    let left = db.cache().list().await?;
    ensure!(left.len() == 1 && left[0].tool == "b.list", "{left:?}");
    ensure!(db.cache().purge(None).await? == 1);
    ensure!(db.cache().list().await?.is_empty());
    Ok(())
}

async fn list_shows_every_entry(db: Db) -> anyhow::Result<()> {
    let now = t0();
    let big: Vec<u8> = br#"{"id":1,"name":"widget"},"#.repeat(2000);
    db.cache()
        .put(&entry("org:x", "k2", "b.tool", &big, now, Span::hours(2)))
        .await?;
    db.cache()
        .put(&entry("org:x", "k1", "a.tool", b"[]", now, Span::hours(1)))
        .await?;
    let listed = db.cache().list().await?;
    ensure!(listed.len() == 2);
    ensure!(
        listed[0].tool == "a.tool" && listed[1].tool == "b.tool",
        "by tool"
    );
    let b = &listed[1];
    ensure!(b.scope == "org:x" && b.key == "k2" && b.items == big.len() as u64 / 10);
    ensure!(
        b.stored_bytes > 0 && b.stored_bytes < big.len() as u64 / 10,
        "compressed at rest: {}",
        b.stored_bytes
    );
    ensure!(b.cached_at == now && b.expires_at == now + Span::hours(2));
    Ok(())
}

async fn sweep_deletes_only_expired_entries(db: Db) -> anyhow::Result<()> {
    let now = t0();
    db.cache()
        .put(&entry(
            "org:x",
            "gone",
            "t",
            b"1",
            now - Span::hours(2),
            Span::hours(1),
        ))
        .await?;
    db.cache()
        .put(&entry(
            "org:x",
            "edge",
            "t",
            b"2",
            now - Span::hours(1),
            Span::hours(1),
        ))
        .await?;
    db.cache()
        .put(&entry("org:x", "live", "t", b"3", now, Span::hours(1)))
        .await?;
    ensure!(
        db.cache().sweep(now).await? == 2,
        "expired at or before now"
    );
    let left = db.cache().list().await?;
    ensure!(left.len() == 1 && left[0].key == "live");
    ensure!(db.cache().sweep(now).await? == 0);
    Ok(())
}

async fn the_sweeper_sweeps_a_real_store(db: Db) -> anyhow::Result<()> {
    let clock = Arc::new(TestClock::new(t0()));
    db.cache()
        .put(&entry("org:x", "k", "t", b"1", t0(), Span::minutes(10)))
        .await?;
    let tracker = TaskTracker::new();
    let cancel = CancellationToken::new();
    let store: Arc<dyn CacheStore> = Arc::new(db.cache());
    spawn_sweeper(
        store,
        Duration::from_millis(20),
        clock.clone(),
        &tracker,
        cancel.clone(),
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    ensure!(db.cache().list().await?.len() == 1, "not expired yet");
    clock.advance(Span::minutes(11));
    let mut swept = false;
    for _ in 0..250 {
        if db.cache().list().await?.is_empty() {
            swept = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    tracker.close();
    tracker.wait().await;
    ensure!(swept, "the sweeper deleted the expired entry");
    Ok(())
}

async fn a_one_shot_sweep_deletes_what_expired(db: Db) -> anyhow::Result<()> {
    let clock = TestClock::new(t0());
    db.cache()
        .put(&entry(
            "org:x",
            "old",
            "t",
            b"1",
            t0() - Span::hours(2),
            Span::hours(1),
        ))
        .await?;
    db.cache()
        .put(&entry("org:x", "new", "t", b"2", t0(), Span::hours(1)))
        .await?;
    sweep_store_once(&db, None, &clock).await;
    let left = db.cache().list().await?;
    ensure!(left.len() == 1 && left[0].key == "new", "{left:?}");
    Ok(())
}
