//! Every paging style of the demo shop, walked over real HTTP: the right
//! rows, the payload shape kept, and a complete verdict only when it is.

use dragnet_core::{Payload, StopReason};
use dragnet_e2e::{agent_view, ids, items, Harness};
use dragnet_shop::{dataset, OrderStatus};
use serde_json::{json, Value};

fn open_order_ids() -> Vec<i64> {
    dataset()
        .orders()
        .iter()
        .filter(|o| o.status == OrderStatus::Open)
        .map(|o| o.id as i64)
        .collect()
}

#[tokio::test]
async fn page_and_per_page_with_a_data_meta_envelope() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listOrders",
            json!({"status": "open", "_all_pages": true}),
            "",
        )
        .await
        .unwrap();
    let want = open_order_ids();
    assert_eq!(ids(&r), want);
    assert!(r.verdict.complete, "{}", r.verdict.note);
    assert_eq!(r.verdict.stopped_by, None);
    let pages = want.len().div_ceil(100) as u32;
    assert_eq!(r.verdict.requests, pages);
    // the page size is the declared maximum and pages advance by one
    let log = h.requests();
    let pages_asked: Vec<String> = log
        .iter()
        .map(|q| q.query.iter().find(|(k, _)| k == "page").unwrap().1.clone())
        .collect();
    assert_eq!(
        pages_asked,
        (1..=pages).map(|p| p.to_string()).collect::<Vec<_>>()
    );
    assert!(log
        .iter()
        .all(|q| q.query.contains(&("per_page".into(), "100".into()))));
    // the payload keeps the tool's own shape: page one's envelope, all rows
    let view = agent_view(&r);
    assert_eq!(view["data"].as_array().unwrap().len(), want.len());
    assert_eq!(view["meta"]["total"], json!(want.len()));
    assert_eq!(view["_pagingComplete"], json!(true));
    assert_eq!(view["_likelyMoreRows"], json!(false));
}

#[tokio::test]
async fn offset_and_limit_with_a_bare_array() {
    let h = Harness::start().await;
    let r = h
        .call("listCustomers", json!({"_all_pages": true}), "")
        .await
        .unwrap();
    assert_eq!(ids(&r), (1..=400).collect::<Vec<_>>());
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let offsets: Vec<String> = h
        .requests()
        .iter()
        .map(|q| {
            q.query
                .iter()
                .find(|(k, _)| k == "offset")
                .unwrap()
                .1
                .clone()
        })
        .collect();
    // 200 per page (the declared maximum); an empty third page ends the walk
    assert_eq!(offsets, vec!["0", "200", "400"]);
    assert!(matches!(r.payload, Payload::Collection { .. }));
    // a bare array renders under `items`
    assert_eq!(agent_view(&r)["items"].as_array().unwrap().len(), 400);
}

#[tokio::test]
async fn odata_top_and_skip() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listOrdersOData",
            json!({"status": "open", "_all_pages": true}),
            "",
        )
        .await
        .unwrap();
    assert_eq!(ids(&r), open_order_ids());
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let view = agent_view(&r);
    assert!(view.get("@odata.count").is_some());
    assert!(h
        .requests()
        .iter()
        .all(|q| q.query.iter().any(|(k, v)| k == "$top" && v == "500")));
}

#[tokio::test]
async fn paging_one_level_down_in_a_post_body() {
    let h = Harness::start().await;
    let r = h
        .call(
            "searchOrders",
            json!({"filter": {"status": "open"}, "_all_pages": true}),
            "",
        )
        .await
        .unwrap();
    assert_eq!(ids(&r), open_order_ids());
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let bodies: Vec<Value> = h
        .requests()
        .iter()
        .map(|q| q.body.clone().unwrap())
        .collect();
    for (i, body) in bodies.iter().enumerate() {
        assert_eq!(body["paging"]["page"], json!(i + 1));
        assert_eq!(body["paging"]["pageSize"], json!(100));
        assert_eq!(body["filter"], json!({"status": "open"}));
    }
}

#[tokio::test]
async fn cursor_tools_are_walked_and_one_page_of_them_is_not_complete() {
    let h = Harness::start().await;
    // Walked by its cursor (see cursor_walks.rs for the walk itself).
    let all = h
        .call(
            "listEvents",
            json!({"_all_pages": true, "_fields": ["id"]}),
            "",
        )
        .await
        .unwrap();
    assert!(all.verdict.complete, "{}", all.verdict.note);

    let r = h
        .call("listEvents", json!({"_fields": ["id"]}), "")
        .await
        .unwrap();
    assert!(!r.verdict.complete);
    assert!(r.verdict.likely_more_rows, "a next cursor was given");
    assert_eq!(r.verdict.stopped_by, Some(StopReason::NotWalked));
    assert!(items(&r).iter().all(|i| i.as_object().unwrap().len() == 1));
}

#[tokio::test]
async fn a_tool_without_paging_is_complete_in_one_call() {
    let h = Harness::start().await;
    let r = h.call("listProperties", json!({}), "").await.unwrap();
    assert_eq!(ids(&r).len(), 30);
    assert!(r.verdict.complete, "{}", r.verdict.note);
}

#[tokio::test]
async fn one_page_of_a_walkable_tool_is_not_called_complete() {
    let h = Harness::start().await;
    let r = h
        .call("listOrders", json!({"status": "open"}), "")
        .await
        .unwrap();
    assert_eq!(ids(&r).len(), 25, "the API's default page size");
    assert!(!r.verdict.complete);
    assert!(r.verdict.likely_more_rows);
    assert!(r.verdict.note.contains("one page"), "{}", r.verdict.note);
}

#[tokio::test]
async fn a_single_object_is_returned_whole() {
    let h = Harness::start().await;
    let r = h
        .call("getOrder", json!({"order_id": 42}), "")
        .await
        .unwrap();
    assert!(matches!(r.payload, Payload::Single(_)));
    assert!(r.verdict.complete);
    let view = agent_view(&r);
    assert_eq!(view["id"], json!(42));
    assert_eq!(view["_pagingComplete"], json!(true));
}
