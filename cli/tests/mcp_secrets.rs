//! What an upstream MCP server (third-party code) can see and say:
//! `dragnet mcp --stdio` starts its child with the small default
//! environment plus only the variables its provider names, and scrubs
//! every secret the process holds (the token secret, the connections key,
//! the providers' credentials, the variables read for the child) from
//! whatever the child answers — as text or structured content — before it
//! reaches the agent, the stored results, the cache or the logs. Plain
//! calls always go upstream; walks are cached. The upstream is
//! `tests/mcp/env_server.py` (the Python SDK), the client the Python `mcp`
//! package.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{binary, fresh_db, python, scratch};
use serde_json::{json, Value};

/// Secrets the gateway process holds, each long enough to be searched for.
const TOKEN_SECRET: &str = "tok-secret-3b1f9a7c5e2d4f608a1b3c5d7e9f0a2b";
const CONNECTIONS_KEY: &str = "conn-key-8d6c4b2a0f1e3d5c7b9a8f6e4d2c0b1a";
const SHOP_TOKEN: &str = "shop-org-token-51c7e3a9";
const FILES_KEY: &str = "files-api-key-a4e8c2f6";
/// A variable of the gateway no provider names.
const UNNAMED: &str = "unnamed-value-9f3e7d1b";

fn secrets() -> [&'static str; 4] {
    [TOKEN_SECRET, CONNECTIONS_KEY, SHOP_TOKEN, FILES_KEY]
}

fn script(name: &str) -> String {
    format!("{}/tests/mcp/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A configuration with the shop (organisation credentials from
/// `TEST_SHOP_TOKEN`) and the env server as `files`, which names
/// `FILES_API_KEY` (read from `key_var`) and a literal `FILES_MODE`.
fn config(record: &Path, key_var: &str) -> PathBuf {
    let path = scratch("yaml");
    let command = json!([
        python(),
        script("env_server.py"),
        record.display().to_string()
    ]);
    std::fs::write(
        &path,
        format!(
            "organisation: acme
providers:
  shop:
    openapi: {spec}
    base_url: embedded
    credentials: {{ type: bearer, env: TEST_SHOP_TOKEN }}
  files:
    mcp:
      command: {command}
      env: {{ FILES_API_KEY: {{ env: {key_var} }}, FILES_MODE: read-only }}
agents:
  support:
    agentTools:
      - {{ tool_id: get_env, provider_id: files, loop_responses: true }}
      - {{ tool_id: read_file, provider_id: files, loop_responses: true }}
      - {{ tool_id: list_lines, provider_id: files, loop_responses: true }}
",
            spec = common::spec(),
        ),
    )
    .unwrap();
    path
}

/// The gateway's environment: every secret above, and the log at its
/// most talkative so the test sees whatever it would write.
fn gateway_env() -> Value {
    json!({
        "DATABASE_URL": fresh_db(),
        "DRAGNET_LOG": "debug",
        "DRAGNET_MCP_TOKEN_SECRET": TOKEN_SECRET,
        "DRAGNET_CONNECTIONS_KEY": CONNECTIONS_KEY,
        "TEST_SHOP_TOKEN": SHOP_TOKEN,
        "TEST_FILES_KEY": FILES_KEY,
        "TEST_UNNAMED": UNNAMED,
    })
}

/// Runs `steps` with the Python client against `dragnet mcp --stdio` in
/// `mode`: what each step saw, and everything written to stderr (the
/// gateway's logs included).
fn run(config: &Path, mode: &str, steps: Value) -> (Vec<Value>, String) {
    let plan = json!({
        "stdio": {
            "command": binary().display().to_string(),
            "args": ["mcp", "--config", config.display().to_string(), "--agent", "support", "--stdio"],
            "env": gateway_env(),
        },
        "mode": mode,
        "steps": steps,
    });
    let out = Command::new(python())
        .arg(script("plan_client.py"))
        .arg(plan.to_string())
        .output()
        .expect("the MCP tests need the Python `mcp` package that `bash .ci/test` installs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the client failed:\n{stderr}");
    let seen = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    (seen, stderr)
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in secrets() {
        assert!(!text.contains(secret), "{what} holds `{secret}`:\n{text}");
    }
}

/// The calls that reached the upstream, by tool.
fn calls_of(record: &Path, tool: &str) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).unwrap()["tool"] == tool)
        .count()
}

