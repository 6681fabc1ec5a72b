//! The API's own OpenAPI document against the routes it describes: it is
//! OpenAPI 3.1 with the bearer scheme, it names exactly the endpoints the
//! README lists, and every operation it names is answered by a route (no
//! 404 "no route", no 405) on a running server.

mod support;

use std::collections::BTreeSet;

use anyhow::{ensure, Context, Result};
use dragnet_store::Db;
use reqwest::Method;
use serde_json::Value;
use support::Api;

dragnet_store::on_both_backends!(the_document_matches_the_routes);

/// The endpoints, as the README's table lists them.
const ENDPOINTS: [(&str, &str); 28] = [
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/v1/openapi.json"),
    ("get", "/v1/schemas/workflow.json"),
    ("post", "/v1/validate"),
    ("get", "/v1/workflows"),
    ("put", "/v1/workflows/{name}"),
    ("get", "/v1/workflows/{name}"),
    ("delete", "/v1/workflows/{name}"),
    ("post", "/v1/workflows/{name}/runs"),
    ("get", "/v1/runs"),
    ("get", "/v1/runs/{id}"),
    ("post", "/v1/runs/{id}/cancel"),
    ("post", "/v1/runs/{id}/rerun"),
    ("get", "/v1/runs/{id}/events"),
    ("get", "/v1/schedules"),
    ("post", "/v1/schedules/{id}/pause"),
    ("post", "/v1/schedules/{id}/resume"),
    ("post", "/v1/workflows/{name}/backfills"),
    ("get", "/v1/backfills"),
    ("get", "/v1/backfills/{id}"),
    ("post", "/v1/backfills/{id}/cancel"),
    ("get", "/v1/state"),
    ("get", "/v1/state/{workflow}/{step}"),
    ("delete", "/v1/state/{workflow}/{step}"),
    ("get", "/v1/secrets"),
    ("put", "/v1/secrets/{name}"),
    ("delete", "/v1/secrets/{name}"),
];

async fn the_document_matches_the_routes(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    let (status, doc) = api.get("/v1/openapi.json", &t).await?;
    ensure!(status.is_success(), "{status}");
    ensure!(doc == serde_json::to_value(dragnet_api::openapi())?);
    ensure!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "{}",
        doc["openapi"]
    );
    ensure!(doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer");

    let paths = doc["paths"].as_object().context("paths")?;
    let documented: BTreeSet<(String, String)> = paths
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .into_iter()
                .flat_map(|ops| ops.keys())
                .filter(|m| ["get", "put", "post", "delete", "patch"].contains(&m.as_str()))
                .map(move |m| (m.clone(), path.clone()))
        })
        .collect();
    let listed: BTreeSet<(String, String)> = ENDPOINTS
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    ensure!(
        documented == listed,
        "documented {documented:?}\nlisted {listed:?}"
    );

    for (method, path) in &documented {
        let concrete = path
            .replace("{name}", "nothing-here")
            .replace("{id}", "run_none");
        let method = Method::from_bytes(method.to_uppercase().as_bytes())?;
        let resp = api
            .http
            .request(method.clone(), format!("{}{concrete}", api.base))
            .bearer_auth(&t)
            .send()
            .await?;
        let status = resp.status();
        let text = resp.text().await?;
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let message = body["error"]["message"].as_str().unwrap_or_default();
        ensure!(
            status.as_u16() != 405 && !message.starts_with("no route"),
            "{method} {concrete}: {status} {text}"
        );
    }
    // The answers that need no team say what they are.
    let (_, health) = api.send(Method::GET, "/healthz", None, None, &[]).await?;
    ensure!(health["status"] == "ok", "{health}");
    let (status, ready) = api.send(Method::GET, "/readyz", None, None, &[]).await?;
    ensure!(
        status.is_success() && ready["store"] == api.db.backend(),
        "{ready}"
    );
    let (_, schema) = api.get("/v1/schemas/workflow.json", &t).await?;
    ensure!(
        schema == dragnet_engine::workflow::json_schema(),
        "the served schema differs"
    );

    // And an operation it does not name has no route.
    let (status, body) = api
        .send(Method::PATCH, "/v1/workflows/x", Some(&t), None, &[])
        .await?;
    ensure!(status.as_u16() == 405, "{status} {body}");
    api.stop().await
}
