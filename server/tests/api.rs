//! The HTTP API against a real server, a real shop upstream and a real
//! store, each test on PostgreSQL and on SQLite: auth and team isolation,
//! versioned workflows, located diagnostics, runs streamed as server-sent
//! events with resume, idempotency, listing with a cursor, cancel, the
//! team's own cache, and shutdown recording unfinished runs interrupted.

mod support;

use std::time::Duration;

use anyhow::{ensure, Context, Result};
use dragnet_server::ServerConfig;
use dragnet_store::Db;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use support::Api;

dragnet_store::on_both_backends!(
    requests_need_a_live_token_and_teams_see_only_their_own,
    pushing_unchanged_content_makes_no_new_version,
    invalid_files_are_refused_with_located_diagnostics,
    a_run_streams_its_events_and_a_stream_resumes_after_an_id,
    an_idempotency_key_answers_with_its_first_run,
    runs_are_listed_newest_first_a_page_at_a_time,
    a_cancelled_run_ends_cancelled,
    a_teams_cache_entries_serve_only_that_team,
    shutdown_records_runs_past_the_grace_period_interrupted,
    runs_beyond_a_limit_wait_queued_in_order,
    a_rerun_from_a_step_keeps_the_outputs_before_it,
);

async fn runs_beyond_a_limit_wait_queued_in_order(db: Db) -> Result<()> {
    let config = ServerConfig {
        max_running_runs: 2,
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
    tokio::time::sleep(Duration::from_millis(100)).await;
    let status = |v: &Value| v["status"].as_str().unwrap_or_default().to_string();
    let (_, f) = api.get(&format!("/v1/runs/{first}"), &t).await?;
    let (_, s) = api.get(&format!("/v1/runs/{second}"), &t).await?;
    let (_, o) = api.get(&format!("/v1/runs/{free}"), &t).await?;
    ensure!(status(&f) == "running", "{f}");
    // `one` allows one run at a time; `other` takes the server's second slot.
    ensure!(status(&s) == "queued", "{s}");
    ensure!(status(&o) == "running", "{o}");
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
    let ended = f["finished_at"].as_str().unwrap_or_default().to_string();
    let began = s["started_at"].as_str().unwrap_or_default().to_string();
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

async fn requests_need_a_live_token_and_teams_see_only_their_own(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let a = api.team("acme").await?;
    let b = api.team("bravo").await?;
    let (status, body) = api
        .send(Method::GET, "/v1/workflows", None, None, &[])
        .await?;
    ensure!(status == StatusCode::UNAUTHORIZED, "{status}");
    ensure!(body["error"]["kind"] == "unauthorized", "{body}");
    let (status, _) = api.get("/v1/workflows", "dnt_not-a-token").await?;
    ensure!(status == StatusCode::UNAUTHORIZED);

    let (status, _) = api
        .push(&a, "orders", &api.workflow("orders", None))
        .await?;
    ensure!(status == StatusCode::CREATED, "{status}");
    let run = api.run(&a, "orders", "{}").await?;
    api.finished(&a, &run).await?;

    // Bravo sees nothing of Acme's: the same answer as for what does not exist.
    let (status, body) = api.get("/v1/workflows/orders", &b).await?;
    ensure!(status == StatusCode::NOT_FOUND, "{status} {body}");
    let (status, _) = api.get(&format!("/v1/runs/{run}"), &b).await?;
    ensure!(status == StatusCode::NOT_FOUND);
    let (status, _) = api.get(&format!("/v1/runs/{run}/events"), &b).await?;
    ensure!(status == StatusCode::NOT_FOUND);
    let (status, _) = api
        .send(
            Method::POST,
            &format!("/v1/runs/{run}/cancel"),
            Some(&b),
            None,
            &[],
        )
        .await?;
    ensure!(status == StatusCode::NOT_FOUND);
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/workflows/orders/runs",
            Some(&b),
            None,
            &[],
        )
        .await?;
    ensure!(status == StatusCode::NOT_FOUND);
    let (_, listed) = api.get("/v1/runs", &b).await?;
    ensure!(listed["runs"] == Value::Array(vec![]), "{listed}");
    let (_, listed) = api.get("/v1/workflows", &b).await?;
    ensure!(listed["workflows"] == Value::Array(vec![]), "{listed}");

    // A revoked token is refused from then on.
    let tokens = api.db.list_tokens(Some("acme")).await?;
    api.db
        .revoke_token(&tokens[0].token_id, chrono::Utc::now())
        .await?;
    let (status, body) = api.get("/v1/workflows", &a).await?;
    ensure!(status == StatusCode::UNAUTHORIZED, "{status} {body}");
    api.stop().await
}

async fn pushing_unchanged_content_makes_no_new_version(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    let yaml = api.workflow("orders", None);
    let (status, v) = api.push(&t, "orders", &yaml).await?;
    ensure!(
        status == StatusCode::CREATED && v["version"] == 1,
        "{status} {v}"
    );
    let (status, v) = api.push(&t, "orders", &yaml).await?;
    ensure!(
        status == StatusCode::OK && v["version"] == 1 && v["created"] == false,
        "{v}"
    );
    let changed = yaml.replace("default: 500", "default: 900");
    let (status, v) = api.push(&t, "orders", &changed).await?;
    ensure!(
        status == StatusCode::CREATED && v["version"] == 2,
        "{status} {v}"
    );
    let (_, got) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(got["current_version"] == 2, "{got}");
    let versions: Vec<i64> = got["versions"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v["version"].as_i64()).collect())
        .unwrap_or_default();
    ensure!(versions == [2, 1], "{versions:?}");
    ensure!(got["source"].as_str() == Some(changed.as_str()));
    ensure!(
        got["documents"] == serde_json::json!(["openapi.yaml"]),
        "{got}"
    );
    // A run names the version it ran.
    let run = api.run(&t, "orders", "{}").await?;
    let record = api.finished(&t, &run).await?;
    ensure!(record["workflow_version"] == 2, "{record}");

    let (status, _) = api
        .send(Method::DELETE, "/v1/workflows/orders", Some(&t), None, &[])
        .await?;
    ensure!(status == StatusCode::NO_CONTENT);
    let (status, _) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(status == StatusCode::NOT_FOUND);
    // Its runs are kept; pushing again continues the numbering.
    let (status, _) = api.get(&format!("/v1/runs/{run}"), &t).await?;
    ensure!(status == StatusCode::OK);
    let (status, v) = api.push(&t, "orders", &changed).await?;
    ensure!(
        status == StatusCode::CREATED && v["version"] == 3,
        "{status} {v}"
    );
    api.stop().await
}

