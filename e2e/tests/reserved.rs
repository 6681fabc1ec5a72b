//! Reserved arguments never reach the upstream; `_fields` and `_filter`
//! shape the rows; bad input is a clear error before any request.

use dragnet_core::Error;
use dragnet_e2e::{agent_view, items, Harness};
use serde_json::{json, Value};

const RESERVED: [&str; 5] = ["_fields", "_all_pages", "_for_each", "_filter", "_refresh"];

fn mentions_reserved(text: &str) -> bool {
    RESERVED.iter().any(|r| text.contains(r))
}

#[tokio::test]
async fn no_reserved_argument_reaches_the_upstream() {
    let h = Harness::start().await;
    let args = json!({
        "status": "open",
        "_all_pages": true,
        "_fields": ["id", "total"],
        "_filter": [{"field": "total", "op": "gt", "value": 100}],
        "_refresh": true,
        "_for_each": {"key": "property_id", "values": [1, 2]}
    });
    h.call("listOrders", args, "").await.unwrap();
    let body_args = json!({
        "filter": {"status": "open"},
        "_all_pages": true,
        "_fields": ["id"],
        "_filter": [{"field": "total", "op": "lt", "value": 100}],
        "_refresh": false
    });
    h.call("searchOrders", body_args, "").await.unwrap();
    let log = h.requests();
    assert!(log.len() > 5);
    for request in log {
        for (k, v) in &request.query {
            assert!(
                !mentions_reserved(k) && !mentions_reserved(v),
                "query {k}={v}"
            );
        }
        for (k, v) in &request.headers {
            assert!(!mentions_reserved(k) && !mentions_reserved(v), "header {k}");
        }
        if let Some(body) = &request.body {
            assert!(!mentions_reserved(&body.to_string()), "body {body}");
        }
        assert!(!mentions_reserved(&request.path));
    }
}

#[tokio::test]
async fn fields_project_and_report_what_matched_nothing() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listOrders",
            json!({"per_page": 5, "_fields": ["id", "customer.name", "lines.sku", "custmer.email"]}),
            "",
        )
        .await
        .unwrap();
    let first = &items(&r)[0];
    assert_eq!(
        first.as_object().unwrap().keys().collect::<Vec<_>>(),
        vec!["id", "customer", "lines", "custmer"]
    );
    assert!(first["customer"]["name"].is_string());
    assert!(first["customer"].get("email").is_none());
    assert!(first["lines"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l.as_object().unwrap().len() == 1));
    assert_eq!(first["custmer"], Value::Null);
    let view = agent_view(&r);
    let unmatched = &view["_unmatchedFields"];
    assert_eq!(unmatched["fields"], json!(["custmer.email"]));
    assert!(unmatched["availableKeys"]
        .as_array()
        .unwrap()
        .contains(&json!("customer")));
    assert!(
        unmatched["sampleItem"]["total"].is_number(),
        "the sample is unprojected"
    );
    // the stored payload stays unprojected
    assert!(r.payload.items().get(0).unwrap().contains("\"email\""));
}

#[tokio::test]
async fn filter_runs_on_merged_rows_before_projection() {
    let h = Harness::start().await;
    let r = h
        .call(
            "listOrders",
            json!({"_all_pages": true, "status": "open",
                   "_filter": [{"field": "total", "op": "gte", "value": 500},
                               {"field": "customer.name", "op": "exists", "value": true}],
                   "_fields": ["id"]}),
            "",
        )
        .await
        .unwrap();
    let want: Vec<i64> = dragnet_shop::dataset()
        .orders()
        .iter()
        .filter(|o| o.status == dragnet_shop::OrderStatus::Open && o.total >= 500.0)
        .map(|o| o.id as i64)
        .collect();
    let got: Vec<i64> = items(&r)
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(got, want);
    assert!(r.verdict.complete);
    assert!(
        r.verdict.note.contains("matched the filter"),
        "{}",
        r.verdict.note
    );
}

#[tokio::test]
async fn bad_input_is_a_clear_error_before_any_request() {
    let h = Harness::start().await;
    let cases = [
        (json!({"page": "two"}), "`page`"),
        (json!({"nope": 1}), "not a parameter"),
        (json!({"status": "lost"}), "not one of"),
        (
            json!({"_filter": [{"field": "total", "op": "like", "value": 1}]}),
            "unknown operator `like`",
        ),
        (
            json!({"_for_each": {"key": "store", "values": [1]}}),
            "invalid_for_each_key",
        ),
        (json!({"_fields": "a..b"}), "_fields"),
    ];
    for (args, expected) in cases {
        let err = h.call("listOrders", args.clone(), "").await.unwrap_err();
        assert!(err.to_string().contains(expected), "{args}: {err}");
    }
    let err = h
        .call(
            "listOrders",
            json!({"_for_each": {"key": "store", "values": [1]}}),
            "",
        )
        .await
        .unwrap_err();
    let Error::InvalidForEachKey { parameters, .. } = err else {
        panic!()
    };
    assert!(parameters.contains(&"property_id".to_string()));
    assert!(h.requests().is_empty());
}
