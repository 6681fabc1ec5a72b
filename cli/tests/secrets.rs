//! Secrets never leave the process, even when the upstream echoes them:
//! `dragnet call` and `dragnet run` against a server that copies every
//! request header into its rows and its error bodies; stdout, stderr (with
//! debug logging on), the run records and the database file are searched
//! for every credential, configured header value and the base64 form of
//! basic credentials.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

const TOKEN: &str = "tok-SECRET-93be1f";
const PASSWORD: &str = "pw-SECRET-1c77d0";
const HEADER_VALUE: &str = "hdr-SECRET-e4a5b6";

const DOC: &str = r#"{"openapi":"3.0.3","info":{"title":"echo","version":"1"},"paths":{
  "/items":{"get":{"operationId":"items","parameters":[
    {"name":"page","in":"query","schema":{"type":"integer","minimum":1}},
    {"name":"per_page","in":"query","schema":{"type":"integer","maximum":10}}],
    "responses":{"200":{"description":"ok"}}}},
  "/fail":{"get":{"operationId":"fail","responses":{"200":{"description":"ok"}}}}}}"#;

fn echoed(headers: &HeaderMap) -> Value {
    headers
        .iter()
        .map(|(k, v)| (k.to_string(), json!(String::from_utf8_lossy(v.as_bytes()))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

async fn echo_server() -> String {
    let app = Router::new()
        .route(
            "/items",
            get(|h: HeaderMap| async move {
                Json(json!({"data": [{"id": 1, "seen": echoed(&h)}], "total": 1}))
            }),
        )
        .route(
            "/fail",
            get(|h: HeaderMap| async move {
                let body = Json(json!({"error": "denied", "seen": echoed(&h)}));
                (StatusCode::BAD_REQUEST, body)
            }),
        );
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dragnet-secrets-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("echo.json"), DOC).unwrap();
    dir
}

fn dragnet(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .current_dir(dir)
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.join("d.db").display()),
        )
        .env("RUST_LOG", "debug")
        .env("DRAGNET_LOG", "debug")
        .env("ECHO_TOKEN", TOKEN)
        .env("ECHO_USER", "ada")
        .env("ECHO_PASSWORD", PASSWORD)
        .env_remove("DRAGNET_CONFIG")
        .output()
        .expect("the binary runs")
}

fn secrets() -> Vec<String> {
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("ada:{PASSWORD}"));
    vec![TOKEN.into(), PASSWORD.into(), HEADER_VALUE.into(), basic]
}

fn assert_clean(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    for secret in secrets() {
        assert!(
            !text.contains(&secret),
            "{what} carries `{secret}`:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_never_prints_an_echoed_secret() {
    let base = echo_server().await;
    let dir = scratch();
    for credentials in ["bearer:ECHO_TOKEN", "basic:ECHO_USER:ECHO_PASSWORD"] {
        for (tool, json_flag) in [
            ("items", "--json"),
            ("items", "--all-pages"),
            ("fail", "--json"),
        ] {
            let header = format!("X-Extra: {HEADER_VALUE}");
            let o = dragnet(
                &dir,
                &[
                    "call",
                    "--spec",
                    "echo.json",
                    "--base-url",
                    &base,
                    tool,
                    json_flag,
                    "--credentials",
                    credentials,
                    "--header",
                    &header,
                ],
            );
            assert_clean(&o.stdout, "stdout");
            assert_clean(&o.stderr, "stderr");
            if tool == "items" {
                assert!(
                    String::from_utf8_lossy(&o.stdout).contains("[redacted]"),
                    "the echo is there, redacted: {}",
                    String::from_utf8_lossy(&o.stdout)
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_store_no_echoed_secret() {
    let base = echo_server().await;
    let dir = scratch();
    let workflow = format!(
        r#"name: echo
providers:
  echo:
    openapi: echo.json
    base_url: {base}
    credentials: {{ type: basic, username_env: ECHO_USER, password_env: ECHO_PASSWORD }}
    headers: {{ X-Extra: {HEADER_VALUE} }}
steps:
  - id: items
    tool: echo.items
    loop: {{ all_pages: true, cache: {{ ttl_minutes: 5 }} }}
  - id: fail
    tool: echo.fail
"#
    );
    std::fs::write(dir.join("echo.workflow.yaml"), workflow).unwrap();
    let o = dragnet(&dir, &["run", "echo.workflow.yaml", "--json"]);
    assert_clean(&o.stdout, "run stdout");
    assert_clean(&o.stderr, "run stderr");
    assert!(String::from_utf8_lossy(&o.stdout).contains("[redacted]"));
    let shown = dragnet(&dir, &["runs", "list", "--json"]);
    assert_clean(&shown.stdout, "runs list");
    let runs: Value = serde_json::from_slice(&shown.stdout).unwrap_or(Value::Null);
    let id = runs
        .as_array()
        .and_then(|r| r.first())
        .and_then(|r| r["run_id"].as_str().or(r["id"].as_str()))
        .unwrap_or_else(|| panic!("runs list names the run: {runs}"))
        .to_string();
    let show = dragnet(&dir, &["runs", "show", &id, "--json"]);
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    assert!(String::from_utf8_lossy(&show.stdout).contains("[redacted]"));
    assert_clean(&show.stdout, "runs show");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains("d.db") {
            assert_clean(&std::fs::read(&path).unwrap(), &path.display().to_string());
        }
    }
}