async fn invalid_files_are_refused_with_located_diagnostics(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    let broken = api
        .workflow("orders", None)
        .replace("tool: shop.listProperties", "tool: shop.listPropertiez");
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders?file=orders.yaml",
            Some(&t),
            Some(("application/json", &api.bundle(&broken)?)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    ensure!(v["error"]["kind"] == "invalid_workflow", "{v}");
    let d = &v["error"]["diagnostics"][0];
    ensure!(
        d["file"] == "orders.yaml" && d["line"] == 12 && d["column"] == 11,
        "{d}"
    );
    ensure!(d["path"] == "steps[0].tool", "{d}");
    ensure!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("listProperties")),
        "{d}"
    );
    // Nothing was stored.
    let (status, _) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(status == StatusCode::NOT_FOUND);

    // /v1/validate answers the same diagnostics, and `valid` for a good file.
    let (status, v) = api
        .send(
            Method::POST,
            "/v1/validate?file=orders.yaml",
            Some(&t),
            Some(("application/json", &api.bundle(&broken)?)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::OK && v["valid"] == false, "{v}");
    ensure!(v["diagnostics"][0]["line"] == 12, "{v}");
    let good = api.bundle(&api.workflow("orders", None))?;
    let (_, v) = api
        .send(
            Method::POST,
            "/v1/validate",
            Some(&t),
            Some(("application/json", &good)),
            &[],
        )
        .await?;
    ensure!(v["valid"] == true && v["steps"] == 2, "{v}");

    // YAML that does not parse is located too.
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("application/yaml", "name: [unclosed\n")),
            &[("x-dragnet-file", "bad.yaml")],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    ensure!(v["error"]["diagnostics"][0]["file"] == "bad.yaml", "{v}");

    // A document path leaving the documents folder is refused, not read.
    let escaping = api
        .workflow("orders", None)
        .replace("openapi: openapi.yaml", "openapi: ../../etc/passwd");
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("application/yaml", &escaping)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    let message = v["error"]["diagnostics"][0]["message"]
        .as_str()
        .unwrap_or("");
    ensure!(message.contains("climbs out"), "{message}");

    // multipart/form-data: the file as `workflow`, each document by its path.
    let doc = std::fs::read_to_string(dragnet_shop::openapi_path())?;
    let yaml = api.workflow("orders", None);
    let form = format!(
        "--XyZ\r\nContent-Disposition: form-data; name=\"workflow\"; filename=\"orders.yaml\"\r\n\r\n{yaml}\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"openapi.yaml\"\r\n\r\n{doc}\r\n--XyZ--\r\n"
    );
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("multipart/form-data; boundary=XyZ", &form)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    let (_, got) = api.get("/v1/workflows/orders", &t).await?;
    ensure!(
        got["file_name"] == "orders.yaml" && got["documents"][0] == "openapi.yaml",
        "{got}"
    );
    let no_file =
        "--XyZ\r\nContent-Disposition: form-data; name=\"openapi.yaml\"\r\n\r\nx\r\n--XyZ--\r\n";
    let (status, v) = api
        .send(
            Method::PUT,
            "/v1/workflows/orders",
            Some(&t),
            Some(("multipart/form-data; boundary=XyZ", no_file)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::BAD_REQUEST, "{status} {v}");
    let (_, v) = api
        .send(Method::DELETE, "/v1/workflows/orders", Some(&t), None, &[])
        .await?;
    ensure!(v.is_null());

    // The file's name must be the one it is submitted as.
    let (status, v) = api.push(&t, "other", &api.workflow("orders", None)).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    ensure!(v["error"]["kind"] == "name_mismatch", "{v}");

    // Inputs are typed when a run is asked for.
    api.push(&t, "orders", &api.workflow("orders", None))
        .await?;
    let (status, v) = api
        .send(
            Method::POST,
            "/v1/workflows/orders/runs",
            Some(&t),
            Some(("application/json", r#"{"inputs": {"min_total": "lots"}}"#)),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    ensure!(v["error"]["kind"] == "invalid_input", "{v}");
    let (status, v) = api
        .send(
            Method::POST,
            "/v1/workflows/orders/runs",
            Some(&t),
            Some(("application/json", r#"{"inputz": {}}"#)),
            &[],
        )
        .await?;
    ensure!(
        status == StatusCode::BAD_REQUEST && v["error"]["kind"] == "bad_request",
        "{v}"
    );
    api.stop().await
}

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
    let record = api.finished(&t, &run).await?;
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
    let record = api.finished(&t, &run).await?;
    ensure!(record["status"] == "cancelled", "{record}");
    let (status, v) = api.send(Method::POST, &cancel, Some(&t), None, &[]).await?;
    ensure!(
        status == StatusCode::CONFLICT && v["error"]["kind"] == "run_ended",
        "{v}"
    );
    api.stop().await
}

async fn a_teams_cache_entries_serve_only_that_team(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let a = api.team("acme").await?;
    let b = api.team("bravo").await?;
    let cached = api.workflow("orders", None).replace(
        "    tool: shop.listProperties\n",
        "    tool: shop.listProperties\n    loop:\n      cache: { ttl_minutes: 60 }\n",
    );
    let property_calls = |api: &Api| {
        api.shop
            .requests()
            .iter()
            .filter(|r| r.path == "/properties")
            .count()
    };
    for token in [&a, &b] {
        api.push(token, "orders", &cached).await?;
    }
    let run = api.run(&a, "orders", "{}").await?;
    api.finished(&a, &run).await?;
    let after_first = property_calls(&api);
    ensure!(after_first == 1, "{after_first}");
    let run = api.run(&a, "orders", "{}").await?;
    api.finished(&a, &run).await?;
    ensure!(
        property_calls(&api) == 1,
        "the team's second run is served from its cache"
    );
    let run = api.run(&b, "orders", "{}").await?;
    api.finished(&b, &run).await?;
    ensure!(property_calls(&api) == 2, "another team walks for itself");
    api.stop().await
}

async fn shutdown_records_runs_past_the_grace_period_interrupted(db: Db) -> Result<()> {
    let config = ServerConfig {
        shutdown_grace: Duration::from_millis(200),
        ..ServerConfig::default()
    };
    let api = Api::start_with(db.clone(), config).await?;
    let t = api.team("acme").await?;
    api.push(&t, "slow", &api.workflow("slow", Some("latency=500")))
        .await?;
    let run = api
        .run(&t, "slow", r#"{"inputs": {"min_total": 0}}"#)
        .await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    api.state.stopping().cancel();
    // New runs are refused while it stops.
    let (status, v) = api
        .send(Method::POST, "/v1/workflows/slow/runs", Some(&t), None, &[])
        .await
        .unwrap_or((StatusCode::SERVICE_UNAVAILABLE, Value::Null));
    ensure!(status == StatusCode::SERVICE_UNAVAILABLE, "{status} {v}");
    api.stop().await?;
    let record = db
        .get_run(&run)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no run"))?;
    ensure!(
        record.status == dragnet_engine::run::RunStatus::Interrupted,
        "{:?}",
        record.status
    );
    let events = db.run_events(&run, 0).await?;
    let end = events
        .last()
        .map(|e| (e.event.as_str(), e.data.contains("interrupted")));
    ensure!(end == Some(("end", true)), "{events:?}");
    Ok(())
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_need_their_own_token_and_count_what_ran() {
    dragnet_store::testing::on_sqlite(|db| async move {
        let config = ServerConfig {
            metrics_token: Some(dragnet_steps::http::Secret::new("scrape-me")),
            ..ServerConfig::default()
        };
        let api = Api::start_with(db, config).await?;
        let t = api.team("acme").await?;
        let cached = api.workflow("orders", None).replace(
            "    tool: shop.listProperties\n",
            "    tool: shop.listProperties\n    loop:\n      cache: { ttl_minutes: 60 }\n",
        );
        api.push(&t, "orders", &cached).await?;
        for _ in 0..2 {
            let run = api.run(&t, "orders", "{}").await?;
            api.finished(&t, &run).await?;
        }
        // A shop that answers 429 once, then the page.
        let throttled = api.workflow("throttled", Some("status=1:429:retry-after=0"));
        api.push(&t, "throttled", &throttled).await?;
        let run = api.run(&t, "throttled", "{}").await?;
        let record = api.finished(&t, &run).await?;
        ensure!(record["steps"][1]["verdict"]["throttled"] == 1, "{record}");
        let scrape = |token: String| {
            let api = &api;
            async move {
                let resp = api
                    .http
                    .get(format!("{}/metrics", api.base))
                    .bearer_auth(token)
                    .send()
                    .await?;
                anyhow::Ok((resp.status(), resp.text().await?))
            }
        };
        // A team's token is not the metrics token.
        let (status, _) = scrape(t.clone()).await?;
        ensure!(status == StatusCode::UNAUTHORIZED, "{status}");
        let (status, text) = scrape("scrape-me".into()).await?;
        ensure!(status == StatusCode::OK, "{status} {text}");
        ensure!(
            text.contains("dragnet_runs_total{workflow=\"orders\",status=\"succeeded\"} 2"),
            "{text}"
        );
        ensure!(
            text.contains("dragnet_step_duration_seconds_count{kind=\"tool\"} 6"),
            "{text}"
        );
        ensure!(
            text.contains("dragnet_cache_lookups_total{result=\"hit\"} 1"),
            "{text}"
        );
        ensure!(
            text.contains("dragnet_cache_lookups_total{result=\"miss\"} 1"),
            "{text}"
        );
        let requests = text
            .lines()
            .find_map(|l| l.strip_prefix("dragnet_walk_requests_total "))
            .and_then(|n| n.parse::<u64>().ok());
        ensure!(requests.is_some_and(|n| n >= 31), "{text}");
        ensure!(text.contains("dragnet_runs_running 0"), "{text}");
        let host = api
            .shop
            .base_url()
            .trim_start_matches("http://")
            .to_string();
        let counter = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}{{host=\"{host}\"}} ")))
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
        };
        ensure!(counter("dragnet_upstream_pages_total") >= 62, "{text}");
        ensure!(counter("dragnet_upstream_throttled_total") == 1, "{text}");
        ensure!(counter("dragnet_upstream_errors_total") == 1, "{text}");
        api.stop().await
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_a_json_413() {
    dragnet_store::testing::on_sqlite(|db| async move {
        let config = ServerConfig {
            body_limit: 4096,
            ..ServerConfig::default()
        };
        let api = Api::start_with(db, config).await?;
        let t = api.team("acme").await?;
        let big = api.bundle(&api.workflow("orders", None))?;
        for (method, path) in [
            (Method::PUT, "/v1/workflows/orders"),
            (Method::POST, "/v1/validate"),
        ] {
            let (status, v) = api
                .send(
                    method,
                    path,
                    Some(&t),
                    Some(("application/json", &big)),
                    &[],
                )
                .await?;
            ensure!(
                status == StatusCode::PAYLOAD_TOO_LARGE,
                "{path}: {status} {v}"
            );
            ensure!(v["error"]["kind"] == "too_large", "{v}");
        }
        let (status, _) = api.get("/v1/workflows/orders", &t).await?;
        ensure!(status == StatusCode::NOT_FOUND, "nothing was stored");
        api.stop().await
    })
    .await
}
