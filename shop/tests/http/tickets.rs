//! `/tickets`: the seeded tickets paged oldest change first, `updated_since`
//! filtering, `PUT` adding and changing one (a change moves it to the end),
//! bad input refused with its name, and an outage from a page on.

use reqwest::StatusCode;
use serde_json::json;

use super::{ids, Fixture};

#[tokio::test]
async fn tickets_page_by_change_and_follow_writes() {
    let f = Fixture::new().await;
    let (status, page) = f.get("/tickets?per_page=100", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&page["data"]), (1..=40).collect::<Vec<u64>>());
    assert_eq!(page["meta"]["total"], 40);
    assert_eq!(page["data"][39]["updated_at"], "2026-01-05T21:00:00Z");

    let (_, since) = f
        .get("/tickets?updated_since=2026-01-05T18:00:00Z", None)
        .await;
    assert_eq!(ids(&since["data"]), vec![39, 40]);

    // Ticket 3 changes: it moves to the end; ticket 99 is new.
    let put = |id: u64, body: serde_json::Value| {
        let request = f.client.put(f.url(&format!("/tickets/{id}"))).json(&body);
        async move { request.send().await.unwrap().status() }
    };
    let changed = put(
        3,
        json!({"updated_at": "2026-01-07T00:00:00Z", "status": "solved"}),
    )
    .await;
    assert_eq!(changed, StatusCode::OK);
    let added = put(99, json!({"updated_at": "2026-01-06T00:00:00Z"})).await;
    assert_eq!(added, StatusCode::CREATED);
    let (_, since) = f
        .get("/tickets?updated_since=2026-01-05T18:00:00Z", None)
        .await;
    assert_eq!(ids(&since["data"]), vec![39, 40, 99, 3]);
    assert_eq!(since["data"][3]["status"], "solved");

    // Bad input names what is wrong.
    let (status, body) = f.get("/tickets?updated_since=yesterday", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"].as_str().unwrap().contains("updated_since"),
        "{body}"
    );
    assert_eq!(
        put(5, json!({"status": "open"})).await,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        put(
            5,
            json!({"updated_at": "2026-01-01T00:00:00Z", "status": "lost"})
        )
        .await,
        StatusCode::BAD_REQUEST
    );

    // An outage from page 2 on: page 1 answers, page 2 does not.
    let (status, _) = f
        .post(
            "/_admin/tickets/outage",
            &json!({"from_page": 2, "status": 502}),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(f.get("/tickets?per_page=10", None).await.0, StatusCode::OK);
    let (status, body) = f.get("/tickets?per_page=10&page=2", None).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    let ended = f
        .client
        .delete(f.url("/_admin/tickets/outage"))
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    let (status, _) = f.get("/tickets?per_page=10&page=2", None).await;
    assert_eq!(status, StatusCode::OK);
}
