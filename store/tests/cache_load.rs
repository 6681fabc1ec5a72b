//! The cache under load on both backends: a 24 MB walk round-trips
//! compressed, writers racing on one key leave one whole entry, and many
//! tenants writing and reading the same keys at once never see each
//! other's entries.

mod common;

use dragnet_store::on_both_backends;

use anyhow::{ensure, Context};
use chrono::Duration as Span;
use common::{entry, t0};
use dragnet_core::ports::cache::CacheStore;
use dragnet_store::Db;
use rand::{Rng, SeedableRng};

on_both_backends!(
    a_24_mb_payload_round_trips,
    racing_puts_leave_one_valid_entry,
    tenants_never_read_each_other,
);

/// 24 MB of JSON-like rows that do not compress to nothing.
fn walk_sized_payload(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(len + 200);
    out.extend_from_slice(b"{\"v\":1,\"kind\":\"items\",\"body\":[");
    let mut id = 0u64;
    while out.len() < len - 100 {
        let total: u32 = rng.random_range(0..1_000_000);
        let token: u64 = rng.random();
        out.extend_from_slice(
            format!("{{\"id\":{id},\"total\":{total},\"token\":\"{token:x}\"}},").as_bytes(),
        );
        id += 1;
    }
    out.extend_from_slice(b"{}]}");
    out.resize(len, b' ');
    out
}

async fn a_24_mb_payload_round_trips(db: Db) -> anyhow::Result<()> {
    let payload = walk_sized_payload(24 * 1024 * 1024, 7);
    let put = entry(
        "org:big",
        "walk",
        "shop.listOrders",
        &payload,
        t0(),
        Span::hours(24),
    );
    db.cache().put(&put).await?;
    let hit = db
        .cache()
        .get("org:big", "walk", t0())
        .await?
        .context("a hit")?;
    ensure!(
        hit.payload.len() == payload.len(),
        "length {}",
        hit.payload.len()
    );
    ensure!(
        hit.payload == payload,
        "the 24 MB payload reads back byte for byte"
    );
    let listed = db.cache().list().await?;
    ensure!(
        listed[0].stored_bytes < payload.len() as u64,
        "compressed: {}",
        listed[0].stored_bytes
    );
    Ok(())
}

/// A payload that says who wrote it, all through.
fn writer_payload(writer: u64, len: usize) -> Vec<u8> {
    format!("writer-{writer:04};").repeat(len / 12).into_bytes()
}

async fn racing_puts_leave_one_valid_entry(db: Db) -> anyhow::Result<()> {
    let now = t0();
    for round in 0..4u64 {
        let key = format!("contested-{round}");
        let mut writers = tokio::task::JoinSet::new();
        for writer in 0..12u64 {
            let db = db.clone();
            let key = key.clone();
            writers.spawn(async move {
                let payload = writer_payload(writer, 64 * 1024 + writer as usize * 997);
                let mut put = entry("org:race", &key, "t", &payload, now, Span::hours(1));
                put.items = writer;
                db.cache().put(&put).await
            });
        }
        while let Some(done) = writers.join_next().await {
            done??;
        }
        let rows: Vec<_> = db
            .cache()
            .list()
            .await?
            .into_iter()
            .filter(|l| l.key == key)
            .collect();
        ensure!(rows.len() == 1, "exactly one row for {key}: {}", rows.len());
        let hit = db
            .cache()
            .get("org:race", &key, now)
            .await?
            .context("the winner")?;
        let expected = writer_payload(hit.items, 64 * 1024 + hit.items as usize * 997);
        ensure!(
            hit.payload == expected,
            "the entry is one writer's whole payload"
        );
    }
    Ok(())
}

async fn tenants_never_read_each_other(db: Db) -> anyhow::Result<()> {
    let seed: u64 = rand::random();
    let scopes: Vec<String> = (0..8)
        .map(|i| match i % 3 {
            0 => format!("org:tenant{i}"),
            1 => format!("user:tenant{i}:ada"),
            _ => format!("tenant:org{i}:shared"),
        })
        .collect();
    let keys: Vec<String> = (0..5).map(|k| format!("shop.listOrders|all|{k}")).collect();
    let now = t0();
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..16u64 {
        let (db, scopes, keys) = (db.clone(), scopes.clone(), keys.clone());
        workers.spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ worker);
            let (mut hits, mut puts) = (0u32, 0u32);
            for op in 0..60u32 {
                let scope = &scopes[rng.random_range(0..scopes.len())];
                let key = &keys[rng.random_range(0..keys.len())];
                if rng.random_bool(0.5) {
                    let body =
                        format!("{scope}|{key}|{worker}|{op}|").repeat(rng.random_range(1..200));
                    db.cache()
                        .put(&entry(
                            scope,
                            key,
                            "shop.listOrders",
                            body.as_bytes(),
                            now,
                            Span::hours(1),
                        ))
                        .await?;
                    puts += 1;
                } else if let Some(hit) = db.cache().get(scope, key, now).await? {
                    let own = format!("{scope}|{key}|");
                    ensure!(
                        hit.payload.starts_with(own.as_bytes()),
                        "seed {seed}: {scope} read another scope's entry"
                    );
                    ensure!(hit.scope == *scope && hit.key == *key);
                    hits += 1;
                }
            }
            anyhow::Ok((hits, puts))
        });
    }
    let mut total_hits = 0;
    while let Some(done) = workers.join_next().await {
        total_hits += done??.0;
    }
    // Every entry that exists belongs to its own scope.
    for listed in db.cache().list().await? {
        let hit = db
            .cache()
            .get(&listed.scope, &listed.key, now)
            .await?
            .context("listed entries hit")?;
        ensure!(
            hit.payload
                .starts_with(format!("{}|{}|", listed.scope, listed.key).as_bytes()),
            "seed {seed}"
        );
    }
    ensure!(total_hits > 0, "seed {seed}: the run exercised hits");
    Ok(())
}
