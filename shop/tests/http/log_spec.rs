//! The request log, the OpenAPI document and shutdown.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::{shop, Fixture};

#[tokio::test]
async fn the_log_records_queries_headers_and_bodies() {
    let f = Fixture::new().await;
    f.client
        .get(f.url("/orders?page=2&status=open&note=a%20b"))
        .header("X-Trace", "t-1")
        .send()
        .await
        .unwrap();
    let search = json!({"paging": {"page": 1, "pageSize": 3}});
    f.post("/orders/search", &search, Some("total=1")).await;
    f.client
        .post(f.url("/reports"))
        .body("not json")
        .send()
        .await
        .unwrap();
    f.get("/_admin/requests", None).await;

    let log = f.shop.requests();
    assert_eq!(log.len(), 3, "admin requests are not recorded");
    let get = &log[0];
    assert_eq!(
        (get.method.as_str(), get.path.as_str(), get.status),
        ("GET", "/orders", 200)
    );
    let pairs = [("page", "2"), ("status", "open"), ("note", "a b")];
    let expected: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(get.query, expected);
    assert!(get.headers.contains(&("x-trace".into(), "t-1".into())));
    assert!(get.body.is_none());
    assert!(get.started_ms <= get.finished_ms);

    let post = &log[1];
    assert_eq!((post.method.as_str(), post.seq), ("POST", get.seq + 1));
    assert_eq!(post.body, Some(search));
    assert!(post
        .headers
        .contains(&("x-shop-fault".into(), "total=1".into())));
    assert_eq!(log[2].body, Some(Value::String("not json".into())));
    assert_eq!(log[2].status, 400);

    let (_, admin) = f.get("/_admin/requests", None).await;
    assert_eq!(admin.as_array().unwrap().len(), 3);
    assert_eq!(admin[0]["query"][0], json!(["page", "2"]));
    let cleared = f
        .client
        .delete(f.url("/_admin/requests"))
        .send()
        .await
        .unwrap();
    assert!(cleared.status().is_success());
    assert!(f.shop.requests().is_empty());
    f.get("/properties", None).await;
    f.shop.clear_requests();
    assert!(f.shop.requests().is_empty());
}

#[test]
fn the_openapi_document_declares_every_operation() {
    let on_disk = std::fs::read_to_string(dragnet_shop::openapi_path()).unwrap();
    assert_eq!(on_disk, dragnet_shop::OPENAPI_YAML);
    let doc: Value = serde_yaml_ng::from_str(dragnet_shop::OPENAPI_YAML).unwrap();
    assert_eq!(doc["openapi"], json!("3.1.0"));
    let mut operations = BTreeSet::new();
    for (_, item) in doc["paths"].as_object().unwrap() {
        for (_, operation) in item.as_object().unwrap() {
            operations.insert(operation["operationId"].as_str().unwrap().to_string());
        }
    }
    let expected = [
        "listOrders",
        "listCustomers",
        "listOrdersOData",
        "listOrdersDrf",
        "listCustomersDrf",
        "searchOrders",
        "listEvents",
        "listTickets",
        "putTicket",
        "listStripeCustomers",
        "listLinkedCustomers",
        "listTwilioCustomers",
        "listJiraCustomers",
        "listProperties",
        "listPropertyOrders",
        "getOrder",
        "createReport",
        "listReports",
        "createAlert",
        "listAlerts",
    ];
    assert_eq!(operations, expected.iter().map(|s| s.to_string()).collect());
    let per_page = doc["paths"]["/orders"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == json!("per_page"))
        .unwrap();
    assert_eq!(
        per_page["schema"],
        json!({"type": "integer", "minimum": 1, "maximum": 100, "default": 25})
    );
    let paging = &doc["components"]["schemas"]["SearchRequest"]["properties"]["paging"];
    assert_eq!(paging["$ref"], json!("#/components/schemas/Paging"));
}

#[tokio::test]
async fn shutdown_stops_the_server() {
    let handle = shop().await;
    let url = format!("{}/properties", handle.base_url());
    assert!(handle.addr().port() > 0);
    assert!(reqwest::get(&url).await.unwrap().status().is_success());
    handle.shutdown().await;
    assert!(reqwest::get(&url).await.is_err());
}

#[tokio::test]
async fn serve_runs_until_its_shutdown_future_resolves() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/orders?per_page=1",
        listener.local_addr().unwrap()
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(dragnet_shop::serve(listener, async {
        let _ = stopped.await;
    }));
    let body: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    assert_eq!(body["meta"]["total"], json!(6000));
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    assert!(reqwest::get(&url).await.is_err());
}
