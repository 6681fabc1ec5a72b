//! `_for_each` over real HTTP: de-duplication, coercion, tagging, per-value
//! errors, one shared budget.

use dragnet_core::{Error, Limits, StopReason};
use dragnet_e2e::{items, test_limits, Harness};
use serde_json::{json, Value};

fn open_for(property: u64) -> usize {
    dragnet_shop::dataset()
        .orders()
        .iter()
        .filter(|o| o.property_id == property && o.status == dragnet_shop::OrderStatus::Open)
        .count()
}

#[tokio::test]
async fn fans_out_over_deduplicated_coerced_values_walking_each() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listPropertyOrders",
            json!({"status": "open", "_all_pages": true,
                   "_for_each": {"key": "property_id", "values": ["1", 2, "2", 1, 3]}}),
            "",
        )
        .await
        .unwrap();
    assert!(r.verdict.complete, "{}", r.verdict.note);
    let rows = items(&r);
    assert_eq!(rows.len(), open_for(1) + open_for(2) + open_for(3));
    let paths: Vec<String> = h.requests().iter().map(|q| q.path.clone()).collect();
    let distinct: std::collections::BTreeSet<&String> = paths.iter().collect();
    assert_eq!(distinct.len(), 3, "one walk per unique value: {paths:?}");
    // rows already carry property_id: the API's own value is kept
    assert!(rows.iter().all(|r| r["property_id"].is_number()));
    assert!(
        r.verdict.note.contains("across 3 values"),
        "{}",
        r.verdict.note
    );
}

#[tokio::test]
async fn rows_are_tagged_with_their_value_unless_they_have_the_field() {
    let h = Harness::start().await;
    let r = h
        .call(
            "getOrder",
            json!({"_for_each": {"key": "order_id", "values": [5, "6", 7]}}),
            "",
        )
        .await
        .unwrap();
    let rows = items(&r);
    assert_eq!(rows.len(), 3);
    for (row, want) in rows.iter().zip([5, 6, 7]) {
        assert_eq!(row["order_id"], json!(want));
        assert_eq!(row["id"], json!(want));
    }
    assert!(r.verdict.complete);
}

#[tokio::test]
async fn per_value_failures_sit_beside_the_rows_that_succeeded() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listPropertyOrders",
            json!({"per_page": 5, "_for_each": {"key": "property_id", "values": [1, 999, "abc"]}}),
            "",
        )
        .await
        .unwrap();
    assert_eq!(items(&r).len(), 5);
    let errors: Vec<Value> = r.for_each_errors.iter().map(|e| e.value.clone()).collect();
    assert_eq!(errors, vec![json!(999), json!("abc")]);
    assert!(r.for_each_errors[0].error.contains("404"));
    assert!(r.for_each_errors[1].error.contains("integer"));
    assert!(!r.verdict.complete);
    let view = dragnet_e2e::agent_view(&r);
    assert_eq!(view["_forEachErrors"].as_array().unwrap().len(), 2);

    let err = h
        .call(
            "listPropertyOrders",
            json!({"_for_each": {"key": "property_id", "values": [998, 999]}}),
            "",
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::AllValuesFailed { .. }), "{err}");
}

#[tokio::test]
async fn values_share_one_budget_and_the_value_bound() {
    let h = Harness::start().await;
    let limits = Limits {
        max_requests: 3,
        ..test_limits()
    };
    let r = h
        .call_with(
            "listPropertyOrders",
            json!({"per_page": 10, "_all_pages": true,
                   "_for_each": {"key": "property_id", "values": [1, 2, 3, 4]}}),
            "",
            limits,
        )
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::Requests));
    assert_eq!(h.requests().len(), 3);
    assert!(r.verdict.note.contains("not fetched") || r.verdict.note.contains("requests-per-call"));

    let limits = Limits {
        max_for_each_values: 2,
        ..test_limits()
    };
    let r = h
        .call_with(
            "getOrder",
            json!({"_for_each": {"key": "order_id", "values": [1, 2, 3]}}),
            "",
            limits,
        )
        .await
        .unwrap();
    assert_eq!(r.verdict.stopped_by, Some(StopReason::ForEachValues));
    assert_eq!(items(&r).len(), 2);
    assert!(
        r.verdict.note.contains("1 value not fetched"),
        "{}",
        r.verdict.note
    );
}
