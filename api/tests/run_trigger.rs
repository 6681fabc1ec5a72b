//! A run records what started it (issue 21), over real HTTP on both
//! backends: a run started through the API names its kind and the token
//! that started it (never the token), a run a schedule fired names the
//! tick, when it fired and the schedule; `GET /v1/runs?trigger=` filters by
//! kind (an unknown kind is a 400 naming the kinds); the OpenAPI document
//! describes it; the run page and the runs list's filter show it.

mod support;

use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Utc};
use dragnet_store::testing::TestClock;
use dragnet_store::Db;
use reqwest::header::{COOKIE, SET_COOKIE};
use reqwest::StatusCode;
use serde_json::Value;
use support::Api;

dragnet_store::on_both_backends!(api_and_scheduled_runs_say_what_started_them);

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn ids(list: &Value) -> Vec<String> {
    list["runs"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["run_id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A UI session of `token`: the cookie to send.
async fn session(api: &Api, token: &str) -> Result<String> {
    let response = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?
        .post(format!("{}/ui/sign-in", api.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await?;
    let cookie = response
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .context("a session cookie")?;
    Ok(cookie.split(';').next().unwrap_or_default().to_string())
}

async fn page(api: &Api, path: &str, cookie: &str) -> Result<String> {
    let response = api
        .http
        .get(format!("{}{path}", api.base))
        .header(COOKIE, cookie)
        .send()
        .await?;
    ensure!(
        response.status() == StatusCode::OK,
        "{path}: {}",
        response.status()
    );
    Ok(response.text().await?)
}

async fn api_and_scheduled_runs_say_what_started_them(db: Db) -> Result<()> {
    let clock = Arc::new(TestClock::new(at("2026-06-01T09:59:30Z")));
    let api = Api::start_clocked(db, clock.clone()).await?;
    let t = api.team("acme").await?;
    let token_id = api
        .db
        .teams()
        .list_tokens(Some("acme"))
        .await?
        .first()
        .map(|k| k.token_id.clone())
        .context("the team's token")?;
    let yaml = format!(
        "name: hourly
providers:
  shop:
    openapi: openapi.yaml
    base_url: {base}
triggers:
  - cron: \"0 * * * *\"
steps:
  - id: properties
    tool: shop.listProperties
",
        base = api.shop.base_url()
    );
    let (status, v) = api.push(&t, "hourly", &yaml).await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");

    // Started through the API: its kind and the token's id, never the token.
    let manual = api.run(&t, "hourly", "{}").await?;
    let record = api.finished(&t, &manual).await?;
    let trigger = &record["trigger"];
    ensure!(
        trigger["kind"] == "api"
            && trigger["started_by"] == format!("token:{token_id}")
            && trigger["scheduled_for"].is_null()
            && trigger["schedule_id"].is_null(),
        "{record}"
    );
    ensure!(
        !record.to_string().contains(&t),
        "the token is in the record"
    );

    // Fired by the schedule: the tick, when it fired, the schedule.
    clock.set(at("2026-06-01T10:00:05Z"));
    let fired = api.pass().await?.fired;
    ensure!(fired.len() == 1, "{fired:?}");
    let scheduled = fired[0].clone();
    let record = api.finished(&t, &scheduled).await?;
    let trigger = &record["trigger"];
    let (_, schedules) = api.get("/v1/schedules", &t).await?;
    let schedule_id = schedules["schedules"][0]["schedule_id"].clone();
    ensure!(
        trigger["kind"] == "schedule"
            && trigger["schedule_id"] == schedule_id
            && trigger["started_by"].is_null(),
        "{record} {schedules}"
    );
    let time = |v: &Value| {
        v.as_str()
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    ensure!(
        time(&trigger["scheduled_for"]) == Some(at("2026-06-01T10:00:00Z"))
            && time(&trigger["fired_at"]) == Some(at("2026-06-01T10:00:05Z")),
        "{trigger}"
    );

    // The list says each run's kind, and filters by it.
    let (_, all) = api.get("/v1/runs", &t).await?;
    ensure!(ids(&all) == [scheduled.clone(), manual.clone()], "{all}");
    ensure!(
        all["runs"][0]["trigger"] == "schedule" && all["runs"][1]["trigger"] == "api",
        "{all}"
    );
    let (_, only) = api.get("/v1/runs?trigger=schedule", &t).await?;
    ensure!(ids(&only) == [scheduled.clone()], "{only}");
    let (_, only) = api.get("/v1/runs?trigger=cron", &t).await?;
    ensure!(ids(&only) == [scheduled.clone()], "{only}");
    let (_, only) = api.get("/v1/runs?trigger=api", &t).await?;
    ensure!(ids(&only) == [manual.clone()], "{only}");
    let (_, none) = api.get("/v1/runs?trigger=manual", &t).await?;
    ensure!(ids(&none).is_empty(), "{none}");
    let (status, bad) = api.get("/v1/runs?trigger=hourly", &t).await?;
    ensure!(
        status == StatusCode::BAD_REQUEST
            && bad["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("manual, api, schedule, rerun")),
        "{status} {bad}"
    );

    // The OpenAPI document describes it.
    let (_, doc) = api.get("/v1/openapi.json", &t).await?;
    let schemas = &doc["components"]["schemas"];
    ensure!(
        schemas["RunRecordBody"]["properties"]["trigger"].is_object()
            && schemas["TriggerBody"]["properties"]["started_by"].is_object()
            && schemas["RunItem"]["properties"]["trigger"].is_object(),
        "{schemas}"
    );
    let params = doc["paths"]["/v1/runs"]["get"]["parameters"].to_string();
    ensure!(params.contains("\"trigger\""), "{params}");

    // The UI: the run page says it, the list filters by it.
    let cookie = session(&api, &t).await?;
    let html = page(&api, &format!("/ui/runs/{scheduled}"), &cookie).await?;
    ensure!(
        html.contains("data-trigger=\"schedule\"") && html.contains("2026-06-01 10:00:00 UTC"),
        "{html}"
    );
    let html = page(&api, &format!("/ui/runs/{manual}"), &cookie).await?;
    ensure!(
        html.contains("through the API") && html.contains(&format!("token:{token_id}")),
        "{html}"
    );
    let html = page(&api, "/ui/runs?trigger=api", &cookie).await?;
    ensure!(
        html.contains(&manual) && !html.contains(&scheduled),
        "{html}"
    );
    api.stop().await
}
