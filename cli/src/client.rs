//! The command line as a client of `dragnet serve`: a small HTTP client
//! holding the server's address and the token (a redacting `Secret`,
//! never printed), whose error answers become `CliError::Server` with the
//! server's kind and message (and each diagnostic, located). It is also a
//! `RunLog`, so `runs list|show --server` print what a local store would.

use std::time::Duration;

use anyhow::{Context, Result};
use dragnet_core::secret::Secret;
use dragnet_engine::run::{LogFuture, RunLog, RunLogError, RunRecord, RunSummary, TriggerKind};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::Config;
use crate::failure::CliError;

/// `--server` and `--token`, over `DRAGNET_SERVER` / `DRAGNET_TOKEN`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServerFlags {
    /// A dragnet server, e.g. http://127.0.0.1:8080 (default: DRAGNET_SERVER,
    /// `[client] server`).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Its API token (default: DRAGNET_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
}

pub struct ApiClient {
    base: String,
    token: Secret,
    http: reqwest::Client,
}

impl ApiClient {
    /// The client the flags and configuration name, or `None` without a
    /// server.
    pub fn from(config: &Config, flags: &ServerFlags) -> Result<Option<ApiClient>> {
        let Some(base) = flags
            .server
            .clone()
            .or_else(|| config.client_server.clone())
        else {
            return Ok(None);
        };
        let token = flags
            .token
            .clone()
            .map(Secret::new)
            .or_else(|| config.client_token.clone())
            .ok_or_else(|| {
                CliError::argument_error(
                    "--token",
                    format!("{base} needs an API token: give --token or set DRAGNET_TOKEN"),
                )
            })?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .context("building the HTTP client")?;
        Ok(Some(ApiClient {
            base: base.trim_end_matches('/').to_string(),
            token,
            http,
        }))
    }

    /// As `from`, but a server is required.
    pub fn required(config: &Config, flags: &ServerFlags) -> Result<ApiClient> {
        ApiClient::from(config, flags)?.ok_or_else(|| {
            CliError::argument_error(
                "--server",
                "this command talks to a dragnet server: give --server URL or set DRAGNET_SERVER",
            )
            .into()
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends a request with the token; returns the answer whatever its status.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, String)>,
        headers: &[(&str, &str)],
    ) -> Result<reqwest::Response> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(self.token.expose());
        if let Some((content_type, text)) = body {
            req = req.header("content-type", content_type).body(text);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send()
            .await
            .with_context(|| format!("cannot reach {}", self.base))
    }

    /// Sends and reads a JSON answer; an error answer is a `CliError::Server`.
    pub async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, String)>,
        headers: &[(&str, &str)],
    ) -> Result<(StatusCode, T)> {
        let resp = self.send(method, path, body, headers).await?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .with_context(|| format!("reading the answer of {}", self.base))?;
        if !status.is_success() {
            return Err(self.error(status, &text).into());
        }
        let value = serde_json::from_str(&text)
            .with_context(|| format!("{} answered {status} with unexpected JSON", self.base))?;
        Ok((status, value))
    }

    /// An error answer as the server described it.
    pub fn error(&self, status: StatusCode, text: &str) -> CliError {
        let body: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let e = &body["error"];
        let mut message = e["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| text.chars().take(200).collect());
        for d in e["diagnostics"].as_array().into_iter().flatten() {
            message.push_str(&format!(
                "\n{}:{}:{}: {}",
                d["file"].as_str().unwrap_or("?"),
                d["line"],
                d["column"],
                d["message"].as_str().unwrap_or("")
            ));
        }
        CliError::Server {
            server: self.base.clone(),
            status: status.as_u16(),
            kind: e["kind"].as_str().unwrap_or("unknown").to_string(),
            message,
        }
    }
}

impl RunLog for ApiClient {
    fn list(&self, limit: u32) -> LogFuture<'_, Vec<RunSummary>> {
        self.list_triggered(limit, None)
    }

    fn list_triggered(
        &self,
        limit: u32,
        trigger: Option<TriggerKind>,
    ) -> LogFuture<'_, Vec<RunSummary>> {
        Box::pin(async move {
            let mut path = format!("/v1/runs?limit={}", limit.clamp(1, 500));
            if let Some(kind) = trigger {
                path.push_str(&format!("&trigger={kind}"));
            }
            let (_, page): (_, Value) = self
                .json(Method::GET, &path, None, &[])
                .await
                .map_err(|e| RunLogError::new(Remote(format!("{e:#}"))))?;
            serde_json::from_value(page["runs"].clone()).map_err(RunLogError::new)
        })
    }

    fn get<'a>(&'a self, run_id: &'a str) -> LogFuture<'a, Option<RunRecord>> {
        Box::pin(async move {
            let path = format!("/v1/runs/{}?outputs=true", encode(run_id));
            let resp = self
                .send(Method::GET, &path, None, &[])
                .await
                .map_err(|e| RunLogError::new(Remote(format!("{e:#}"))))?;
            let status = resp.status();
            let text = resp
                .text()
                .await
                .map_err(|e| RunLogError::new(Remote(e.to_string())))?;
            match status {
                StatusCode::NOT_FOUND => Ok(None),
                s if s.is_success() => serde_json::from_str(&text)
                    .map(Some)
                    .map_err(RunLogError::new),
                s => Err(RunLogError::new(self.error(s, &text))),
            }
        })
    }
}

/// A failure reaching the server, as a `RunLog` error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Remote(String);

/// A path segment, percent-encoded.
pub fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
