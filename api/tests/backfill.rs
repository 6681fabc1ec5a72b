//! Backfills through the server (issue 25 §2), PostgreSQL and SQLite: a
//! dry run lists a window's ticks (across daylight-saving changes) and
//! starts nothing; a backfill runs every tick, newest first here, at most
//! its concurrency at a time, each run's `$.trigger` saying `backfill` and
//! its tick; a second backfill of the window skips the ticks that have a
//! complete run unless it reruns; one is cancelled as a whole; bad
//! requests are refused naming what is wrong; another team sees none.

mod support;

use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Utc};
use dragnet_store::testing::TestClock;
use dragnet_store::Db;
use reqwest::Method;
use serde_json::{json, Value};
use support::{csrf_in, ui_page as page, ui_post as post, ui_sign_in as sign_in, Api};

dragnet_store::on_both_backends!(
    a_backfill_runs_each_tick_once_within_its_concurrency,
    a_backfill_is_cancelled_as_a_whole_and_bad_ones_are_refused,
    the_ui_lists_ticks_starts_a_backfill_and_cancels_it,
);

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn hourly(api: &Api) -> String {
    format!(
        "name: hourly
providers:
  shop:
    openapi: openapi.yaml
    base_url: {}
triggers:
  - cron: \"0 * * * *\"
steps:
  - id: orders
    tool: shop.listOrders
    input: {{status: cancelled, per_page: 100}}
    loop: {{all_pages: true, fields: [id]}}
",
        api.shop.base_url()
    )
}

async fn backfill(api: &Api, token: &str, name: &str, body: Value) -> Result<(u16, Value)> {
    let path = format!("/v1/workflows/{name}/backfills");
    let body = body.to_string();
    let (status, v) = api
        .send(
            Method::POST,
            &path,
            Some(token),
            Some(("application/json", &body)),
            &[],
        )
        .await?;
    Ok((status.as_u16(), v))
}

