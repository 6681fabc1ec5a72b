//! Where a team's providers may point (`[server] upstream_hosts`, issue 21)
//! over real HTTP: a metadata base_url refused at push with its place in
//! the file; a name resolving into a refused range refused when the run
//! calls it, nothing reaching the server behind it; a redirect from an
//! admitted host to a refused one not followed.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{ensure, Result};
use axum::http::{header, StatusCode as AxumStatus};
use axum::response::IntoResponse;
use axum::Router;
use dragnet_api::ServerConfig;
use dragnet_http::HostPolicy;
use dragnet_runner::RunnerConfig;
use dragnet_store::Db;
use reqwest::{Method, StatusCode};
use support::Api;

dragnet_store::on_both_backends!(
    a_metadata_base_url_is_refused_at_push_where_it_is_written,
    a_name_resolving_into_a_refused_range_is_refused_when_called,
    a_redirect_to_a_refused_host_is_not_followed,
);

/// One step over the shop's document, its provider at `base`.
fn workflow(name: &str, base: &str) -> String {
    format!(
        "name: {name}
providers:
  shop:
    openapi: openapi.yaml
    base_url: {base}
steps:
  - id: properties
    tool: shop.listProperties
"
    )
}

/// A server on `ip` counting the requests it gets, each answered `answer`.
async fn counting(
    ip: &str,
    answer: impl Fn() -> axum::response::Response + Clone + Send + Sync + 'static,
) -> Result<(u16, Arc<AtomicUsize>)> {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = Router::new().fallback(move || {
        let answer = answer.clone();
        counted.fetch_add(1, Ordering::SeqCst);
        async move { answer() }
    });
    let listener = tokio::net::TcpListener::bind(format!("{ip}:0")).await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((port, hits))
}

fn hosts(patterns: &[&str]) -> Result<ServerConfig> {
    Ok(ServerConfig {
        runner: RunnerConfig {
            upstream_hosts: Arc::new(HostPolicy::parse(patterns)?),
            ..RunnerConfig::default()
        },
        ..ServerConfig::default()
    })
}

async fn a_metadata_base_url_is_refused_at_push_where_it_is_written(db: Db) -> Result<()> {
    // The default policy: loopback (the shop) is fine, metadata is not.
    let api = Api::start(db).await?;
    let t = api.team("acme").await?;
    let (status, v) = api
        .push(&t, "fine", &workflow("fine", api.shop.base_url()))
        .await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");

    let yaml = workflow("imds", "http://169.254.169.254/latest");
    let (status, v) = api.push(&t, "imds", &yaml).await?;
    ensure!(status == StatusCode::UNPROCESSABLE_ENTITY, "{status} {v}");
    ensure!(v["error"]["kind"] == "invalid_workflow", "{v}");
    let d = &v["error"]["diagnostics"][0];
    ensure!(
        d["line"] == 5 && d["column"] == 15 && d["path"] == "providers.shop.base_url",
        "{v}"
    );
    let message = d["message"].as_str().unwrap_or_default();
    ensure!(
        message.contains("`169.254.169.254` is refused") && message.contains("cloud metadata"),
        "{message}"
    );
    // Nothing was stored, and validate says the same.
    let (status, _) = api.get("/v1/workflows/imds", &t).await?;
    ensure!(status == StatusCode::NOT_FOUND, "{status}");
    let bundle = api.bundle(&yaml)?;
    let (_, v) = api
        .send(
            Method::POST,
            "/v1/validate",
            Some(&t),
            Some(("application/json", &bundle)),
            &[],
        )
        .await?;
    ensure!(
        v["valid"] == false && v["diagnostics"][0]["path"] == "providers.shop.base_url",
        "{v}"
    );
    api.stop().await
}

async fn a_name_resolving_into_a_refused_range_is_refused_when_called(db: Db) -> Result<()> {
    let (port, hits) = counting("127.0.0.1", || "[]".into_response()).await?;
    // `localhost` is admitted by name; loopback, where it resolves, is not.
    let api = Api::start_with(db, hosts(&["*", "!127.0.0.0/8", "!::1"])?).await?;
    let t = api.team("acme").await?;
    let (status, v) = api
        .push(
            &t,
            "local",
            &workflow("local", &format!("http://localhost:{port}")),
        )
        .await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    let run = api.run(&t, "local", "{}").await?;
    let record = api.finished(&t, &run).await?;
    ensure!(record["steps"][0]["status"] == "failed", "{record}");
    let reason = record["steps"][0]["reason"].as_str().unwrap_or_default();
    ensure!(
        reason.contains("the upstream host `localhost` is refused")
            && reason.contains("resolves to")
            && reason.contains("refusal `!"),
        "{reason}"
    );
    // Refused, not retried: one attempt, and nothing reached the server.
    ensure!(record["steps"][0]["attempts"] == 1, "{record}");
    ensure!(
        hits.load(Ordering::SeqCst) == 0,
        "the refused host was reached"
    );
    api.stop().await
}

async fn a_redirect_to_a_refused_host_is_not_followed(db: Db) -> Result<()> {
    let (refused_port, refused_hits) = counting("127.0.0.2", || "[]".into_response()).await?;
    let target = format!("http://127.0.0.2:{refused_port}/properties");
    let (port, hits) = counting("127.0.0.1", move || {
        (AxumStatus::FOUND, [(header::LOCATION, target.clone())]).into_response()
    })
    .await?;
    let api = Api::start_with(db, hosts(&["!127.0.0.2"])?).await?;
    let t = api.team("acme").await?;
    let (status, v) = api
        .push(
            &t,
            "hop",
            &workflow("hop", &format!("http://127.0.0.1:{port}")),
        )
        .await?;
    ensure!(status == StatusCode::CREATED, "{status} {v}");
    let run = api.run(&t, "hop", "{}").await?;
    let record = api.finished(&t, &run).await?;
    ensure!(record["steps"][0]["status"] == "failed", "{record}");
    let reason = record["steps"][0]["reason"].as_str().unwrap_or_default();
    ensure!(
        reason.contains("the upstream host `127.0.0.2` is refused")
            && reason.contains("`!127.0.0.2`"),
        "{reason}"
    );
    ensure!(
        hits.load(Ordering::SeqCst) == 1,
        "the admitted host answered once"
    );
    ensure!(
        refused_hits.load(Ordering::SeqCst) == 0,
        "the redirect was followed to the refused host"
    );
    api.stop().await
}
