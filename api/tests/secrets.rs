//! Team secrets against a real server and store (issue 21, item 0): a
//! workflow's credentials on a server are its team's secrets, never the
//! server's environment. A team pointing a provider at its own recorder
//! with credentials naming `DRAGNET_METRICS_TOKEN` (set in the server's
//! environment and settings) is refused at push, located at the `env:`
//! value; another team's secret of that name does not help; once the team
//! sets its own, the recorder receives that value and never the server's
//! or the other team's, and the upstream echoing it back is redacted in
//! the run record. Secrets are set, listed (names only) and deleted over
//! the API; a deleted one fails the step saying so; without
//! `DRAGNET_SECRETS_KEY` setting one and pushing a workflow naming one are
//! refused, naming the variable.

mod support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::{ensure, Context, Result};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};
use dragnet_api::ServerConfig;
use dragnet_core::secret::Secret;
use dragnet_http::Sealer;
use dragnet_runner::{claimer, Launcher, RunnerConfig, SchedulerConfig, TickClock};
use dragnet_store::testing::TestClock;
use dragnet_store::Db;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use support::Api;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

dragnet_store::on_both_backends!(
    a_team_reads_only_its_own_secrets_never_the_servers_environment,
    without_a_secrets_key_secrets_are_refused_naming_the_variable,
    scheduled_and_claimed_runs_read_the_teams_secrets,
);

const SERVER_TOKEN: &str = "metrics-SERVER-7d1e44c2";
const A_VALUE: &str = "team-A-SECRET-0b9f31";
const B_VALUE: &str = "team-B-SECRET-e2c605";

const DOC: &str = r#"{"openapi":"3.0.3","info":{"title":"recorder","version":"1"},"paths":{
  "/items":{"get":{"operationId":"items","responses":{"200":{"description":"ok"}}}}}}"#;

/// Every `Authorization` header the recorder received.
type Seen = Arc<Mutex<Vec<String>>>;

