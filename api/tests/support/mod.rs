//! A real server for the API tests: the demo shop as the upstream, a store
//! of the test's backend, `dragnet_api::serve` on 127.0.0.1:0, and a
//! reqwest client; helpers for teams, workflows and event streams.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use dragnet_api::{AppState, ServerConfig};
use dragnet_core::clock::{Clock, SystemClock};
use dragnet_runner::scheduler::{self, PassReport, SchedulerConfig, TickClock};
use dragnet_runner::RunnerConfig;
use dragnet_shop::ShopHandle;
use dragnet_store::Db;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub struct Api {
    pub base: String,
    pub http: reqwest::Client,
    pub state: AppState,
    pub shop: ShopHandle,
    pub db: Db,
    task: JoinHandle<std::io::Result<()>>,
}

/// A server stopped, with its store, settings, clock and running shop.
pub struct Parked {
    pub db: Db,
    pub config: ServerConfig,
    pub clock: Arc<dyn Clock>,
    pub shop: ShopHandle,
}

impl Parked {
    /// A server started again on all of it.
    pub async fn start(self) -> Result<Api> {
        Api::serve(self.db, self.config, self.clock, self.shop).await
    }
}

/// One event of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Sse {
    pub id: u64,
    pub event: String,
    pub data: Value,
}

impl Api {
    pub async fn start(db: Db) -> Result<Api> {
        Api::start_with(db, ServerConfig::default()).await
    }

    pub async fn start_with(db: Db, config: ServerConfig) -> Result<Api> {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        Api::start_full(db, config, clock).await
    }

    /// With `clock` for the runs and the scheduler's ticks; the scheduler
    /// passes only when the test calls `pass`.
    pub async fn start_clocked(db: Db, clock: Arc<dyn Clock>) -> Result<Api> {
        let config = ServerConfig {
            runner: RunnerConfig {
                scheduler: Some(SchedulerConfig {
                    every: Duration::from_secs(86_400),
                    clock: TickClock::Fixed(clock.clone()),
                    ..SchedulerConfig::default()
                }),
                ..RunnerConfig::default()
            },
            ..ServerConfig::default()
        };
        Api::start_full(db, config, clock).await
    }

    pub async fn start_full(db: Db, config: ServerConfig, clock: Arc<dyn Clock>) -> Result<Api> {
        let shop = dragnet_shop::start("127.0.0.1:0".parse()?).await?;
        Api::serve(db, config, clock, shop).await
    }

