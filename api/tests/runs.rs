//! Runs over HTTP against a real server, shop and store: server-sent
//! events with resume and replay, idempotency, listing with a cursor,
//! cancel, rerun from a step, and runs queued beyond the limits (in the
//! gate's line, or in the store when every slot was taken).

mod support;

use anyhow::{ensure, Context, Result};
use chrono::{DateTime, Utc};
use dragnet_api::ServerConfig;
use dragnet_runner::RunnerConfig;
use dragnet_store::Db;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use support::Api;

dragnet_store::on_both_backends!(
    a_run_streams_its_events_and_a_stream_resumes_after_an_id,
    an_idempotency_key_answers_with_its_first_run,
    runs_are_listed_newest_first_a_page_at_a_time,
    a_cancelled_run_ends_cancelled,
    a_rerun_from_a_step_keeps_the_outputs_before_it,
    runs_beyond_a_limit_wait_queued_in_order,
    a_run_left_in_the_store_starts_when_a_slot_frees,
);

async fn a_run_streams_its_events_and_a_stream_resumes_after_an_id(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    // Slow pages, so the stream is read while the run is still going.
    api.push(&t, "orders", &api.workflow("orders", Some("latency=100")))
        .await?;
    let run = api
        .run(&t, "orders", r#"{"inputs": {"min_total": 100}}"#)
        .await?;
    let live = api.events(&t, &run, None).await?;
    let ids: Vec<u64> = live.iter().map(|e| e.id).collect();
    ensure!(ids == (1..=ids.len() as u64).collect::<Vec<_>>(), "{ids:?}");
    ensure!(live[0].event == "run" && live[0].data["runId"] == run.as_str());
    let last = live.last().cloned().context("no events")?;
    ensure!(last.event == "end", "{last:?}");
    // The stream ends once the record is stored: read at once, not polled.
    let (_, record) = api.get(&format!("/v1/runs/{run}"), &t).await?;
    ensure!(last.data["status"] == record["status"], "{last:?} {record}");
    ensure!(record["status"] == "succeeded", "{record}");
    let steps: Vec<&str> = live
        .iter()
        .filter(|e| e.event == "step" && e.data["status"] == "succeeded")
        .filter_map(|e| e.data["step"].as_str())
        .collect();
    ensure!(steps == ["properties", "open_orders"], "{steps:?}");
    let progress: Vec<_> = live
        .iter()
        .filter(|e| e.event == "data-tool-loop-progress")
        .collect();
    ensure!(!progress.is_empty(), "no progress in {live:?}");
    ensure!(progress
        .iter()
        .all(|e| e.data["page"].is_u64() && e.data["step"].is_string()));
    // The verdict rides on the step event.
    let done = live
        .iter()
        .find(|e| e.data["step"] == "open_orders" && e.data["status"] == "succeeded");
    ensure!(
        done.is_some_and(|e| e.data["verdict"]["complete"] == true),
        "{done:?}"
    );

    // After the end: the stored stream replays, and resumes after an id.
    let replay = api.events(&t, &run, None).await?;
    ensure!(replay == live, "the replay differs:\n{replay:?}\n{live:?}");
    let resumed = api.events(&t, &run, Some(2)).await?;
    ensure!(resumed == live[2..], "{resumed:?}");
    let (_, with) = api.get(&format!("/v1/runs/{run}?outputs=true"), &t).await?;
    let (_, without) = api.get(&format!("/v1/runs/{run}"), &t).await?;
    ensure!(
        with["steps"][1]["output"]["_loop"]["complete"] == true,
        "{with}"
    );
    ensure!(without["steps"][1].get("output").is_none(), "{without}");
    api.stop().await
}

async fn an_idempotency_key_answers_with_its_first_run(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    api.push(&t, "orders", &api.workflow("orders", None))
        .await?;
    let post = |body: &'static str, key: &'static str| {
        let api = &api;
        let t = &t;
        async move {
            api.send(
                Method::POST,
                "/v1/workflows/orders/runs",
                Some(t),
                Some(("application/json", body)),
                &[("idempotency-key", key)],
            )
            .await
        }
    };
    let (status, first) = post(r#"{"inputs": {"min_total": 1}}"#, "k1").await?;
    ensure!(status == StatusCode::CREATED, "{status} {first}");
    let (status, again) = post(r#"{"inputs": {"min_total": 1}}"#, "k1").await?;
    ensure!(
        status == StatusCode::OK && again["created"] == false,
        "{status} {again}"
    );
    ensure!(again["run_id"] == first["run_id"], "{again} {first}");
    let (status, other) = post(r#"{"inputs": {"min_total": 2}}"#, "k1").await?;
    ensure!(status == StatusCode::CONFLICT, "{status} {other}");
    ensure!(
        other["error"]["kind"] == "idempotency_key_reused",
        "{other}"
    );
    let (status, fresh) = post(r#"{"inputs": {"min_total": 2}}"#, "k2").await?;
    ensure!(status == StatusCode::CREATED && fresh["run_id"] != first["run_id"]);
    let (_, listed) = api.get("/v1/runs", &t).await?;
    ensure!(
        listed["runs"].as_array().map(Vec::len) == Some(2),
        "{listed}"
    );
    for id in [&first["run_id"], &fresh["run_id"]] {
        api.finished(&t, id.as_str().unwrap_or_default()).await?;
    }
    api.stop().await
}

async fn runs_are_listed_newest_first_a_page_at_a_time(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    api.push(&t, "orders", &api.workflow("orders", None))
        .await?;
    api.push(&t, "other", &api.workflow("other", None)).await?;
    let mut started = Vec::new();
    for name in ["orders", "orders", "other", "orders"] {
        let id = api.run(&t, name, "{}").await?;
        api.finished(&t, &id).await?;
        started.push(id);
    }
    let (_, page) = api.get("/v1/runs?workflow=orders&limit=2", &t).await?;
    let ids = |v: &Value| -> Vec<String> {
        v["runs"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|r| r["run_id"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    ensure!(
        ids(&page) == [started[3].clone(), started[1].clone()],
        "{page}"
    );
    let cursor = page["next_cursor"].as_str().unwrap_or_default().to_string();
    let (_, next) = api
        .get(
            &format!("/v1/runs?workflow=orders&limit=2&cursor={cursor}"),
            &t,
        )
        .await?;
    ensure!(ids(&next) == [started[0].clone()], "{next}");
    ensure!(next["next_cursor"].is_null(), "{next}");
    let (_, succeeded) = api.get("/v1/runs?status=succeeded", &t).await?;
    ensure!(ids(&succeeded).len() == 4, "{succeeded}");
    let (_, failed) = api.get("/v1/runs?status=failed", &t).await?;
    ensure!(ids(&failed).is_empty(), "{failed}");
    let (status, v) = api.get("/v1/runs?limit=0", &t).await?;
    ensure!(status == StatusCode::BAD_REQUEST, "{v}");
    let (status, v) = api.get("/v1/runs?cursor=garbage!", &t).await?;
    ensure!(status == StatusCode::BAD_REQUEST, "{v}");
    api.stop().await
}

async fn a_cancelled_run_ends_cancelled(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    api.push(&t, "slow", &api.workflow("slow", Some("latency=300")))
        .await?;
    let run = api
        .run(&t, "slow", r#"{"inputs": {"min_total": 0}}"#)
        .await?;
    let cancel = format!("/v1/runs/{run}/cancel");
    let (status, v) = api.send(Method::POST, &cancel, Some(&t), None, &[]).await?;
    ensure!(status == StatusCode::ACCEPTED, "{status} {v}");
    let events = api.events(&t, &run, None).await?;
    let end = events
        .last()
        .map(|e| (e.event.clone(), e.data["status"].clone()));
    ensure!(
        end == Some(("end".into(), "cancelled".into())),
        "{events:?}"
    );
    let (_, record) = api.get(&format!("/v1/runs/{run}"), &t).await?;
    ensure!(record["status"] == "cancelled", "{record}");
    let (status, v) = api.send(Method::POST, &cancel, Some(&t), None, &[]).await?;
    ensure!(
        status == StatusCode::CONFLICT && v["error"]["kind"] == "run_ended",
        "{v}"
    );
    api.stop().await
}

async fn a_rerun_from_a_step_keeps_the_outputs_before_it(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    api.push(&t, "orders", &api.workflow("orders", None))
        .await?;
    let first = api
        .run(&t, "orders", r#"{"inputs": {"min_total": 900}}"#)
        .await?;
    let original = api.finished(&t, &first).await?;
    ensure!(original["status"] == "succeeded", "{original}");
    let calls = |api: &Api, path: &str| {
        api.shop
            .requests()
            .iter()
            .filter(|r| r.path.starts_with(path))
            .count()
    };
    let rerun = |body: &'static str| {
        let (api, t, first) = (&api, &t, &first);
        async move {
            api.send(
                Method::POST,
                &format!("/v1/runs/{first}/rerun"),
                Some(t),
                Some(("application/json", body)),
                &[],
            )
            .await
        }
    };
    api.shop.clear_requests();
    let (status, v) = rerun(r#"{"from": "open_orders"}"#).await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    let again = api
        .finished(&t, v["run_id"].as_str().unwrap_or_default())
        .await?;
    ensure!(again["status"] == "succeeded", "{again}");
    // `properties` kept its output: no request for it; `open_orders` walked again.
    ensure!(calls(&api, "/properties/") > 0, "open_orders ran");
    let listed = api
        .shop
        .requests()
        .iter()
        .filter(|r| r.path == "/properties")
        .count();
    ensure!(listed == 0, "properties was fetched again");
    ensure!(
        again["steps"][1]["verdict"]["itemCount"] == original["steps"][1]["verdict"]["itemCount"],
        "the same inputs give the same rows: {again} {original}"
    );
    // Without `from`, everything runs again.
    api.shop.clear_requests();
    let (_, v) = rerun("").await?;
    api.finished(&t, v["run_id"].as_str().unwrap_or_default())
        .await?;
    ensure!(calls(&api, "/properties") > 0);
    let (status, v) = rerun(r#"{"from": "nope"}"#).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    ensure!(v["error"]["kind"] == "unknown_step", "{v}");
    api.stop().await
}

async fn runs_beyond_a_limit_wait_queued_in_order(db: Db) -> Result<()> {
    let config = ServerConfig {
        runner: RunnerConfig {
            max_running_runs: 2,
            ..RunnerConfig::default()
        },
        ..ServerConfig::default()
    };
    let api = Api::start_with(db, config).await?;
    let t = api.team("acme").await?;
    api.push(&t, "one", &api.slow_workflow("one", 150, "concurrency: 1"))
        .await?;
    api.push(&t, "other", &api.slow_workflow("other", 150, ""))
        .await?;
    let first = api.run(&t, "one", "{}").await?;
    let second = api.run(&t, "one", "{}").await?;
    let third = api.run(&t, "one", "{}").await?;
    let free = api.run(&t, "other", "{}").await?;
    let status = |v: &Value| v["status"].as_str().unwrap_or_default().to_string();
    // `one` allows one run at a time; `other` takes the server's second
    // slot. Both start however long the launcher takes on a busy machine.
    api.started(&t, &first).await?;
    api.started(&t, &free).await?;
    let (_, s) = api.get(&format!("/v1/runs/{second}"), &t).await?;
    let (_, f) = api.get(&format!("/v1/runs/{first}"), &t).await?;
    // The second is read before the first: if the first is still running
    // after, the second was read while it ran and must be queued. (The
    // order of the two runs is checked below either way.)
    if status(&f) == "running" {
        ensure!(status(&s) == "queued", "{s}");
    }
    // A queued run cancelled never starts.
    let (code, _) = api
        .send(
            Method::POST,
            &format!("/v1/runs/{third}/cancel"),
            Some(&t),
            None,
            &[],
        )
        .await?;
    ensure!(code == StatusCode::ACCEPTED, "{code}");
    let cancelled = api.finished(&t, &third).await?;
    ensure!(cancelled["status"] == "cancelled", "{cancelled}");
    let reason = cancelled["steps"][0]["reason"].as_str().unwrap_or_default();
    ensure!(reason.contains("while queued"), "{cancelled}");

    let f = api.finished(&t, &first).await?;
    let s = api.finished(&t, &second).await?;
    api.finished(&t, &free).await?;
    ensure!(
        status(&f) == "succeeded" && status(&s) == "succeeded",
        "{f} {s}"
    );
    // Compared as instants: the text of `…57Z` sorts after `…57.001Z`.
    let instant = |v: &Value, field: &str| -> Result<DateTime<Utc>> {
        let text = v[field].as_str().context(format!("{field} in {v}"))?;
        Ok(text.parse()?)
    };
    let ended = instant(&f, "finished_at")?;
    let began = instant(&s, "started_at")?;
    ensure!(
        began >= ended,
        "the queued run began {began}, before the first ended {ended}"
    );
    let events = api.events(&t, &second, None).await?;
    let runs: Vec<&Value> = events
        .iter()
        .filter(|e| e.event == "run")
        .map(|e| &e.data["status"])
        .collect();
    ensure!(runs == ["queued", "running"], "{runs:?}");
    api.stop().await
}

/// With every slot taken, a new run is written for anyone to claim; when
/// the run holding the slot ends, this process claims it at once rather
/// than at its next pass (one an hour here: the run would not start
/// within the test's wait without it).
async fn a_run_left_in_the_store_starts_when_a_slot_frees(db: Db) -> Result<()> {
    let config = ServerConfig {
        runner: RunnerConfig {
            max_running_runs: 1,
            claim_every: Some(std::time::Duration::from_secs(3600)),
            ..RunnerConfig::default()
        },
        ..ServerConfig::default()
    };
    let api = Api::start_with(db, config).await?;
    let t = api.team("acme").await?;
    api.push(&t, "slow", &api.slow_workflow("slow", 100, ""))
        .await?;
    api.push(&t, "next", &api.slow_workflow("next", 0, ""))
        .await?;
    let first = api.run(&t, "slow", "{}").await?;
    let second = api.run(&t, "next", "{}").await?;
    let (_, queued) = api.get(&format!("/v1/runs/{second}"), &t).await?;
    ensure!(queued["status"] == "queued", "{queued}");
    let f = api.finished(&t, &first).await?;
    let s = api.finished(&t, &second).await?;
    ensure!(
        f["status"] == "succeeded" && s["status"] == "succeeded",
        "{f} {s}"
    );
    api.stop().await
}
