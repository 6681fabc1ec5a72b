//! Incremental walks through the server (issue 25 §1), PostgreSQL and
//! SQLite: a pushed workflow's runs move the team's watermark only when
//! their walk was complete; `/v1/state` lists, reads and resets it, for
//! its own team only; a run's record says what its step did
//! (`_loop.incremental`, the verdict's `incremental`).

mod support;

use anyhow::{ensure, Context, Result};
use dragnet_store::Db;
use reqwest::Method;
use serde_json::{json, Value};
use support::Api;

dragnet_store::on_both_backends!(a_team_s_watermark_moves_on_complete_runs_and_resets);

const STATE: &str = "/v1/state/changed-tickets/changed";

fn workflow(api: &Api) -> String {
    format!(
        "name: changed-tickets
providers:
  shop:
    openapi: openapi.yaml
    base_url: {}
steps:
  - id: changed
    tool: shop.listTickets
    input: {{per_page: 10}}
    loop:
      all_pages: true
      incremental:
        field: updated_at
        param: updated_since
        initial: \"2026-01-01T00:00:00Z\"
        lag: 30m
        dedupe_by: id
",
        api.shop.base_url()
    )
}

async fn run(api: &Api, token: &str) -> Result<Value> {
    let id = api.run(token, "changed-tickets", "{}").await?;
    api.finished(token, &id).await?;
    let (_, record) = api
        .get(&format!("/v1/runs/{id}?outputs=true"), token)
        .await?;
    Ok(record)
}

/// The step's output of a finished run.
fn output(record: &Value) -> Value {
    record["steps"][0]["output"].clone()
}

fn ids(record: &Value) -> Vec<u64> {
    output(record)["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["id"].as_u64())
        .collect()
}

async fn shop(api: &Api, method: Method, path: &str, body: Value) -> Result<u16> {
    let url = format!("{}{path}", api.shop.base_url());
    let answer = api.http.request(method, url).json(&body).send().await?;
    Ok(answer.status().as_u16())
}

/// Run `run_id`'s page in the UI, signed in with `token`.
async fn run_page(api: &Api, token: &str, run_id: &str) -> Result<String> {
    let cookie = support::ui_sign_in(api, token).await?;
    let (status, page) = support::ui_page(api, &format!("/ui/runs/{run_id}"), &cookie).await?;
    ensure!(status == 200, "{status}");
    Ok(page)
}

async fn a_team_s_watermark_moves_on_complete_runs_and_resets(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let acme = api.team("acme").await?;
    let other = api.team("globex").await?;
    let (status, v) = api.push(&acme, "changed-tickets", &workflow(&api)).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");
    let (_, none) = api.get("/v1/state", &acme).await?;
    ensure!(none["watermarks"] == json!([]), "{none}");

    // The first run reads all 40 seeded tickets and sets the watermark.
    let first = run(&api, &acme).await?;
    ensure!(first["status"] == "succeeded", "{first}");
    ensure!(ids(&first).len() == 40, "{first}");
    let report = &output(&first)["_loop"]["incremental"];
    ensure!(report["advanced"] == true, "{report}");
    ensure!(report["to"] == "2026-01-05T21:00:00Z", "{report}");
    let verdict = &first["steps"][0]["verdict"]["incremental"];
    ensure!(verdict["to"] == "2026-01-05T21:00:00Z", "{verdict}");
    let (status, state) = api.get(STATE, &acme).await?;
    ensure!(status.as_u16() == 200, "{status} {state}");
    ensure!(state["value"] == "2026-01-05T21:00:00Z", "{state}");
    ensure!(
        state["scale"] == "time" && state["keys_at_value"] == 1,
        "{state}"
    );
    ensure!(state["run_id"] == first["run_id"], "{state}");
    let (_, listed) = api.get("/v1/state", &acme).await?;
    ensure!(listed["watermarks"][0]["step"] == "changed", "{listed}");

    // Another team sees none of it, and cannot reset it.
    let (_, theirs) = api.get("/v1/state", &other).await?;
    ensure!(theirs["watermarks"] == json!([]), "{theirs}");
    let (status, _) = api.get(STATE, &other).await?;
    ensure!(status.as_u16() == 404, "{status}");
    let (status, _) = api
        .send(Method::DELETE, STATE, Some(&other), None, &[])
        .await?;
    ensure!(status.as_u16() == 404, "{status}");

    // Two new tickets; the second page of the walk fails: the run is not
    // complete and the watermark stays.
    for (id, at) in [(200, "2026-01-06T08:00:00Z"), (201, "2026-01-06T09:00:00Z")] {
        let put = shop(
            &api,
            Method::PUT,
            &format!("/tickets/{id}"),
            json!({"updated_at": at}),
        )
        .await?;
        ensure!(put == 201, "{put}");
    }
    let outage = json!({"from_page": 1, "status": 400});
    ensure!(shop(&api, Method::POST, "/_admin/tickets/outage", outage).await? == 204);
    let failed = run(&api, &acme).await?;
    ensure!(failed["status"] == "failed", "{failed}");
    let (_, state) = api.get(STATE, &acme).await?;
    ensure!(state["value"] == "2026-01-05T21:00:00Z", "{state}");
    ensure!(shop(&api, Method::DELETE, "/_admin/tickets/outage", Value::Null).await? == 204);

    // The next run reads the same window: ticket 40 again is dropped
    // (read at the watermark before), the two new ones are read.
    let next = run(&api, &acme).await?;
    ensure!(ids(&next) == vec![200, 201], "{next}");
    let report = &output(&next)["_loop"]["incremental"];
    ensure!(report["asked"] == "2026-01-05T20:30:00Z", "{report}");
    ensure!(
        report["deduped"] == 1 && report["to"] == "2026-01-06T09:00:00Z",
        "{report}"
    );
    let (_, state) = api.get(STATE, &acme).await?;
    ensure!(state["value"] == "2026-01-06T09:00:00Z", "{state}");
    // The run page says it in words.
    let page = run_page(&api, &acme, next["run_id"].as_str().context("an id")?).await?;
    let words = "incremental from 2026-01-05T21:00:00Z (asked from 2026-01-05T20:30:00Z): \
                 watermark moved to 2026-01-06T09:00:00Z; dropped 1 row read at it before";
    ensure!(page.contains(words), "{page}");

    // Reset: 204, then 404; the next run starts from `initial`.
    let (status, _) = api
        .send(Method::DELETE, STATE, Some(&acme), None, &[])
        .await?;
    ensure!(status.as_u16() == 204, "{status}");
    let (status, gone) = api.get(STATE, &acme).await?;
    ensure!(status.as_u16() == 404, "{status} {gone}");
    ensure!(gone["error"]["kind"] == "not_found", "{gone}");
    let again = run(&api, &acme).await?;
    ensure!(ids(&again).len() == 42, "{again}");
    let from = &output(&again)["_loop"]["incremental"]["from"];
    ensure!(from == "2026-01-01T00:00:00Z", "{from}");
    let runs = again["run_id"].as_str().context("a run id")?;
    ensure!(!runs.is_empty());
    api.stop().await
}
