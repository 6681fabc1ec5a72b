//! `dragnet serve` as a process, driven by the binary's own client
//! commands: teams and tokens made on the store, a workflow pushed with its
//! document, a run triggered and followed to its summary, runs read over
//! HTTP, a bad token refused without the token in the output, and SIGTERM
//! stopping the server cleanly.

mod common;

use std::process::{Child, Stdio};
use std::time::Duration;

use common::{acme_token, client, command, fresh_db, scratch, shop, spawn_serve, stderr, stdout};

/// Sends SIGTERM to `pid`.
fn sigterm(pid: u32) {
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// Waits up to `tries` × 50 ms for `child` to exit; kills it and fails,
/// saying `what`, when it does not.
async fn exit_of(child: &mut Child, tries: usize, what: &str) -> std::process::ExitStatus {
    for _ in 0..tries {
        if let Some(s) = child.try_wait().expect("the child's status") {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    panic!("{what}");
}

/// `dragnet serve` on a free port, logging at debug level into `log`;
/// returns the child and its address.
fn serve_logging(db: &str, log: &std::path::Path) -> (Child, String) {
    let mut serve = command(db);
    serve
        .env("DRAGNET_LOG", "debug")
        .stderr(std::fs::File::create(log).expect("a log file"));
    spawn_serve(serve)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pushed_workflow_runs_on_the_server_and_sigterm_stops_it() {
    let shop = shop().await;
    let db = fresh_db();
    let token = acme_token(&db);

    // The workflow and its document in a folder of their own.
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(common::example("nightly-open-orders.workflow.yaml"))
        .unwrap()
        .replace("http://127.0.0.1:8080", shop.base_url());
    std::fs::write(dir.join("nightly.yaml"), text).unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    let file = dir.join("nightly.yaml").display().to_string();

    let log = scratch("log");
    let (mut server, addr) = serve_logging(&db, &log);
    let client = |args: &[&str]| {
        let mut c = command(&db);
        c.args(args)
            .env("DRAGNET_SERVER", &addr)
            .env("DRAGNET_TOKEN", &token);
        c
    };
    let pushed = client(&["workflows", "push", &file]).output().unwrap();
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    assert!(
        stdout(&pushed).contains("stored as version 1"),
        "{}",
        stdout(&pushed)
    );
    let again = client(&["workflows", "push", &file]).output().unwrap();
    assert!(
        stdout(&again).contains("unchanged at version 1"),
        "{}",
        stdout(&again)
    );

    let run = client(&[
        "trigger",
        "nightly-open-orders",
        "--input",
        "min_total=900",
        "--follow",
    ])
    .output()
    .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let summary = stdout(&run);
    assert!(
        summary.contains("Succeeded") && summary.contains("open_orders"),
        "{summary}"
    );
    assert!(
        stderr(&run).contains("open_orders: succeeded"),
        "{}",
        stderr(&run)
    );

    let listed = client(&["runs", "list", "--json"]).output().unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(rows[0]["workflow"], "nightly-open-orders", "{rows}");
    let id = rows[0]["run_id"].as_str().unwrap().to_string();
    let shown = client(&["runs", "show", &id, "--json"]).output().unwrap();
    let record: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(record["status"], "succeeded");
    assert!(
        record["steps"][1]["output"]["_loop"]["complete"] == true,
        "{record}"
    );

    let refused = command(&db)
        .args([
            "runs",
            "list",
            "--server",
            &addr,
            "--token",
            "dnt_wrong-secret",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let said = stderr(&refused);
    assert!(
        said.contains("401") && !said.contains("dnt_wrong-secret"),
        "{said}"
    );

    // SIGTERM: the server stops taking work and exits cleanly.
    sigterm(server.id());
    let status = exit_of(&mut server, 200, "the server did not stop on SIGTERM").await;
    assert!(status.success(), "{status:?}");
    // Debug logs of the whole session name no token, good or bad.
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("request"), "the log is empty: {logged}");
    assert!(
        !logged.contains(&token) && !logged.contains("dnt_wrong-secret"),
        "{logged}"
    );
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_dir_all(&dir);
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_exported_to_an_otlp_collector() {
    use std::sync::{Arc, Mutex};
    // A collector that keeps what it is sent.
    /// What the collector was sent: path, content type, body.
    type Received = Vec<(String, String, Vec<u8>)>;
    let got: Arc<Mutex<Received>> = Arc::default();
    let keep = got.clone();
    let app = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let keep = keep.clone();
            async move {
                let kind = headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                keep.lock()
                    .unwrap()
                    .push((uri.path().to_string(), kind, body.to_vec()));
                ""
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let db = fresh_db();
    let mut serve = command(&db);
    serve
        .env("DRAGNET_OTLP_ENDPOINT", &collector)
        .stderr(Stdio::null());
    let (mut child, addr) = spawn_serve(serve);
    let health = reqwest::get(format!("{addr}/healthz")).await.unwrap();
    assert!(health.status().is_success());
    sigterm(child.id());
    exit_of(&mut child, 200, "the server did not stop on SIGTERM").await;
    let got = got.lock().unwrap().clone();
    let traces: Vec<_> = got
        .iter()
        .filter(|(path, _, _)| path == "/v1/traces")
        .collect();
    assert!(
        !traces.is_empty(),
        "nothing reached the collector: {:?}",
        got.iter().map(|g| &g.0).collect::<Vec<_>>()
    );
    let (_, kind, body) = traces[0];
    assert_eq!(kind, "application/x-protobuf");
    let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    assert!(
        has(b"dragnet") && has(b"request") && has(b"/healthz"),
        "{body:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_exits_at_once_while_runs_still_have_their_grace() {
    let shop = shop().await;
    let db = fresh_db();
    command(&db)
        .args(["teams", "create", "acme"])
        .output()
        .unwrap();
    let token = command(&db)
        .args(["tokens", "create", "--team", "acme"])
        .output()
        .unwrap();
    let token = stdout(&token).trim().to_string();
    let dir = scratch("wf");
    std::fs::create_dir_all(&dir).unwrap();
    // A walk of many slow pages: it is still going when the signals come.
    let yaml = format!(
        "name: slow
providers:
  shop:
    openapi: openapi.yaml
    base_url: {}
    headers:
      X-Shop-Fault: \"latency=500\"
steps:
  - id: orders
    tool: shop.listOrders
    loop: {{ all_pages: true, fields: [id] }}
",
        shop.base_url()
    );
    std::fs::write(dir.join("slow.yaml"), yaml).unwrap();
    std::fs::copy(dragnet_shop::openapi_path(), dir.join("openapi.yaml")).unwrap();
    let mut serve = command(&db);
    serve.stderr(Stdio::null());
    let (mut server, addr) = spawn_serve(serve);
    let client = client(&db, &addr, &token);
    let file = dir.join("slow.yaml").display().to_string();
    assert!(client(&["workflows", "push", &file]).status.success());
    let started = client(&["trigger", "slow"]);
    assert!(started.status.success(), "{}", stderr(&started));
    tokio::time::sleep(Duration::from_millis(300)).await;
    sigterm(server.id());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        server.try_wait().unwrap().is_none(),
        "the running run keeps the server up within its grace"
    );
    sigterm(server.id());
    let status = exit_of(&mut server, 100, "a second signal did not exit the server").await;
    assert_eq!(status.code(), Some(130), "{status:?}");
    let _ = std::fs::remove_dir_all(&dir);
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_one_sqlite_store_is_refused_and_one_on_another_is_not() {
    let db = fresh_db();
    let (mut first, _addr) = spawn_serve(command(&db));
    let mut second = command(&db)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve runs");
    let status = exit_of(
        &mut second,
        200,
        "a second server started on the same SQLite store",
    )
    .await;
    let second = second.wait_with_output().expect("its output");
    assert_eq!(status.code(), Some(1), "{}", stderr(&second));
    let said = stderr(&second);
    assert!(
        said.contains("already running on the SQLite store"),
        "{said}"
    );
    assert!(said.contains("PostgreSQL"), "{said}");
    // Another file is another store.
    let (mut other, _) = spawn_serve(command(&fresh_db()));
    for child in [&mut first, &mut other] {
        let _ = child.kill();
        let _ = child.wait();
    }
    // Once the first has gone, the store can be served again.
    let (mut again, _) = spawn_serve(command(&db));
    let _ = again.kill();
    let _ = again.wait();
}