/// An upstream of the team's own: it records the credentials it is sent
/// and echoes them back in its one row.
async fn recorder() -> Result<(SocketAddr, Seen)> {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route(
            "/items",
            get(|State(seen): State<Seen>, headers: HeaderMap| async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                seen.lock().map(|mut s| s.push(auth.clone())).ok();
                Json(json!([{"id": 1, "echo": auth}]))
            }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((addr, seen))
}

/// The workflow over the recorder; `credentials` is put in as written
/// (none when empty).
fn workflow(addr: SocketAddr, credentials: &str) -> String {
    let credentials = match credentials {
        "" => String::new(),
        c => format!("\n    credentials: {c}"),
    };
    format!(
        "name: leak
providers:
  mine:
    openapi: recorder.json
    base_url: http://{addr}{credentials}
steps:
  - id: items
    tool: mine.items
"
    )
}

async fn push(api: &Api, token: &str, yaml: &str) -> Result<(StatusCode, Value)> {
    let bundle =
        json!({"workflow": yaml, "documents": {"recorder.json": DOC}, "file_name": "leak.yaml"});
    api.send(
        Method::PUT,
        "/v1/workflows/leak",
        Some(token),
        Some(("application/json", &bundle.to_string())),
        &[],
    )
    .await
}

async fn set(api: &Api, token: &str, name: &str, value: &str) -> Result<(StatusCode, Value)> {
    api.send(
        Method::PUT,
        &format!("/v1/secrets/{name}"),
        Some(token),
        Some(("application/json", &json!({ "value": value }).to_string())),
        &[],
    )
    .await
}

fn secrets_config() -> Result<ServerConfig> {
    Ok(ServerConfig {
        runner: RunnerConfig {
            secrets: Some(Arc::new(Sealer::new(
                b"the operator's secrets key: 32 bytes or more",
            )?)),
            ..RunnerConfig::default()
        },
        metrics_token: Some(Secret::new(SERVER_TOKEN)),
        ..ServerConfig::default()
    })
}

async fn a_team_reads_only_its_own_secrets_never_the_servers_environment(db: Db) -> Result<()> {
    // The server's own environment holds the variable the workflow names,
    // as a deployment's would.
    std::env::set_var("DRAGNET_METRICS_TOKEN", SERVER_TOKEN);
    let api = Api::start_with(db, secrets_config()?).await?;
    let a = api.team("a").await?;
    let b = api.team("b").await?;
    let (addr, seen) = recorder().await?;
    let yaml = workflow(addr, "{type: bearer, env: DRAGNET_METRICS_TOKEN}");

    // Refused at push, at the `env:` value.
    let (status, v) = push(&api, &a, &yaml).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    let d = &v["error"]["diagnostics"][0];
    let line = yaml.lines().nth(5).unwrap_or_default();
    let column = line.find("DRAGNET_METRICS_TOKEN").unwrap_or_default() + 1;
    ensure!(
        d["file"] == "leak.yaml"
            && d["line"] == 6
            && d["column"] == column
            && d["path"] == "providers.mine.credentials.env",
        "{v}"
    );
    let message = d["message"].as_str().unwrap_or_default();
    ensure!(
        message.contains("no secret `DRAGNET_METRICS_TOKEN`") && message.contains("secrets set"),
        "{message}"
    );

    // Team b's secret of that name is b's alone.
    let (status, v) = set(&api, &b, "DRAGNET_METRICS_TOKEN", B_VALUE).await?;
    ensure!(status == StatusCode::NO_CONTENT, "{status} {v}");
    let (status, v) = push(&api, &a, &yaml).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");

    // Any other spelling of the server's environment is a secret a has not
    // set, whatever kind of credentials names it.
    for credentials in [
        "{type: bearer, env: DATABASE_URL}",
        "{type: bearer, env: dragnet_metrics_token}",
        "{type: header, name: X-Key, env: PATH}",
        "{type: basic, username_env: HOME, password_env: DRAGNET_METRICS_TOKEN}",
    ] {
        let (status, v) = push(&api, &a, &workflow(addr, credentials)).await?;
        ensure!(
            status == StatusCode::UNPROCESSABLE_ENTITY && v["error"]["kind"] == "invalid_workflow",
            "{credentials}: {status} {v}"
        );
    }
    ensure!(seen.lock().map(|s| s.is_empty()).unwrap_or(false));

    // With its own secret of that name, a's run sends a's value.
    let (status, v) = set(&api, &a, "DRAGNET_METRICS_TOKEN", A_VALUE).await?;
    ensure!(status == StatusCode::NO_CONTENT, "{status} {v}");
    let (status, v) = push(&api, &a, &yaml).await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    let run = api.run(&a, "leak", "{}").await?;
    let record = api.finished(&a, &run).await?;
    ensure!(record["status"] == "succeeded", "{record}");
    let got = seen.lock().map(|s| s.clone()).unwrap_or_default();
    ensure!(got == [format!("Bearer {A_VALUE}")], "{got:?}");

    // The echo is redacted in the stored record, outputs and events.
    let (_, full) = api.get(&format!("/v1/runs/{run}?outputs=true"), &a).await?;
    let events = api.events(&a, &run, None).await?;
    let text = format!("{full} {events:?}");
    ensure!(text.contains("[redacted]"), "{full}");
    for value in [A_VALUE, B_VALUE, SERVER_TOKEN] {
        ensure!(!text.contains(value), "{value} in the run record: {full}");
    }

    // A listing: names and times only, each team its own.
    let (status, list) = api.get("/v1/secrets", &a).await?;
    ensure!(status == StatusCode::OK, "{status} {list}");
    let names: Vec<&str> = list["secrets"]
        .as_array()
        .context("secrets")?
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    ensure!(names == ["DRAGNET_METRICS_TOKEN"], "{list}");
    ensure!(list["secrets"][0]["updated_at"].is_string(), "{list}");
    ensure!(!list.to_string().contains(A_VALUE), "{list}");
    let (_, list_b) = api.get("/v1/secrets", &b).await?;
    ensure!(list_b["secrets"].as_array().map(Vec::len) == Some(1));

    // Names and values are checked.
    let (status, _) = set(&api, &a, "1BAD", "x-value").await?;
    ensure!(status == StatusCode::BAD_REQUEST, "{status}");
    let (status, _) = set(&api, &a, "BIG", &"x".repeat(64 * 1024 + 1)).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    let (status, _) = api
        .send(
            Method::PUT,
            "/v1/secrets/NOBODY",
            Some(&a),
            Some(("application/json", "{}")),
            &[],
        )
        .await?;
    ensure!(status == StatusCode::BAD_REQUEST, "{status}");

    // Deleted: the next run's step fails saying which secret is missing,
    // and nothing is sent.
    let (status, _) = api
        .send(
            Method::DELETE,
            "/v1/secrets/DRAGNET_METRICS_TOKEN",
            Some(&a),
            None,
            &[],
        )
        .await?;
    ensure!(status == StatusCode::NO_CONTENT, "{status}");
    let (status, _) = api
        .send(
            Method::DELETE,
            "/v1/secrets/DRAGNET_METRICS_TOKEN",
            Some(&a),
            None,
            &[],
        )
        .await?;
    ensure!(status == StatusCode::NOT_FOUND, "{status}");
    let run = api.run(&a, "leak", "{}").await?;
    let record = api.finished(&a, &run).await?;
    ensure!(record["status"] == "failed", "{record}");
    let error = record["steps"][0]["reason"].to_string();
    ensure!(
        error.contains("no secret `DRAGNET_METRICS_TOKEN`"),
        "{record}"
    );
    ensure!(seen.lock().map(|s| s.len()).unwrap_or(0) == 1);
    // b's own secret is still b's.
    let (_, list_b) = api.get("/v1/secrets", &b).await?;
    ensure!(list_b["secrets"].as_array().map(Vec::len) == Some(1));
    api.stop().await
}

async fn without_a_secrets_key_secrets_are_refused_naming_the_variable(db: Db) -> Result<()> {
    let api = Api::start_with(db, ServerConfig::default()).await?;
    let a = api.team("a").await?;
    let (status, v) = set(&api, &a, "TOKEN", "a-value-123").await?;
    ensure!(status == StatusCode::CONFLICT, "{status} {v}");
    ensure!(
        v["error"]["kind"] == "secrets_unconfigured"
            && v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("DRAGNET_SECRETS_KEY")),
        "{v}"
    );
    let (addr, _seen) = recorder().await?;
    let (status, v) = push(&api, &a, &workflow(addr, "{type: bearer, env: TOKEN}")).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    ensure!(
        v["error"]["diagnostics"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("DRAGNET_SECRETS_KEY")),
        "{v}"
    );
    // A workflow without credentials pushes as before.
    let (status, v) = push(&api, &a, &workflow(addr, "")).await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    api.stop().await
}