    async fn serve(
        db: Db,
        config: ServerConfig,
        clock: Arc<dyn Clock>,
        shop: ShopHandle,
    ) -> Result<Api> {
        let state = AppState::new(
            db.clone(),
            config,
            clock,
            TaskTracker::new(),
            CancellationToken::new(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let task = tokio::spawn(dragnet_api::serve(listener, state.clone()));
        Ok(Api {
            base,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()?,
            state,
            shop,
            db,
            task,
        })
    }

    /// Creates team `name` and returns a live token of it.
    pub async fn team(&self, name: &str) -> Result<String> {
        let now = SystemClock.now();
        self.db
            .teams()
            .create_team(&dragnet_api::new_team_id(), name, now)
            .await?;
        Ok(dragnet_api::create_token(&self.db, name, now).await?.token)
    }

    /// A workflow `name` over the shop: properties, then their open
    /// orders over `min_total`; `fault` goes to the shop as X-Shop-Fault.
    pub fn workflow(&self, name: &str, fault: Option<&str>) -> String {
        let headers = fault
            .map(|f| format!("\n    headers:\n      X-Shop-Fault: \"{f}\""))
            .unwrap_or_default();
        format!(
            "name: {name}
inputs:
  min_total:
    type: number
    default: 500
providers:
  shop:
    openapi: openapi.yaml
    base_url: {base}{headers}
steps:
  - id: properties
    tool: shop.listProperties
  - id: open_orders
    tool: shop.listPropertyOrders
    input:
      status: open
    loop:
      all_pages: true
      for_each:
        key: property_id
        values: {{ ref: \"$.steps.properties.data[*].id\" }}
      fields: [id, total]
      filter:
        - {{ field: total, op: gt, value: {{ ref: \"$.inputs.min_total\" }} }}
",
            base = self.shop.base_url()
        )
    }

    /// One slow walk: cancelled orders 100 a page, each page `latency_ms`
    /// late; `extra` is put in at the top level (a trigger, a limit).
    pub fn slow_workflow(&self, name: &str, latency_ms: u64, extra: &str) -> String {
        format!(
            "name: {name}
{extra}
providers:
  shop:
    openapi: openapi.yaml
    base_url: {base}
    headers:
      X-Shop-Fault: \"latency={latency_ms}\"
steps:
  - id: orders
    tool: shop.listOrders
    input: {{ status: cancelled, per_page: 100 }}
    loop: {{ all_pages: true, fields: [id] }}
",
            base = self.shop.base_url()
        )
    }

    /// The workflow with the shop's OpenAPI document, as a JSON bundle.
    pub fn bundle(&self, yaml: &str) -> Result<String> {
        let doc = std::fs::read_to_string(dragnet_shop::openapi_path())?;
        Ok(json!({"workflow": yaml, "documents": {"openapi.yaml": doc}}).to_string())
    }

    /// Sends a request; returns the status and the body as JSON (Null
    /// when empty).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<(&str, &str)>,
        headers: &[(&str, &str)],
    ) -> Result<(StatusCode, Value)> {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some((content_type, text)) = body {
            req = req
                .header("content-type", content_type)
                .body(text.to_string());
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req
            .send()
            .await
            .with_context(|| format!("sending to {path}"))?;
        let status = resp.status();
        let text = resp.text().await?;
        let value = match text.trim().is_empty() {
            true => Value::Null,
            false => serde_json::from_str(&text).with_context(|| format!("{status}: {text}"))?,
        };
        Ok((status, value))
    }

    pub async fn get(&self, path: &str, token: &str) -> Result<(StatusCode, Value)> {
        self.send(Method::GET, path, Some(token), None, &[]).await
    }

    /// Pushes workflow `name` as a bundle.
    pub async fn push(&self, token: &str, name: &str, yaml: &str) -> Result<(StatusCode, Value)> {
        let bundle = self.bundle(yaml)?;
        self.send(
            Method::PUT,
            &format!("/v1/workflows/{name}"),
            Some(token),
            Some(("application/json", &bundle)),
            &[],
        )
        .await
    }

    /// Starts a run; returns its id.
    pub async fn run(&self, token: &str, name: &str, body: &str) -> Result<String> {
        let (status, v) = self
            .send(
                Method::POST,
                &format!("/v1/workflows/{name}/runs"),
                Some(token),
                Some(("application/json", body)),
                &[],
            )
            .await?;
        anyhow::ensure!(status == StatusCode::CREATED, "{status}: {v}");
        v["run_id"].as_str().map(str::to_string).context("a run id")
    }

    /// The whole event stream of a run (it closes when the run ends).
    pub async fn events(&self, token: &str, run_id: &str, last: Option<u64>) -> Result<Vec<Sse>> {
        let mut req = self
            .http
            .get(format!("{}/v1/runs/{run_id}/events", self.base))
            .bearer_auth(token);
        if let Some(id) = last {
            req = req.header("last-event-id", id.to_string());
        }
        let resp = req.send().await?;
        anyhow::ensure!(resp.status() == StatusCode::OK, "events: {}", resp.status());
        let kind = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        anyhow::ensure!(kind.starts_with("text/event-stream"), "content type {kind}");
        parse_sse(&resp.text().await?)
    }

    /// Waits until run `run_id` has left the queue (running, or already
    /// ended).
    pub async fn started(&self, token: &str, run_id: &str) -> Result<Value> {
        self.wait_for(token, run_id, "start", &["queued"]).await
    }

    /// Waits until run `run_id` is recorded with a final status.
    pub async fn finished(&self, token: &str, run_id: &str) -> Result<Value> {
        self.wait_for(token, run_id, "finish", &["queued", "running"])
            .await
    }

    /// Polls run `run_id` until its status is none of `before`.
    async fn wait_for(
        &self,
        token: &str,
        run_id: &str,
        what: &str,
        before: &[&str],
    ) -> Result<Value> {
        for _ in 0..600 {
            let (_, v) = self.get(&format!("/v1/runs/{run_id}"), token).await?;
            if !before.iter().any(|status| v["status"] == *status) {
                return Ok(v);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::bail!("run {run_id} did not {what}")
    }

    /// Stops the server as a signal would, and waits for it.
    pub async fn stop(self) -> Result<()> {
        self.state.stopping().cancel();
        self.task.await??;
        self.shop.shutdown().await;
        Ok(())
    }

    /// Stops the server and starts a new one on the same store, clock and
    /// shop, as a restarted process would be.
    pub async fn restart(self) -> Result<Api> {
        self.park().await?.start().await
    }

    /// Stops the server as a signal would and waits for it, keeping what
    /// a restart needs (the shop keeps answering).
    pub async fn park(self) -> Result<Parked> {
        self.state.stopping().cancel();
        self.task.await??;
        Ok(Parked {
            config: self.state.config().clone(),
            clock: self.state.clock().clone(),
            db: self.db,
            shop: self.shop,
        })
    }

    /// One scheduler pass.
    pub async fn pass(&self) -> Result<PassReport> {
        let config = self
            .state
            .config()
            .runner
            .scheduler
            .clone()
            .context("a scheduler")?;
        Ok(scheduler::pass(self.state.launcher(), &config).await?)
    }
}

/// A browser for the UI: cookies passed by hand, redirects left to read.
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

/// Signs in to the UI with `token`: the session cookie (`name=value`).
pub async fn ui_sign_in(api: &Api, token: &str) -> Result<String> {
    let answer = browser()
        .post(format!("{}/ui/sign-in", api.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await?;
    let cookie = answer
        .headers()
        .get(reqwest::header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .context("a session cookie")?;
    Ok(cookie.to_string())
}

/// A UI page: its status and HTML.
pub async fn ui_page(api: &Api, path: &str, cookie: &str) -> Result<(u16, String)> {
    let answer = browser()
        .get(format!("{}{path}", api.base))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await?;
    Ok((answer.status().as_u16(), answer.text().await?))
}

/// Posts a UI form: the status, where it sends the browser, the page.
pub async fn ui_post(
    api: &Api,
    path: &str,
    cookie: &str,
    form: &str,
) -> Result<(u16, String, String)> {
    let answer = browser()
        .post(format!("{}{path}", api.base))
        .header(reqwest::header::COOKIE, cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.to_string())
        .send()
        .await?;
    let status = answer.status().as_u16();
    let to = answer
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    Ok((status, to, answer.text().await?))
}

/// The CSRF value of the first form of a page.
pub fn csrf_in(html: &str) -> Option<String> {
    let at = html.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
    Some(html[at..].split('"').next()?.to_string())
}

/// Reads a `text/event-stream` body (comments and keep-alives skipped).
pub fn parse_sse(text: &str) -> Result<Vec<Sse>> {
    let mut out = Vec::new();
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let (mut id, mut event, mut data) = (None, None, String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                id = Some(v.trim().parse::<u64>()?);
            } else if let Some(v) = line.strip_prefix("event:") {
                event = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            }
        }
        if let (Some(id), Some(event)) = (id, event) {
            out.push(Sse {
                id,
                event,
                data: serde_json::from_str(&data)?,
            });
        }
    }
    Ok(out)
}
