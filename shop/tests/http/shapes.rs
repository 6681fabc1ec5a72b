//! Every endpoint's shape, bounds and validation, without faults.

use reqwest::StatusCode;
use serde_json::{json, Value};

use dragnet_shop::{dataset, OrderStatus};

use crate::{ids, Fixture};

#[tokio::test]
async fn orders_pages_filters_and_clamps() {
    let f = Fixture::new().await;
    let (status, body) = f.get("/orders", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&body["data"]), (1..=25).collect::<Vec<_>>());
    assert_eq!(
        body["meta"],
        json!({"total": 6000, "page": 1, "per_page": 25})
    );
    let first: dragnet_shop::Order = serde_json::from_value(body["data"][0].clone()).unwrap();
    assert_eq!(&first, &dataset().orders()[0]);

    let (_, body) = f.get("/orders?page=2&per_page=10", None).await;
    assert_eq!(ids(&body["data"]), (11..=20).collect::<Vec<_>>());

    let (_, body) = f.get("/orders?per_page=500", None).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 100);
    assert_eq!(body["meta"]["per_page"], json!(100));

    let open = dataset()
        .orders()
        .iter()
        .filter(|o| o.status == OrderStatus::Open && o.property_id == 7)
        .count();
    let (_, body) = f
        .get("/orders?status=open&property_id=7&per_page=100", None)
        .await;
    assert_eq!(body["meta"]["total"], json!(open));
    for order in body["data"].as_array().unwrap() {
        assert_eq!(
            (order["status"].as_str(), order["property_id"].as_u64()),
            (Some("open"), Some(7))
        );
    }

    for bad in [
        "/orders?page=abc",
        "/orders?page=0",
        "/orders?per_page=-1",
        "/orders?status=lost",
    ] {
        let (status, body) = f.get(bad, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(body["error"].is_string(), "{bad}: {body}");
    }
}

#[tokio::test]
async fn offset_and_odata_styles() {
    let f = Fixture::new().await;
    let (status, body) = f.get("/customers?offset=390&limit=50", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&body), (391..=400).collect::<Vec<_>>());
    let (_, body) = f.get("/customers", None).await;
    assert_eq!(ids(&body), (1..=50).collect::<Vec<_>>());
    let (_, body) = f.get("/customers?limit=1000", None).await;
    assert_eq!(body.as_array().unwrap().len(), 200);
    assert_eq!(
        f.get("/customers?offset=x", None).await.0,
        StatusCode::BAD_REQUEST
    );

    let (_, body) = f.get("/odata/orders?%24top=3&$skip=5", None).await;
    assert_eq!(ids(&body["value"]), vec![6, 7, 8]);
    assert_eq!(body["@odata.count"], json!(6000));
    let (_, body) = f.get("/odata/orders?$top=9999", None).await;
    assert_eq!(body["value"].as_array().unwrap().len(), 500);
}

#[tokio::test]
async fn search_reads_paging_from_the_body() {
    let f = Fixture::new().await;
    let paid = dataset()
        .orders()
        .iter()
        .filter(|o| o.status == OrderStatus::Paid && o.total >= 300.0)
        .map(|o| o.id)
        .collect::<Vec<_>>();
    let body = json!({"paging": {"page": 2, "pageSize": 5}, "filter": {"status": "paid", "min_total": 300}});
    let (status, reply) = f.post("/orders/search", &body, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&reply["results"]), paid[5..10].to_vec());
    assert_eq!(reply["pagination"], json!({"total": paid.len()}));

    let (_, reply) = f.post("/orders/search", &json!({}), None).await;
    assert_eq!(reply["results"].as_array().unwrap().len(), 20);
    let (_, reply) = f
        .post(
            "/orders/search",
            &json!({"paging": {"pageSize": 1000}}),
            None,
        )
        .await;
    assert_eq!(reply["results"].as_array().unwrap().len(), 100);
    for bad in [
        json!({"paging": {"page": "2"}}),
        json!({"paging": {"page": 0}}),
        json!({"filter": {"status": 1}}),
        json!([1]),
    ] {
        let (status, reply) = f.post("/orders/search", &bad, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(reply["error"].is_string());
    }
}

