//! A walk holds the bytes it fetched once: each page body is kept whole and
//! items are ranges into it, so what a result holds is about the items'
//! own bytes, never a second copy of them.

use dragnet_e2e::Harness;
use serde_json::json;

#[tokio::test]
async fn a_walk_holds_its_items_bytes_once() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listOrders",
            json!({"status": "open", "_all_pages": true}),
            "",
        )
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let items = r.payload.items();
    assert!(items.len() > 500, "a walk of many pages");
    let item_bytes = items.item_bytes();
    let held = items.held_bytes();
    // The bodies add their envelopes and separators (a few per cent) and
    // the ranges 12 bytes per item; a copy of every item would double it.
    let bound = item_bytes + item_bytes / 10 + 12 * items.len() + 64 * 1024;
    assert!(
        held <= bound,
        "held {held} bytes for {item_bytes} bytes of items (bound {bound})"
    );
}
