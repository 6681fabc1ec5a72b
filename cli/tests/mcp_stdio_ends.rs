//! `dragnet mcp --stdio` over each kind of stdin and stdout a client can
//! give it: pipes (how Python's `subprocess` starts a server), one Unix
//! socket for both (how Node.js does), and a regular file on one side,
//! which the event loop cannot wait on, so the gateway falls back to
//! tokio's blocking-pool stdio (`gateway/src/mcp/stdio.rs`). Each session
//! is raw JSON-RPC, one message a line: `initialize`, `tools/list` and a
//! call of the embedded shop's `listOrders`. And, since the gateway serves
//! stdio on one thread, a call that waits on its upstream does not hold
//! up the requests after it.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{fresh_db, scratch};
use serde_json::{json, Value};

fn config() -> std::path::PathBuf {
    config_with_headers("{}")
}

/// The config with the provider's `headers:` (a YAML flow map).
fn config_with_headers(headers: &str) -> std::path::PathBuf {
    let config = scratch("yaml");
    let doc = dragnet_shop::openapi_path();
    std::fs::write(
        &config,
        format!(
            "organisation: demo
providers:
  shop:
    openapi: {}
    base_url: embedded
    headers: {headers}
agents:
  analyst:
    agentTools:
      - {{ tool_id: listOrders, provider_id: shop, loop_responses: true }}
",
            doc.display()
        ),
    )
    .unwrap();
    config
}

fn gateway(config: &std::path::Path) -> std::process::Command {
    let mut command = common::command(&fresh_db());
    command
        .args(["mcp", "--config"])
        .arg(config)
        .args(["--agent", "analyst", "--stdio"])
        .stderr(Stdio::piped());
    command
}

/// A session's first two messages.
fn opening() -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ends-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

/// The gateway with pipes for stdin and stdout, as Python starts it.
fn over_pipes(config: &std::path::Path) -> Child {
    gateway(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The requests of a session, one a line.
fn requests() -> Vec<Value> {
    let [initialize, initialized] = opening();
    vec![
        initialize,
        initialized,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "listOrders", "arguments": {"per_page": 2}}}),
    ]
}

fn send_all(to: &mut impl Write) {
    for r in requests() {
        writeln!(to, "{r}").unwrap();
    }
    to.flush().unwrap();
}

/// Reads answers from `from` until the one with id 3.
fn answers(from: impl Read) -> Vec<Value> {
    let mut seen = Vec::new();
    for line in BufReader::new(from).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let last = message["id"] == 3;
        seen.push(message);
        if last {
            break;
        }
    }
    seen
}

/// The answers hold the server's name, the tool and one call's rows.
fn check(seen: &[Value], child: Child) {
    let out = child.wait_with_output().unwrap();
    let stderr = common::stderr(&out);
    let by_id = |id: u64| {
        seen.iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id} in {seen:?}\n{stderr}"))
    };
    assert!(
        by_id(1)["result"]["serverInfo"]["name"].is_string(),
        "{seen:?}"
    );
    let tools = by_id(2)["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "listOrders"), "{tools:?}");
    let call = &by_id(3)["result"];
    assert_ne!(call["isError"], true, "{call}");
    let text = call["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"id\""), "{text}");
}

#[test]
fn pipes_on_both_ends() {
    let config = config();
    let mut child = over_pipes(&config);
    let mut stdin = child.stdin.take().unwrap();
    send_all(&mut stdin);
    let seen = answers(child.stdout.take().unwrap());
    drop(stdin);
    check(&seen, child);
}

#[test]
fn one_unix_socket_for_both_ends() {
    let config = config();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let input = OwnedFd::from(theirs.try_clone().unwrap());
    let output = OwnedFd::from(theirs);
    let child = gateway(&config)
        .stdin(Stdio::from(input))
        .stdout(Stdio::from(output))
        .spawn()
        .unwrap();
    send_all(&mut &ours);
    let seen = answers(&ours);
    ours.shutdown(std::net::Shutdown::Both).unwrap();
    check(&seen, child);
}

#[test]
fn a_regular_file_for_stdout_falls_back_to_blocking_stdio() {
    let config = config();
    let written = scratch("jsonl");
    let file = std::fs::File::create(&written).unwrap();
    let mut child = gateway(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(file))
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    send_all(&mut stdin);
    // The file has no reader to wait on: poll it until the call's answer.
    let started = Instant::now();
    let seen = loop {
        let text = std::fs::read_to_string(&written).unwrap_or_default();
        if text.lines().any(|l| l.contains("\"id\":3")) {
            break answers(text.as_bytes());
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no answer to the call in 60 s: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    check(&seen, child);
    let _ = std::fs::remove_file(&written);
}

#[test]
fn a_call_waiting_on_its_upstream_does_not_hold_up_the_next_request() {
    // Every shop answer waits 500 ms; `ping` needs no upstream at all.
    let config = config_with_headers(r#"{ X-Shop-Fault: "latency=500" }"#);
    let mut child = over_pipes(&config);
    let mut stdin = child.stdin.take().unwrap();
    let [initialize, initialized] = opening();
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "listOrders", "arguments": {"per_page": 2}}});
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    for message in [initialize, initialized, call, ping] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut order = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(id) = message["id"].as_u64() {
            assert!(message.get("error").is_none(), "{message}");
            order.push(id);
        }
        if order.len() == 3 {
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        order,
        vec![1, 4, 3],
        "the ping sent after the call is answered first\n{}",
        common::stderr(&out)
    );
}
