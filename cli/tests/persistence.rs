//! Run records survive the process being killed mid-run: the steps that
//! finished keep their records and the run shows as interrupted.

use std::net::SocketAddr;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn dragnet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn show(db: &str, run_id: &str) -> Value {
    let o = dragnet(&["runs", "show", run_id, "--json", "--database-url", db]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_run_shows_as_interrupted_with_what_finished() {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let dir = std::env::temp_dir().join(format!(
        "dragnet-kill-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let wf = dir.join("slow.workflow.yaml");
    std::fs::write(
        &wf,
        format!(
            "name: slow
providers:
  shop:
    openapi: {}
    base_url: http://127.0.0.1:9
    headers: {{X-Shop-Fault: \"slow=1:60000\"}}
steps:
  - id: quick
    tool: shop.getOrder
    input: {{order_id: 1}}
  - id: slow
    tool: shop.listOrders
    needs: [quick]
    loop: {{all_pages: true}}
",
            dragnet_shop::openapi_path().display()
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.join("runs.db").display());
    let base = format!("shop={}", shop.base_url());
    let wf_path = wf.display().to_string();
    let db2 = db.clone();
    let (run_id, killed) = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dragnet"))
            .args(["run", &wf_path, "--base-url", &base, "--database-url", &db2])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let run_id = loop {
            assert!(
                Instant::now() < deadline,
                "the run never recorded its first step"
            );
            std::thread::sleep(Duration::from_millis(100));
            let o = dragnet(&["runs", "list", "--json", "--database-url", &db2]);
            let Ok(list) = serde_json::from_slice::<Value>(&o.stdout) else {
                continue;
            };
            let Some(id) = list
                .get(0)
                .and_then(|r| r["run_id"].as_str())
                .map(str::to_string)
            else {
                continue;
            };
            let run = show(&db2, &id);
            if run["steps"][0]["status"] == "succeeded" && run["steps"][1]["status"] == "running" {
                break id;
            }
        };
        child.kill().unwrap();
        let status = child.wait().unwrap();
        (run_id, !status.success())
    })
    .await
    .unwrap();
    assert!(killed);
    let run = show(&db, &run_id);
    assert_eq!(run["status"], "interrupted", "{run:#}");
    assert_eq!(run["steps"][0]["id"], "quick");
    assert_eq!(run["steps"][0]["status"], "succeeded");
    assert!(
        run["steps"][0]["output"]["id"] == 1,
        "the finished step's output is kept"
    );
    assert_eq!(run["steps"][1]["status"], "interrupted");
    shop.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