#[test]
fn an_upstream_child_gets_only_the_default_and_named_environment_and_no_secret_gets_out() {
    let record = scratch("jsonl");
    let data = scratch("txt");
    // A file holding every secret: what a server that reads the wrong file
    // (or echoes what it was sent) would answer.
    std::fs::write(&data, secrets().join("\n") + "\n" + UNNAMED + "\n").unwrap();
    let config = config(&record, "TEST_FILES_KEY");
    let path = data.display().to_string();
    let (seen, stderr) = run(
        &config,
        "legacy",
        json!([
            {"call": "get_env", "args": {}},
            {"call": "read_file", "args": {"path": path}},
            {"call": "read_file", "args": {"path": path, "structured": true}},
            {"call": "list_lines", "args": {"path": path, "_all_pages": true}},
            {"call": "queryToolResult", "args": {}, "args_from": {"resultId": [3, "_resultId"]}},
            {"call": "list_lines", "args": {"path": path, "_all_pages": true}},
        ]),
    );
    for (i, step) in seen.iter().enumerate() {
        assert_eq!(step["error"], false, "step {i}: {step}");
        assert_no_secret(&format!("answer {i}"), &step["text"].to_string());
    }

    // The child's environment: the defaults, the named variable (its value
    // read from the gateway's environment, a secret, so scrubbed on the
    // way back) and the literal; nothing else of the gateway's.
    let env = seen[0]["json"]["env"]
        .as_object()
        .unwrap_or_else(|| panic!("{}", seen[0]));
    assert_eq!(env["FILES_API_KEY"], "[redacted]", "{env:?}");
    assert_eq!(env["FILES_MODE"], "read-only", "{env:?}");
    assert!(env.contains_key("PATH"), "the default environment: {env:?}");
    for var in [
        "TEST_UNNAMED",
        "TEST_FILES_KEY",
        "TEST_SHOP_TOKEN",
        "DRAGNET_MCP_TOKEN_SECRET",
        "DRAGNET_CONNECTIONS_KEY",
        "DATABASE_URL",
    ] {
        assert!(!env.contains_key(var), "`{var}` reached the child: {env:?}");
    }

    // Prose and structured answers alike lose every secret the process
    // holds, while what is not secret stays.
    for step in [&seen[1], &seen[2]] {
        let text = step["text"].as_str().unwrap();
        assert_eq!(text.matches("[redacted]").count(), 4, "{text}");
        assert!(
            text.contains(UNNAMED),
            "not a secret of the gateway's: {text}"
        );
    }
    assert_eq!(seen[2]["json"]["path"], path.as_str(), "{}", seen[2]);

    // The walk, what was stored of it (read back through the store) and
    // the cached copy served the second time.
    assert_eq!(seen[3]["json"]["_pagingComplete"], true, "{}", seen[3]);
    let stored = &seen[4]["json"];
    let rows = stored["items"]
        .as_array()
        .or_else(|| stored["rows"].as_array())
        .unwrap_or_else(|| panic!("no rows in {stored}"));
    assert_eq!(rows.len(), 5, "{stored}");
    assert_eq!(rows[0]["line"], "[redacted]", "{stored}");
    assert_eq!(seen[5]["json"]["_cache"]["hit"], true, "{}", seen[5]);
    assert_eq!(
        calls_of(&record, "list_lines"),
        1,
        "the second walk was a hit"
    );

    // Nor do the logs hold one: the child's own stderr is relayed into
    // them scrubbed.
    assert_no_secret("stderr", &stderr);
    assert!(
        stderr.contains("env server starting: key [redacted], mode read-only"),
        "{stderr}"
    );
    for p in [&config, &record, &data] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn a_missing_variable_a_child_needs_stops_the_start_naming_it() {
    let record = scratch("jsonl");
    let config = config(&record, "TEST_FILES_KEY_NOT_SET");
    let out = common::command(&fresh_db())
        .args(["mcp", "--config"])
        .arg(&config)
        .args(["--agent", "support", "--stdio"])
        .env("TEST_SHOP_TOKEN", SHOP_TOKEN)
        .env_remove("TEST_FILES_KEY_NOT_SET")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = common::stderr(&out);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("TEST_FILES_KEY_NOT_SET") && stderr.contains("`files`"),
        "{stderr}"
    );
    assert_eq!(calls_of(&record, "get_env"), 0);
    let _ = std::fs::remove_file(&config);
}

#[test]
fn a_plain_call_goes_upstream_every_time_and_a_walk_is_served_from_the_cache() {
    let record = scratch("jsonl");
    let data = scratch("txt");
    std::fs::write(&data, "first version\n").unwrap();
    let config = config(&record, "TEST_FILES_KEY");
    let path = data.display().to_string();
    let (seen, _) = run(
        &config,
        "legacy",
        json!([
            {"call": "read_file", "args": {"path": path}},
            {"call": "list_lines", "args": {"path": path, "_all_pages": true}},
            {"write": path, "text": "second version\n"},
            {"call": "read_file", "args": {"path": path}},
            {"call": "list_lines", "args": {"path": path, "_all_pages": true}},
        ]),
    );
    for i in [0, 1, 3, 4] {
        assert_eq!(seen[i]["error"], false, "step {i}: {}", seen[i]);
    }
    // A plain call: the file as it is now, never a cached copy.
    assert!(
        seen[0]["text"].as_str().unwrap().contains("first version"),
        "{}",
        seen[0]
    );
    let again = seen[3]["text"].as_str().unwrap();
    assert!(again.contains("second version"), "{again}");
    assert!(!again.contains("_cache"), "{again}");
    assert!(!again.contains("served from the cache"), "{again}");
    assert_eq!(calls_of(&record, "read_file"), 2);
    // A walk: complete, cached, served from the cache the second time.
    assert_eq!(seen[1]["json"]["_pagingComplete"], true, "{}", seen[1]);
    assert_eq!(seen[4]["json"]["_cache"]["hit"], true, "{}", seen[4]);
    assert_eq!(seen[4]["json"]["lines"][0]["line"], "first version");
    assert_eq!(calls_of(&record, "list_lines"), 1);
    for p in [&config, &record, &data] {
        let _ = std::fs::remove_file(p);
    }
}
