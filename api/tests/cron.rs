//! Cron triggers firing, with an injected clock the test moves: a tick
//! fires exactly once (not again after a restart), `$.trigger` names the
//! schedule's previous complete run, ticks missed while the server was
//! down follow `catch_up`, a tick overlapping a running run is skipped with
//! the reason or queued, ticks across both DST changes of Europe/Berlin
//! fire by the documented rule, a paused schedule fires nothing until it
//! is resumed, when the ticks of its pause follow `catch_up`, and a
//! schedule pauses itself after `pause_after` consecutive failed runs.
//! PostgreSQL and SQLite.

mod support;

use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Utc};
use dragnet_runner::{scheduler, Launcher};
use dragnet_store::testing::TestClock;
use dragnet_store::Db;
use serde_json::Value;
use support::Api;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

dragnet_store::on_both_backends!(
    a_tick_fires_once_and_not_again_after_a_restart,
    missed_ticks_follow_catch_up,
    a_tick_during_a_running_run_is_skipped_or_queued,
    ticks_across_daylight_saving_changes_follow_the_rule,
    a_paused_schedule_fires_nothing_and_resumes_by_catch_up,
    consecutive_failed_runs_pause_a_schedule_until_it_is_resumed,
);

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

/// A workflow of one step over the shop, with one cron trigger.
fn scheduled(api: &Api, name: &str, trigger: &str, step: &str) -> String {
    format!(
        "name: {name}
providers:
  shop:
    openapi: openapi.yaml
    base_url: {base}
triggers:
  - {trigger}
steps:
{step}",
        base = api.shop.base_url()
    )
}

const PROPERTIES: &str = "  - id: properties\n    tool: shop.listProperties\n";

async fn schedule(api: &Api, token: &str, name: &str) -> Result<Value> {
    let (_, v) = api.get("/v1/schedules", token).await?;
    v["schedules"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["workflow"] == name).cloned())
        .with_context(|| format!("no schedule of {name} in {v}"))
}

