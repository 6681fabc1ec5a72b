//! Every fault mode of the `X-Shop-Fault` header, over real HTTP.

use std::time::{Duration, Instant, SystemTime};

use reqwest::StatusCode;
use serde_json::json;

use crate::{ids, Fixture};

#[tokio::test]
async fn cap_and_ignore_page_bend_the_window() {
    let f = Fixture::new().await;
    let (_, body) = f.get("/orders?per_page=50", Some("cap=10")).await;
    assert_eq!(ids(&body["data"]), (1..=10).collect::<Vec<_>>());
    assert_eq!(body["meta"]["total"], json!(6000));
    let (_, body) = f.get("/orders?page=2&per_page=50", Some("cap=10")).await;
    assert_eq!(ids(&body["data"]), (11..=20).collect::<Vec<_>>());
    let (_, body) = f
        .get("/customers?offset=20&limit=100", Some("cap=20"))
        .await;
    assert_eq!(ids(&body), (21..=40).collect::<Vec<_>>());

    let (_, body) = f
        .get("/orders?page=3&per_page=5", Some("ignore-page"))
        .await;
    assert_eq!(ids(&body["data"]), (1..=5).collect::<Vec<_>>());
    let (_, body) = f
        .get("/customers?offset=100&limit=5", Some("ignore-page"))
        .await;
    assert_eq!(ids(&body), (1..=5).collect::<Vec<_>>());
    let (_, body) = f
        .get("/odata/orders?$skip=100&$top=5", Some("ignore-page"))
        .await;
    assert_eq!(ids(&body["value"]), (1..=5).collect::<Vec<_>>());
    let search = json!({"paging": {"page": 4, "pageSize": 5}});
    let (_, body) = f.post("/orders/search", &search, Some("ignore-page")).await;
    assert_eq!(ids(&body["results"]), (1..=5).collect::<Vec<_>>());
}

#[tokio::test]
async fn short_pages_drop_rows_for_good() {
    let f = Fixture::new().await;
    let fault = Some("short-page=2");
    let (_, body) = f.get("/orders?page=2&per_page=10", fault).await;
    assert_eq!(ids(&body["data"]), (11..=15).collect::<Vec<_>>());
    assert_eq!(body["meta"]["total"], json!(6000));
    let (_, body) = f.get("/orders?page=3&per_page=10", fault).await;
    assert_eq!(ids(&body["data"]), (21..=30).collect::<Vec<_>>());
    // Offset endpoints: page N is offset / limit + 1.
    let (_, body) = f
        .get("/customers?offset=100&limit=50", Some("short-page=3"))
        .await;
    assert_eq!(ids(&body), (101..=125).collect::<Vec<_>>());
    // Cursor endpoint: page N is the N-th call of the chain; the cursor skips the lost rows.
    let (_, first) = f.get("/events?limit=10", None).await;
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, second) = f
        .get(&format!("/events?limit=10&cursor={cursor}"), fault)
        .await;
    assert_eq!(ids(&second["items"]), (11..=15).collect::<Vec<_>>());
    let cursor = second["next_cursor"].as_str().unwrap();
    let (_, third) = f
        .get(&format!("/events?limit=10&cursor={cursor}"), fault)
        .await;
    assert_eq!(ids(&third["items"]), (21..=30).collect::<Vec<_>>());
}

#[tokio::test]
async fn totals_can_lie_or_vanish() {
    let f = Fixture::new().await;
    let (_, body) = f.get("/orders", Some("total=7000")).await;
    assert_eq!(body["meta"]["total"], json!(7000));
    let (_, body) = f.get("/odata/orders", Some("total=12")).await;
    assert_eq!(body["@odata.count"], json!(12));
    let (_, body) = f.post("/orders/search", &json!({}), Some("total=3")).await;
    assert_eq!(body["pagination"]["total"], json!(3));

    let (_, page1) = f.get("/orders?page=1", Some("total-first-page-only")).await;
    let (_, page2) = f.get("/orders?page=2", Some("total-first-page-only")).await;
    assert_eq!(page1["meta"]["total"], json!(6000));
    assert!(page2["meta"].get("total").is_none() && page2["meta"]["page"] == json!(2));

    let (_, body) = f.get("/odata/orders", Some("no-total")).await;
    assert!(body.get("@odata.count").is_none() && body["value"].is_array());
    let (_, body) = f.get("/orders", Some("no-total")).await;
    assert!(body["meta"].get("total").is_none());
}

#[tokio::test]
async fn status_faults_fire_once_or_always() {
    let f = Fixture::new().await;
    let send = |path: &'static str, fault: &'static str, session: &'static str| {
        f.client
            .get(f.url(path))
            .header("X-Shop-Fault", fault)
            .header("X-Shop-Session", session)
            .send()
    };
    let once = "status=2:503:retry-after=7";
    let page1 = send("/orders?page=1", once, "a").await.unwrap();
    assert_eq!(page1.status(), StatusCode::OK);
    let failed = send("/orders?page=2", once, "a").await.unwrap();
    assert_eq!(failed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(failed.headers()["retry-after"], "7");
    let error: serde_json::Value = failed.json().await.unwrap();
    assert!(error["error"].is_string());
    assert_eq!(
        send("/orders?page=2", once, "a").await.unwrap().status(),
        StatusCode::OK
    );
    // Another session sees its own "once".
    assert_eq!(
        send("/orders?page=2", once, "b").await.unwrap().status(),
        StatusCode::SERVICE_UNAVAILABLE
    );

    let always = "status=1:429:always:retry-after-date=30";
    for _ in 0..2 {
        let response = send("/customers", always, "a").await.unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        let date = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .to_string();
        let when = httpdate::parse_http_date(&date).unwrap();
        let ahead = when.duration_since(SystemTime::now()).unwrap();
        assert!(ahead > Duration::from_secs(20) && ahead <= Duration::from_secs(31));
    }
}

#[tokio::test]
async fn broken_bodies_and_slow_pages() {
    let f = Fixture::new().await;
    let response = f
        .client
        .get(f.url("/orders?page=2"))
        .header("X-Shop-Fault", "malformed=2")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let bytes = response.bytes().await.unwrap();
    assert!(!bytes.is_empty());
    assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_err());

    let (status, body) = f.get("/orders", Some("missing-collection=1")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.get("data").is_none() && body["meta"]["total"] == json!(6000));
    let (_, body) = f.get("/customers", Some("missing-collection=1")).await;
    assert_eq!(body, json!({"error": "gone"}));
    let (_, body) = f.get("/events", Some("missing-collection=1")).await;
    assert!(body.get("items").is_none() && body["next_cursor"].is_string());

    let response = f
        .client
        .get(f.url("/orders?per_page=5"))
        .header("X-Shop-Fault", "huge=1:200000")
        .send()
        .await
        .unwrap();
    let bytes = response.bytes().await.unwrap();
    assert!(bytes.len() >= 200_000, "{} bytes", bytes.len());
    let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(body["data"][4]["notes"].is_string());

    let started = Instant::now();
    let (status, _) = f.get("/odata/orders?$top=1", Some("slow=1:150")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(150));
}

#[tokio::test]
async fn unknown_tokens_are_refused_by_name() {
    let f = Fixture::new().await;
    for fault in ["cap=5,shrot-page=2", "status=2", "cap=zero"] {
        let (status, body) = f.get("/orders", Some(fault)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{fault}");
        let message = body["error"].as_str().unwrap();
        let token = fault.rsplit(',').next().unwrap();
        assert!(message.contains(token), "{fault}: {message}");
    }
}
