//! Cache payloads at rest on both backends: what `stored::encode` writes
//! (layout 3, item offsets beside the items) is stored LZ4-compressed and
//! read back byte for byte, and its items rebuilt from the offsets are
//! exactly the ones encoded; an entry an older build wrote (layout 2,
//! zlib) is still read and decodes to the same items.

mod common;

use anyhow::{ensure, Context};
use chrono::Duration as Span;
use common::t0;
use dragnet_core::ports::cache::{CacheEntry, CacheStore};
use dragnet_core::Payload;
use dragnet_store::{on_both_backends, Db};
use dragnet_walk::cache::stored;

on_both_backends!(
    new_entries_are_compressed_and_read_back_identical,
    old_zlib_layout2_entries_are_still_read,
);

/// A page like the shop's: an envelope around `n` orders.
fn payload(n: usize) -> anyhow::Result<Payload> {
    let orders: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id":{i},"customer":{{"name":"Ada \"{i}\""}},"total":"{}.50","lines":[1,2]}}"#,
                i % 97
            )
        })
        .collect();
    let body = format!(
        r#"{{"@odata.count":{n},"value":[{}],"@odata.nextLink":null}}"#,
        orders.join(",")
    );
    common::collection_payload(&body, "value")
}

fn entry_of(key: &str, bytes: Vec<u8>, items: u64) -> CacheEntry {
    CacheEntry {
        scope: "org:a".into(),
        key: key.into(),
        tool: "shop.listOrdersOData".into(),
        payload: bytes,
        items,
        cached_at: t0(),
        expires_at: t0() + Span::hours(1),
        payload_row: None,
    }
}

fn texts(payload: &Payload) -> Vec<String> {
    payload.items().iter().map(str::to_string).collect()
}

fn written(payload: &Payload) -> String {
    let mut out = String::new();
    dragnet_core::payload::write_payload(&mut out, payload);
    out
}

async fn new_entries_are_compressed_and_read_back_identical(db: Db) -> anyhow::Result<()> {
    let live = payload(3000)?;
    let bytes = stored::encode(&live);
    db.cache().put(&entry_of("k", bytes.clone(), 3000)).await?;
    let back = db.cache().get("org:a", "k", t0()).await?.context("a hit")?;
    ensure!(
        back.payload == bytes,
        "the payload reads back byte for byte"
    );
    let listing = db.cache().list().await?;
    let stored_bytes = listing.first().map_or(0, |l| l.stored_bytes);
    ensure!(
        stored_bytes > 0 && stored_bytes * 3 < bytes.len() as u64,
        "stored compressed: {stored_bytes} of {} bytes",
        bytes.len()
    );
    let decoded = stored::decode(back.payload.clone()).context("it decodes")?;
    ensure!(texts(&decoded) == texts(&live), "the same items, in order");
    ensure!(written(&decoded) == written(&live), "the same envelope");
    Ok(())
}

async fn old_zlib_layout2_entries_are_still_read(db: Db) -> anyhow::Result<()> {
    let live = payload(500)?;
    let old = stored::encode_layout2(&live);
    ensure!(old.first() == Some(&b'{'), "layout 2 is a JSON head line");
    db.cache()
        .cache_put_zlib(&entry_of("old", old.clone(), 500))
        .await?;
    let back = db
        .cache()
        .get("org:a", "old", t0())
        .await?
        .context("a hit")?;
    ensure!(back.payload == old, "inflated with zlib, as written");
    let decoded = stored::decode(back.payload.clone()).context("layout 2 decodes")?;
    ensure!(texts(&decoded) == texts(&live));
    ensure!(written(&decoded) == written(&live));
    // Written again by this build, the same walk is layout 3 and LZ4.
    db.cache()
        .put(&entry_of("old", stored::encode(&live), 500))
        .await?;
    let again = db
        .cache()
        .get("org:a", "old", t0())
        .await?
        .context("a hit")?;
    ensure!(again.payload != old && !again.payload.starts_with(b"{"));
    ensure!(texts(&stored::decode(again.payload.clone()).context("decodes")?) == texts(&live));
    Ok(())
}