/// A cron tick's run and a run another process claims (a worker: the
/// serving process runs none itself) are started from their rows, and read
/// the team's secrets as a run started at once does.
async fn scheduled_and_claimed_runs_read_the_teams_secrets(db: Db) -> Result<()> {
    let at = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default()
    };
    std::env::set_var("DRAGNET_METRICS_TOKEN", SERVER_TOKEN);
    let clock = Arc::new(TestClock::new(at("2026-06-01T09:59:30Z")));
    let base = secrets_config()?;
    let config = ServerConfig {
        runner: RunnerConfig {
            max_running_runs: 0,
            claim_every: None,
            scheduler: Some(SchedulerConfig {
                every: std::time::Duration::from_secs(86_400),
                clock: TickClock::Fixed(clock.clone()),
                ..SchedulerConfig::default()
            }),
            ..base.runner
        },
        ..base
    };
    let api = Api::start_full(db.clone(), config.clone(), clock.clone()).await?;
    let a = api.team("a").await?;
    let (addr, seen) = recorder().await?;
    let (status, v) = set(&api, &a, "DRAGNET_METRICS_TOKEN", A_VALUE).await?;
    ensure!(status == StatusCode::NO_CONTENT, "{status} {v}");
    let yaml = workflow(addr, "{type: bearer, env: DRAGNET_METRICS_TOKEN}")
        .replace("steps:\n", "triggers:\n  - cron: \"0 * * * *\"\nsteps:\n");
    let (status, v) = push(&api, &a, &yaml).await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    clock.set(at("2026-06-01T10:00:05Z"));
    let fired = api.pass().await?.fired;
    ensure!(fired.len() == 1, "{fired:?}");
    let manual = api.run(&a, "leak", "{}").await?;

    // A worker on the same store claims both and runs them.
    // A worker: a launcher without the API.
    let worker = Launcher::new(
        db,
        RunnerConfig {
            max_running_runs: 2,
            scheduler: None,
            ..config.runner
        },
        clock.clone(),
        TaskTracker::new(),
        CancellationToken::new(),
    );
    ensure!(claimer::pass(&worker).await? == 2);
    let (_, runs) = api.get("/v1/runs?workflow=leak", &a).await?;
    let ids: Vec<String> = runs["runs"]
        .as_array()
        .context("runs")?
        .iter()
        .filter_map(|r| r["run_id"].as_str().map(String::from))
        .collect();
    ensure!(ids.len() == 2 && ids.contains(&manual), "{runs}");
    for id in &ids {
        let record = api.finished(&a, id).await?;
        ensure!(record["status"] == "succeeded", "{record}");
    }
    let got = seen.lock().map(|s| s.clone()).unwrap_or_default();
    let expected = format!("Bearer {A_VALUE}");
    ensure!(
        got.len() == 2 && got.iter().all(|g| *g == expected),
        "{got:?}"
    );
    worker.halt().cancel();
    api.stop().await
}