/// Passes until the backfill ends; the most runs seen going at once.
async fn until_done(api: &Api, token: &str, id: &str) -> Result<(Value, usize)> {
    let mut most = 0;
    for _ in 0..600 {
        let (_, v) = api.get(&format!("/v1/backfills/{id}"), token).await?;
        most = most.max(v["counts"]["running"].as_u64().unwrap_or(0) as usize);
        if v["status"] != "running" {
            return Ok((v, most));
        }
        api.pass().await?;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    anyhow::bail!("backfill {id} did not end")
}

async fn a_backfill_runs_each_tick_once_within_its_concurrency(db: Db) -> Result<()> {
    let clock = Arc::new(TestClock::new(at("2026-06-02T12:00:00Z")));
    let api = Api::start_clocked(db, clock).await?;
    let t = api.team("acme").await?;
    let (status, v) = api.push(&t, "hourly", &hourly(&api)).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");

    // A dry run lists the ticks and starts nothing.
    let window = json!({"from": "2026-06-01T00:00:00Z", "to": "2026-06-01T05:00:00Z"});
    let mut dry = window.clone();
    dry["dry_run"] = json!(true);
    let (status, listed) = backfill(&api, &t, "hourly", dry.clone()).await?;
    ensure!(status == 200, "{status} {listed}");
    let ticks = listed["ticks"].as_array().context("ticks")?;
    ensure!(ticks.len() == 6, "{listed}");
    ensure!(
        ticks[0]["scheduled_for"] == "2026-06-01T00:00:00Z",
        "{listed}"
    );
    ensure!(ticks[0]["complete_run"].is_null(), "{listed}");
    let (_, runs) = api.get("/v1/runs", &t).await?;
    ensure!(runs["runs"] == json!([]), "{runs}");

    // Newest first, two at a time: every tick runs once.
    let mut body = window.clone();
    body["concurrency"] = json!(2);
    body["order"] = json!("newest_first");
    let (status, made) = backfill(&api, &t, "hourly", body).await?;
    ensure!(status == 201, "{status} {made}");
    let id = made["backfill_id"].as_str().context("an id")?.to_string();
    // Two ticks start at once; a fast run may already have ended by the
    // time the answer is written.
    let started = ["running", "succeeded"]
        .iter()
        .map(|k| made["counts"][k].as_u64().unwrap_or(0))
        .sum::<u64>();
    ensure!(started == 2 && made["counts"]["pending"] == 4, "{made}");
    let (done, most) = until_done(&api, &t, &id).await?;
    ensure!(done["status"] == "succeeded", "{done}");
    ensure!(most <= 2, "{most} runs at once: {done}");
    ensure!(done["counts"]["succeeded"] == 6, "{done}");
    let ticks = done["ticks"].as_array().context("ticks")?;
    ensure!(
        ticks[0]["scheduled_for"] == "2026-06-01T05:00:00Z",
        "{done}"
    );
    let run = ticks[0]["run_id"].as_str().context("a run")?;
    let (_, record) = api.get(&format!("/v1/runs/{run}"), &t).await?;
    ensure!(record["trigger"]["kind"] == "backfill", "{record}");
    ensure!(
        record["trigger"]["scheduled_for"] == "2026-06-01T05:00:00Z",
        "{record}"
    );
    let (_, listed) = api.get("/v1/runs?trigger=backfill", &t).await?;
    ensure!(
        listed["runs"].as_array().map(Vec::len) == Some(6),
        "{listed}"
    );

    // Again over the same window: every tick has a complete run.
    let (status, again) = backfill(&api, &t, "hourly", window.clone()).await?;
    ensure!(status == 201, "{status} {again}");
    ensure!(again["status"] == "succeeded", "{again}");
    ensure!(again["counts"]["skipped"] == 6, "{again}");
    let reason = again["ticks"][0]["reason"].as_str().unwrap_or_default();
    ensure!(reason.contains("is complete"), "{again}");
    let (_, dry_again) = backfill(&api, &t, "hourly", dry).await?;
    ensure!(
        dry_again["ticks"][5]["complete_run"].is_string(),
        "{dry_again}"
    );
    // With rerun they run again.
    let mut rerun = window.clone();
    rerun["rerun"] = json!(true);
    rerun["concurrency"] = json!(6);
    let (_, made) = backfill(&api, &t, "hourly", rerun).await?;
    let id = made["backfill_id"].as_str().context("an id")?.to_string();
    let (done, _) = until_done(&api, &t, &id).await?;
    ensure!(done["counts"]["succeeded"] == 6, "{done}");
    let (_, listed) = api.get("/v1/backfills", &t).await?;
    ensure!(
        listed["backfills"].as_array().map(Vec::len) == Some(3),
        "{listed}"
    );
    ensure!(listed["backfills"][0]["ticks"].is_null(), "{listed}");

    // Another team sees none of it.
    let other = api.team("globex").await?;
    let (_, theirs) = api.get("/v1/backfills", &other).await?;
    ensure!(theirs["backfills"] == json!([]), "{theirs}");
    let (status, _) = api.get(&format!("/v1/backfills/{id}"), &other).await?;
    ensure!(status.as_u16() == 404, "{status}");
    api.stop().await
}

async fn a_backfill_is_cancelled_as_a_whole_and_bad_ones_are_refused(db: Db) -> Result<()> {
    let clock = Arc::new(TestClock::new(at("2026-06-02T12:00:00Z")));
    let api = Api::start_clocked(db, clock).await?;
    let t = api.team("acme").await?;
    let slow = api.slow_workflow(
        "slow",
        300,
        "triggers:\n  - cron: \"30 2 * * *\"\n    timezone: Europe/Berlin",
    );
    let (status, v) = api.push(&t, "slow", &slow).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");

    // Across both changes of 2026 in Berlin: each day's tick once.
    for (from, to, expected) in [
        (
            "2026-03-28T00:00:00Z",
            "2026-03-30T23:00:00Z",
            [
                "2026-03-28T02:30:00+01:00",
                "2026-03-29T03:00:00+02:00",
                "2026-03-30T02:30:00+02:00",
            ],
        ),
        (
            "2026-10-24T00:00:00Z",
            "2026-10-26T23:00:00Z",
            [
                "2026-10-24T02:30:00+02:00",
                "2026-10-25T02:30:00+02:00",
                "2026-10-26T02:30:00+01:00",
            ],
        ),
    ] {
        let body = json!({"from": from, "to": to, "dry_run": true});
        let (status, listed) = backfill(&api, &t, "slow", body).await?;
        ensure!(status == 200, "{status} {listed}");
        let local: Vec<&str> = listed["ticks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["local"].as_str())
            .collect();
        ensure!(local == expected, "{listed}");
    }

    // Ten days, one at a time: cancelled while the first runs.
    let body = json!({"from": "2026-05-01T00:00:00Z", "to": "2026-05-10T23:00:00Z"});
    let (status, made) = backfill(&api, &t, "slow", body).await?;
    ensure!(
        status == 201 && made["counts"]["running"] == 1,
        "{status} {made}"
    );
    let id = made["backfill_id"].as_str().context("an id")?;
    let path = format!("/v1/backfills/{id}/cancel");
    let (status, cancelled) = api.send(Method::POST, &path, Some(&t), None, &[]).await?;
    ensure!(status.as_u16() == 200, "{status} {cancelled}");
    ensure!(cancelled["status"] == "cancelled", "{cancelled}");
    ensure!(
        cancelled["counts"]["cancelled"].as_u64() >= Some(9),
        "{cancelled}"
    );
    let run = cancelled["ticks"][0]["run_id"].as_str().context("a run")?;
    let record = api.finished(&t, run).await?;
    ensure!(record["status"] == "cancelled", "{record}");
    api.pass().await?;
    let (_, after) = api.get(&format!("/v1/backfills/{id}"), &t).await?;
    ensure!(after["counts"]["pending"] == 0, "{after}");
    let (status, again) = api.send(Method::POST, &path, Some(&t), None, &[]).await?;
    ensure!(status.as_u16() == 409, "{status} {again}");
    ensure!(again["error"]["kind"] == "backfill_ended", "{again}");

    // Bad requests name what is wrong.
    let refusals = [
        (
            json!({"from": "2026-05-02T00:00:00Z", "to": "2026-05-01T00:00:00Z"}),
            422,
            "is after",
        ),
        (
            json!({"from": "2026-05-01T00:00:00Z", "to": "2026-05-02T00:00:00Z", "concurrency": 0}),
            422,
            "concurrency",
        ),
        (
            json!({"from": "2026-05-01T00:00:00Z", "to": "2026-05-02T00:00:00Z", "order": "random"}),
            400,
            "oldest_first",
        ),
        (
            json!({"from": "2020-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}),
            422,
            "1000 ticks",
        ),
        (
            json!({"from": "yesterday", "to": "2026-01-01T00:00:00Z"}),
            400,
            "input contains invalid characters",
        ),
    ];
    for (body, code, words) in refusals {
        let (status, v) = backfill(&api, &t, "slow", body.clone()).await?;
        ensure!(status == code, "{body}: {status} {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        ensure!(message.contains(words), "{body}: {v}");
    }
    let (status, v) = api.push(&t, "plain", &api.workflow("plain", None)).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");
    let body = json!({"from": "2026-05-01T00:00:00Z", "to": "2026-05-02T00:00:00Z"});
    let (status, v) = backfill(&api, &t, "plain", body.clone()).await?;
    ensure!(
        status == 422 && v["error"]["kind"] == "invalid_backfill",
        "{status} {v}"
    );
    ensure!(
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no cron trigger"),
        "{v}"
    );
    let (status, _) = backfill(&api, &t, "missing", body).await?;
    ensure!(status == 404, "{status}");
    api.stop().await
}

async fn the_ui_lists_ticks_starts_a_backfill_and_cancels_it(db: Db) -> Result<()> {
    let clock = Arc::new(TestClock::new(at("2026-06-02T12:00:00Z")));
    let api = Api::start_clocked(db, clock).await?;
    let t = api.team("acme").await?;
    let slow = api.slow_workflow("slow", 300, "triggers:\n  - cron: \"0 6 * * *\"");
    let (status, v) = api.push(&t, "slow", &slow).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");
    let cookie = sign_in(&api, &t).await?;
    let (status, workflow) = page(&api, "/ui/workflows/slow", &cookie).await?;
    ensure!(
        status == 200 && workflow.contains("/ui/workflows/slow/backfill"),
        "{workflow}"
    );
    let csrf = csrf_in(&workflow).context("a csrf value")?;
    let window = "from=2026-05-01T00%3A00&to=2026-05-05T23%3A00&concurrency=1";

    // "List ticks": five days, nothing started.
    let form = format!("csrf={csrf}&{window}&dry_run=true");
    let (status, _, listed) = post(&api, "/ui/workflows/slow/backfill", &cookie, &form).await?;
    ensure!(
        status == 200 && listed.contains("5 ticks"),
        "{status} {listed}"
    );
    ensure!(listed.contains("2026-05-03 06:00 UTC"), "{listed}");
    let (_, runs) = api.get("/v1/runs", &t).await?;
    ensure!(runs["runs"] == json!([]), "{runs}");
    // Without the session's CSRF value nothing happens.
    let (status, _, _) = post(&api, "/ui/workflows/slow/backfill", &cookie, window).await?;
    ensure!(status == 403, "{status}");

    // "Backfill": to its page, which lists the ticks and cancels it.
    let form = format!("csrf={csrf}&{window}");
    let (status, to, _) = post(&api, "/ui/workflows/slow/backfill", &cookie, &form).await?;
    ensure!(
        status == 303 && to.starts_with("/ui/backfills/bf_"),
        "{status} {to}"
    );
    let (status, shown) = page(&api, &to, &cookie).await?;
    ensure!(
        status == 200 && shown.contains("Cancel the backfill"),
        "{shown}"
    );
    ensure!(shown.contains("5 ticks: 1 running, 4 pending"), "{shown}");
    let (status, back, _) = post(
        &api,
        &format!("{to}/cancel"),
        &cookie,
        &format!("csrf={csrf}"),
    )
    .await?;
    ensure!(status == 303 && back == to, "{status} {back}");
    let (_, shown) = page(&api, &to, &cookie).await?;
    ensure!(!shown.contains("Cancel the backfill"), "{shown}");
    let unstarted = shown
        .matches("the backfill was cancelled before this tick started")
        .count();
    ensure!(unstarted == 4, "{shown}");
    let (_, listed) = page(&api, "/ui/backfills", &cookie).await?;
    ensure!(
        listed.contains(to.trim_start_matches("/ui/backfills/")),
        "{listed}"
    );

    // Another team's session cannot see it.
    let other = api.team("globex").await?;
    let theirs = sign_in(&api, &other).await?;
    let (status, _) = page(&api, &to, &theirs).await?;
    ensure!(status == 404, "{status}");
    api.stop().await
}