#[tokio::test]
async fn events_walk_by_cursor() {
    let f = Fixture::new().await;
    let mut path = "/events?limit=100".to_string();
    let mut seen = Vec::new();
    let mut calls = 0;
    loop {
        let (status, body) = f.get(&path, None).await;
        assert_eq!(status, StatusCode::OK);
        calls += 1;
        seen.extend(ids(&body["items"]));
        match &body["next_cursor"] {
            Value::String(cursor) => path = format!("/events?limit=100&cursor={cursor}"),
            Value::Null => break,
            other => panic!("next_cursor: {other}"),
        }
    }
    assert_eq!(calls, 5);
    assert_eq!(seen, (1..=500).collect::<Vec<_>>());
    let (_, body) = f.get("/events", None).await;
    assert_eq!(body["items"].as_array().unwrap().len(), 50);
    assert!(body["items"][0]["type"].is_string() && body["items"][0]["at"].is_string());
    assert_eq!(
        f.get("/events?cursor=nope", None).await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn properties_and_single_orders() {
    let f = Fixture::new().await;
    let (_, body) = f.get("/properties", None).await;
    assert_eq!(ids(&body["data"]), (1..=30).collect::<Vec<_>>());

    let mine = dataset()
        .orders()
        .iter()
        .filter(|o| o.property_id == 3)
        .count();
    let (status, body) = f.get("/properties/3/orders?per_page=100", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["meta"]["total"], json!(mine));
    assert!(body["data"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["property_id"] == json!(3)));
    assert_eq!(
        f.get("/properties/99/orders", None).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        f.get("/properties/abc/orders", None).await.0,
        StatusCode::BAD_REQUEST
    );

    let (status, body) = f.get("/orders/42", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, serde_json::to_value(&dataset().orders()[41]).unwrap());
    assert_eq!(f.get("/orders/6001", None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(f.get("/orders/abc", None).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(f.get("/nowhere", None).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn reports_and_alerts_are_kept() {
    let f = Fixture::new().await;
    let report =
        json!({"title": "Open orders", "summary": {"count": 2}, "rows": [{"id": 1}, {"id": 2}]});
    let (status, body) = f.post("/reports", &report, None).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        (body["id"].as_str(), body["row_count"].as_u64()),
        (Some("rep_1"), Some(2))
    );
    assert!(body["received_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        f.post("/reports", &json!({"rows": []}), None).await.0,
        StatusCode::BAD_REQUEST
    );
    let (_, list) = f.get("/reports", None).await;
    assert_eq!(list["data"][0]["summary"], json!({"count": 2}));
    assert_eq!(list["data"].as_array().unwrap().len(), 1);

    let (status, body) = f
        .post(
            "/alerts",
            &json!({"message": "late", "severity": "warning"}),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(body["id"], json!("alert_1"));
    for bad in [
        json!({"severity": "info"}),
        json!({"message": "x", "severity": "loud"}),
    ] {
        assert_eq!(
            f.post("/alerts", &bad, None).await.0,
            StatusCode::BAD_REQUEST,
            "{bad}"
        );
    }
    let (_, list) = f.get("/alerts", None).await;
    assert_eq!(list["data"][0]["message"], json!("late"));
}

#[tokio::test]
async fn django_rest_framework_paging() {
    let f = Fixture::new().await;
    // page_size is capped silently at 50, below the documented 100.
    let (status, body) = f.get("/drf/orders?page=2&page_size=100", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&body["results"]), (51..=100).collect::<Vec<_>>());
    assert_eq!(body["count"], json!(6000));
    let next = body["next"].as_str().unwrap();
    assert!(
        next.starts_with("http://") && next.ends_with("/drf/orders?page=3&page_size=50"),
        "{next}"
    );
    assert!(body["previous"]
        .as_str()
        .unwrap()
        .ends_with("page=1&page_size=50"));
    // the last page has no next; one past it is a 404 "Invalid page."
    let (_, last) = f.get("/drf/orders?page=120&page_size=50", None).await;
    assert_eq!(last["next"], Value::Null);
    let (status, body) = f.get("/drf/orders?page=121&page_size=50", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body, json!({"detail": "Invalid page."}));
    // limit/offset answers an empty page past the end
    let (_, body) = f.get("/drf/customers?limit=80&offset=350", None).await;
    assert_eq!(body["results"].as_array().unwrap().len(), 50);
    assert_eq!(body["next"], Value::Null);
    let (status, body) = f.get("/drf/customers?offset=400", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["results"], json!([]));
}

#[tokio::test]
async fn customers_in_the_stripe_github_and_twilio_shapes() {
    let f = Fixture::new().await;
    let (status, body) = f.get("/stripe/customers?limit=3", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["object"], json!("list"));
    assert_eq!(ids(&body["data"]), vec![1, 2, 3]);
    assert_eq!(body["has_more"], json!(true));
    let (_, body) = f
        .get("/stripe/customers?limit=3&starting_after=3", None)
        .await;
    assert_eq!(ids(&body["data"]), vec![4, 5, 6]);
    let (_, body) = f
        .get("/stripe/customers?limit=100&starting_after=390", None)
        .await;
    assert_eq!(body["has_more"], json!(false));
    assert_eq!(body["data"].as_array().unwrap().len(), 10);
    let (status, body) = f.get("/stripe/customers?starting_after=cus_x", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("No such customer"));

    let (status, body) = f.get("/twilio/customers?PageSize=2", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&body["customers"]), vec![1, 2]);
    let next = body["next_page_uri"].as_str().unwrap().to_string();
    assert!(
        next.starts_with("/twilio/customers?PageSize=2&Page=1&PageToken="),
        "{next}"
    );
    let (_, body) = f.get(&next, None).await;
    assert_eq!(ids(&body["customers"]), vec![3, 4]);
    let (_, body) = f
        .get("/twilio/customers?PageSize=100&PageToken=bogus", None)
        .await;
    assert!(body["error"].as_str().unwrap().contains("not a cursor"));
}