fn statuses(schedule: &Value) -> Vec<String> {
    schedule["last_ticks"]
        .as_array()
        .map(|a| {
            a.iter()
                .rev()
                .filter_map(|t| t["status"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

async fn a_tick_fires_once_and_not_again_after_a_restart(db: Db) -> Result<()> {
    let clock = Arc::new(TestClock::new(at("2026-06-01T09:59:30Z")));
    let api = Api::start_clocked(db, clock.clone()).await?;
    let t = api.team("acme").await?;
    let step = "  - id: orders
    tool: shop.listOrders
    input:
      status: cancelled
      per_page: 100
      created_since: { ref: \"$.trigger.previous_complete.started_at\" }
    loop:
      all_pages: true
      fields: [id]
";
    let yaml = scheduled(&api, "hourly", "cron: \"0 * * * *\"", step);
    let (status, v) = api.push(&t, "hourly", &yaml).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");
    ensure!(api.pass().await?.fired.is_empty());

    clock.set(at("2026-06-01T10:00:05Z"));
    // A second scheduler on the same store races this one for the tick.
    let rival = Launcher::new(
        api.db.clone(),
        api.state.config().runner.clone(),
        clock.clone(),
        TaskTracker::new(),
        CancellationToken::new(),
    );
    let config = api
        .state
        .config()
        .runner
        .scheduler
        .clone()
        .context("a scheduler")?;
    let (mine, theirs) = tokio::join!(api.pass(), scheduler::pass(&rival, &config));
    let (mine, theirs) = (mine?, theirs?);
    ensure!(
        mine.fired.len() + theirs.fired.len() == 1,
        "{mine:?} {theirs:?}"
    );
    let first = if mine.fired.is_empty() { theirs } else { mine };
    let record = api.finished(&t, &first.fired[0]).await?;
    ensure!(record["status"] == "succeeded", "{record}");
    // The first run has no complete run before it: every order is asked for.
    let asked = |api: &Api| -> Vec<Option<String>> {
        api.shop
            .requests()
            .iter()
            .filter(|r| r.path == "/orders")
            .map(|r| {
                r.query
                    .iter()
                    .find(|(k, _)| k == "created_since")
                    .map(|(_, v)| v.clone())
            })
            .collect()
    };
    ensure!(asked(&api).iter().all(Option::is_none), "{:?}", asked(&api));
    ensure!(api.pass().await?.fired.is_empty(), "fired twice");

    // A restart at the same time finds the tick handled.
    let api = api.restart().await?;
    ensure!(
        api.pass().await?.fired.is_empty(),
        "fired again after a restart"
    );

    api.shop.clear_requests();
    clock.set(at("2026-06-01T11:00:02Z"));
    let second = api.pass().await?;
    ensure!(second.fired.len() == 1, "{second:?}");
    api.finished(&t, &second.fired[0]).await?;
    // Only what came after the previous complete run is asked for.
    let since = asked(&api);
    ensure!(
        !since.is_empty()
            && since
                .iter()
                .all(|s| s.as_deref() == Some("2026-06-01T10:00:05Z")),
        "{since:?}"
    );
    let s = schedule(&api, &t, "hourly").await?;
    ensure!(statuses(&s) == ["fired", "fired"], "{s}");
    ensure!(
        s["last_ticks"][0]["run_id"] == second.fired[0].as_str(),
        "{s}"
    );
    ensure!(s["next_ticks"][0] == "2026-06-01T12:00:00Z", "{s}");
    ensure!(s["last_ticks"][0]["lateness_ms"] == 2000, "{s}");
    api.stop().await
}

async fn missed_ticks_follow_catch_up(db: Db) -> Result<()> {
    let clock = Arc::new(TestClock::new(at("2026-06-01T10:00:30Z")));
    let api = Api::start_clocked(db, clock.clone()).await?;
    let t = api.team("acme").await?;
    for (name, catch_up) in [("none", "none"), ("last", "last"), ("all", "all")] {
        let trigger = format!("{{cron: \"*/10 * * * *\", catch_up: {catch_up}, overlap: allow}}");
        let yaml = scheduled(&api, name, &trigger, PROPERTIES);
        api.push(&t, name, &yaml).await?;
    }
    // Down from 10:00:30 to 11:05: ticks 10:10 … 11:00 were missed.
    clock.set(at("2026-06-01T11:05:00Z"));
    let report = api.pass().await?;
    ensure!(report.fired.len() == 1 + 6, "{report:?}");
    ensure!(report.missed == 6 + 5, "{report:?}");
    for id in &report.fired {
        api.finished(&t, id).await?;
    }
    let none = schedule(&api, &t, "none").await?;
    ensure!(statuses(&none).iter().all(|s| s == "missed"), "{none}");
    let reason = none["last_ticks"][0]["reason"].as_str().unwrap_or_default();
    ensure!(reason.contains("catch_up: none"), "{reason}");
    let last = schedule(&api, &t, "last").await?;
    ensure!(last["last_ticks"][0]["status"] == "fired", "{last}");
    ensure!(
        last["last_ticks"][0]["scheduled_for"] == "2026-06-01T11:00:00Z",
        "{last}"
    );
    ensure!(last["last_ticks"][1]["status"] == "missed", "{last}");
    let all = schedule(&api, &t, "all").await?;
    ensure!(statuses(&all).iter().all(|s| s == "fired"), "{all}");
    // Nothing is due any more.
    let again = api.pass().await?;
    ensure!(again.fired.is_empty() && again.missed == 0, "{again:?}");
    api.stop().await
}

async fn a_tick_during_a_running_run_is_skipped_or_queued(db: Db) -> Result<()> {
    let clock = Arc::new(TestClock::new(at("2026-06-01T10:00:30Z")));
    let api = Api::start_clocked(db, clock.clone()).await?;
    let t = api.team("acme").await?;
    for name in ["skip", "queue"] {
        let trigger = format!("triggers:\n  - {{cron: \"* * * * *\", overlap: {name}}}");
        let yaml = api.slow_workflow(name, 700, &trigger);
        api.push(&t, name, &yaml).await?;
    }
    clock.set(at("2026-06-01T10:01:00Z"));
    let first = api.pass().await?;
    ensure!(first.fired.len() == 2, "{first:?}");
    // The next minute comes while both runs are still walking.
    let (_, r) = api.get(&format!("/v1/runs/{}", first.fired[0]), &t).await?;
    ensure!(r["status"] == "running", "{r}");
    clock.set(at("2026-06-01T10:02:00Z"));
    let second = api.pass().await?;
    ensure!(
        second.skipped == 1 && second.queued == 1 && second.fired.is_empty(),
        "{second:?}"
    );
    let skip = schedule(&api, &t, "skip").await?;
    let reason = skip["last_ticks"][0]["reason"].as_str().unwrap_or_default();
    ensure!(skip["last_ticks"][0]["status"] == "skipped", "{skip}");
    ensure!(
        reason.contains("still running") && reason.contains("run_"),
        "{reason}"
    );
    for id in &first.fired {
        api.finished(&t, id).await?;
    }
    // Once the run has ended, the queued tick starts; the skipped one never does.
    let third = api.pass().await?;
    ensure!(third.fired.len() == 1, "{third:?}");
    let queue = schedule(&api, &t, "queue").await?;
    ensure!(statuses(&queue) == ["fired", "fired"], "{queue}");
    ensure!(
        queue["last_ticks"][0]["scheduled_for"] == "2026-06-01T10:02:00Z",
        "{queue}"
    );
    api.finished(&t, &third.fired[0]).await?;
    api.stop().await
}

async fn ticks_across_daylight_saving_changes_follow_the_rule(db: Db) -> Result<()> {
    // Spring: 2026-03-29 02:00 CET → 03:00 CEST (01:00 UTC); 02:30 does not exist.
    let clock = Arc::new(TestClock::new(at("2026-03-29T00:50:00Z")));
    let api = Api::start_clocked(db, clock.clone()).await?;
    let t = api.team("acme").await?;
    let trigger = "{cron: \"30 2 * * *\", timezone: Europe/Berlin}";
    api.push(
        &t,
        "spring",
        &scheduled(&api, "spring", trigger, PROPERTIES),
    )
    .await?;
    let s = schedule(&api, &t, "spring").await?;
    ensure!(s["next_ticks"][0] == "2026-03-29T01:00:00Z", "{s}");
    clock.set(at("2026-03-29T01:00:03Z"));
    let report = api.pass().await?;
    ensure!(report.fired.len() == 1, "{report:?}");
    api.finished(&t, &report.fired[0]).await?;
    clock.set(at("2026-03-29T02:00:00Z"));
    ensure!(api.pass().await?.fired.is_empty(), "the gap fired twice");

    // Autumn: 2026-10-25 03:00 CEST → 02:00 CET; 02:30 happens twice.
    let (status, _) = api
        .send(
            reqwest::Method::DELETE,
            "/v1/workflows/spring",
            Some(&t),
            None,
            &[],
        )
        .await?;
    ensure!(status.as_u16() == 204);
    clock.set(at("2026-10-25T00:00:00Z"));
    api.push(
        &t,
        "autumn",
        &scheduled(&api, "autumn", trigger, PROPERTIES),
    )
    .await?;
    clock.set(at("2026-10-25T00:30:02Z")); // 02:30 CEST
    let report = api.pass().await?;
    ensure!(report.fired.len() == 1, "{report:?}");
    api.finished(&t, &report.fired[0]).await?;
    clock.set(at("2026-10-25T01:30:02Z")); // 02:30 CET: the same wall time again
    let report = api.pass().await?;
    ensure!(report.fired.is_empty() && report.missed == 0, "{report:?}");
    let s = schedule(&api, &t, "autumn").await?;
    ensure!(s["next_ticks"][0] == "2026-10-26T01:30:00Z", "{s}");
    api.stop().await
}

async fn a_paused_schedule_fires_nothing_and_resumes_by_catch_up(db: Db) -> Result<()> {
    use reqwest::Method;
    let clock = Arc::new(TestClock::new(at("2026-06-01T10:00:30Z")));
    let api = Api::start_clocked(db, clock.clone()).await?;
    let t = api.team("acme").await?;
    let other = api.team("bravo").await?;
    let kinds = ["none", "last", "all"];
    let mut ids = Vec::new();
    for catch_up in kinds {
        let trigger = format!("{{cron: \"*/10 * * * *\", catch_up: {catch_up}, overlap: allow}}");
        api.push(
            &t,
            catch_up,
            &scheduled(&api, catch_up, &trigger, PROPERTIES),
        )
        .await?;
        let s = schedule(&api, &t, catch_up).await?;
        ids.push(s["schedule_id"].as_str().context("an id")?.to_string());
    }
    let post = |path: String, token: &str, body: Option<&'static str>| {
        let token = token.to_string();
        let api = &api;
        async move {
            let body = body.map(|b| ("application/json", b));
            api.send(Method::POST, &path, Some(&token), body, &[]).await
        }
    };
    let reason = Some(r#"{"reason": "the shop is being migrated"}"#);
    // A reason is required; another team's schedule is not found.
    let (status, v) = post(format!("/v1/schedules/{}/pause", ids[0]), &t, None).await?;
    ensure!(status.as_u16() == 400, "{status} {v}");
    let (status, v) = post(format!("/v1/schedules/{}/pause", ids[0]), &other, reason).await?;
    ensure!(status.as_u16() == 404, "{status} {v}");
    for id in &ids {
        let (status, v) = post(format!("/v1/schedules/{id}/pause"), &t, reason).await?;
        ensure!(status.as_u16() == 200, "{status} {v}");
        ensure!(v["paused"]["reason"] == "the shop is being migrated", "{v}");
        ensure!(v["paused"]["at"] == "2026-06-01T10:00:30Z", "{v}");
        let by = v["paused"]["by"].as_str().unwrap_or_default();
        ensure!(by.starts_with("token:") && !by.contains(&t), "{v}");
        ensure!(v["next_ticks"] == serde_json::json!([]), "{v}");
    }
    let (status, v) = post(format!("/v1/schedules/{}/pause", ids[0]), &t, reason).await?;
    ensure!(
        status.as_u16() == 409 && v["error"]["kind"] == "schedule_paused",
        "{status} {v}"
    );
    ensure!(api.db.schedules().paused_count().await? == 3);

    // Ticks 10:10 … 11:00 fall while paused: nothing fires, nothing is late.
    clock.set(at("2026-06-01T11:05:00Z"));
    let report = api.pass().await?;
    ensure!(report.fired.is_empty() && report.missed == 0, "{report:?}");
    let none = schedule(&api, &t, "none").await?;
    ensure!(
        none["lateness_ms"] == 0 && none["last_ticks"] == serde_json::json!([]),
        "{none}"
    );

    for id in &ids {
        let (status, v) = post(format!("/v1/schedules/{id}/resume"), &t, None).await?;
        ensure!(
            status.as_u16() == 200 && v["paused"].is_null(),
            "{status} {v}"
        );
    }
    let (status, v) = post(format!("/v1/schedules/{}/resume", ids[0]), &t, None).await?;
    ensure!(
        status.as_u16() == 409 && v["error"]["kind"] == "schedule_not_paused",
        "{status} {v}"
    );
    ensure!(api.db.schedules().paused_count().await? == 0);
    // By catch_up: none records the six as paused, last fires the latest,
    // all fires them all.
    let report = api.pass().await?;
    ensure!(
        report.fired.len() == 1 + 6 && report.missed == 0,
        "{report:?}"
    );
    for id in &report.fired {
        api.finished(&t, id).await?;
    }
    let none = schedule(&api, &t, "none").await?;
    ensure!(statuses(&none) == ["paused"; 5], "{none}");
    let said = none["last_ticks"][0]["reason"].as_str().unwrap_or_default();
    ensure!(
        said.contains("the shop is being migrated") && said.contains("catch_up: none"),
        "{said}"
    );
    let last = schedule(&api, &t, "last").await?;
    ensure!(last["last_ticks"][0]["status"] == "fired", "{last}");
    ensure!(
        last["last_ticks"][0]["scheduled_for"] == "2026-06-01T11:00:00Z",
        "{last}"
    );
    ensure!(last["last_ticks"][1]["status"] == "paused", "{last}");
    let all = schedule(&api, &t, "all").await?;
    ensure!(statuses(&all).iter().all(|s| s == "fired"), "{all}");
    // It fires on time again.
    clock.set(at("2026-06-01T11:10:01Z"));
    ensure!(api.pass().await?.fired.len() == 3);
    api.stop().await
}

async fn consecutive_failed_runs_pause_a_schedule_until_it_is_resumed(db: Db) -> Result<()> {
    use reqwest::Method;
    let clock = Arc::new(TestClock::new(at("2026-06-01T10:00:30Z")));
    let api = Api::start_clocked(db, clock.clone()).await?;
    let t = api.team("acme").await?;
    // Every request of its runs is refused: every run fails.
    let yaml = format!(
        "name: failing
providers:
  shop:
    openapi: openapi.yaml
    base_url: {}
    headers:
      X-Shop-Fault: \"status=1:400:always\"
triggers:
  - {{cron: \"*/10 * * * *\", overlap: allow, pause_after: {{failed: 2, partial: 4}}}}
steps:
  - id: orders
    tool: shop.listOrders
    input: {{status: cancelled, per_page: 100}}
",
        api.shop.base_url()
    );
    let (status, v) = api.push(&t, "failing", &yaml).await?;
    ensure!(status.as_u16() == 201, "{status} {v}");
    for tick in ["10:10:01", "10:20:01"] {
        clock.set(at(&format!("2026-06-01T{tick}Z")));
        let report = api.pass().await?;
        ensure!(
            report.fired.len() == 1 && report.paused == 0,
            "{tick}: {report:?}"
        );
        let record = api.finished(&t, &report.fired[0]).await?;
        ensure!(record["status"] == "failed", "{record}");
    }
    // The third tick finds two failed runs in a row: it pauses instead.
    clock.set(at("2026-06-01T10:30:01Z"));
    let report = api.pass().await?;
    ensure!(report.fired.is_empty() && report.paused == 1, "{report:?}");
    let s = schedule(&api, &t, "failing").await?;
    ensure!(s["paused"]["by"] == "pause_after", "{s}");
    let reason = s["paused"]["reason"].as_str().unwrap_or_default();
    ensure!(reason.contains("2 consecutive failed runs"), "{reason}");
    ensure!(api.db.schedules().paused_count().await? == 1);
    ensure!(api.pass().await?.fired.is_empty());
    // Resumed, the runs before do not count: it fires again.
    let id = s["schedule_id"].as_str().context("an id")?;
    let path = format!("/v1/schedules/{id}/resume");
    let (status, v) = api.send(Method::POST, &path, Some(&t), None, &[]).await?;
    ensure!(status.as_u16() == 200, "{status} {v}");
    clock.set(at("2026-06-01T10:40:01Z"));
    let report = api.pass().await?;
    ensure!(!report.fired.is_empty() && report.paused == 0, "{report:?}");
    api.stop().await
}
