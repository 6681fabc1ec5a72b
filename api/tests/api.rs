//! The HTTP API against a real server, a real shop upstream and a real
//! store: auth and team isolation, the team's own cache, shutdown handing
//! unfinished runs back (the next server resumes them), and the metrics
//! behind their own token.

mod support;

use std::time::Duration;

use anyhow::{ensure, Context, Result};
use dragnet_api::ServerConfig;
use dragnet_engine::run::{RunStatus, StepStatus};
use dragnet_runner::RunnerConfig;
use dragnet_store::Db;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use support::Api;

dragnet_store::on_both_backends!(
    requests_need_a_live_token_and_teams_see_only_their_own,
    a_teams_cache_entries_serve_only_that_team,
    shutdown_hands_back_runs_past_the_grace_period,
);

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
    let tokens = api.db.teams().list_tokens(Some("acme")).await?;
    api.db
        .teams()
        .revoke_token(&tokens[0].token_id, chrono::Utc::now())
        .await?;
    let (status, body) = api.get("/v1/workflows", &a).await?;
    ensure!(status == StatusCode::UNAUTHORIZED, "{status} {body}");
    api.stop().await
}

async fn a_teams_cache_entries_serve_only_that_team(db: Db) -> Result<()> {
    let api = Api::start(db).await?;
    let a = api.team("acme").await?;
    let b = api.team("bravo").await?;
    // The fan-out walk is what is cached (plain calls never are).
    let cached = api.workflow("orders", None).replace(
        "    loop:\n      all_pages: true\n",
        "    loop:\n      all_pages: true\n      cache: { ttl_minutes: 60 }\n",
    );
    let walk_requests = |api: &Api| {
        api.shop
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/properties/") && r.path.ends_with("/orders"))
            .count()
    };
    for token in [&a, &b] {
        api.push(token, "orders", &cached).await?;
    }
    let run = api.run(&a, "orders", "{}").await?;
    api.finished(&a, &run).await?;
    let after_first = walk_requests(&api);
    ensure!(after_first > 1, "{after_first}");
    let run = api.run(&a, "orders", "{}").await?;
    api.finished(&a, &run).await?;
    ensure!(
        walk_requests(&api) == after_first,
        "the team's second run is served from its cache"
    );
    let run = api.run(&b, "orders", "{}").await?;
    api.finished(&b, &run).await?;
    ensure!(
        walk_requests(&api) == 2 * after_first,
        "another team walks for itself"
    );
    api.stop().await
}

async fn shutdown_hands_back_runs_past_the_grace_period(db: Db) -> Result<()> {
    let config = ServerConfig {
        runner: RunnerConfig {
            shutdown_grace: Duration::from_millis(200),
            ..RunnerConfig::default()
        },
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
    let live = api.state.live().get(&run).context("the run is live")?;
    let mut stream = live.watch();
    api.state.stopping().cancel();
    // New runs are refused while it stops.
    let (status, v) = api
        .send(Method::POST, "/v1/workflows/slow/runs", Some(&t), None, &[])
        .await
        .unwrap_or((StatusCode::SERVICE_UNAVAILABLE, Value::Null));
    ensure!(status == StatusCode::SERVICE_UNAVAILABLE, "{status} {v}");
    let parked = api.park().await?;
    // Handed back, not ended: queued for whoever claims it next, its
    // attempt kept; its live stream ended saying so, and nothing of the
    // hand-back's cancellation was stored.
    let record = db.runs().get_run(&run).await?.context("no run")?;
    ensure!(record.status == RunStatus::Queued, "{:?}", record.status);
    ensure!(
        record
            .steps
            .iter()
            .all(|s| s.status != StepStatus::Cancelled),
        "{record:?}"
    );
    let _ = stream.changed().await;
    let (events, ended) = live.events_after(0);
    let end = events.last().map(|e| e.data.clone()).unwrap_or_default();
    ensure!(ended && end.contains("handedBack"), "{events:?}");
    ensure!(
        db.runs().run_events(&run, 0).await?.is_empty(),
        "the attempt's events are not stored"
    );
    // Claimable at once (no lease to wait out): the server started again
    // resumes it, and it ends succeeded.
    let again = parked.start().await?;
    let done = again.finished(&t, &run).await?;
    ensure!(done["status"] == "succeeded", "{done}");
    again.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_need_their_own_token_and_count_what_ran() {
    dragnet_store::testing::on_sqlite(|db| async move {
        let config = ServerConfig {
            metrics_token: Some(dragnet_core::secret::Secret::new("scrape-me")),
            ..ServerConfig::default()
        };
        let api = Api::start_with(db, config).await?;
        let t = api.team("acme").await?;
        let cached = api.workflow("orders", None).replace(
            "    loop:\n      all_pages: true\n",
            "    loop:\n      all_pages: true\n      cache: { ttl_minutes: 60 }\n",
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
        ensure!(text.contains("dragnet_schedules_paused 0"), "{text}");
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
