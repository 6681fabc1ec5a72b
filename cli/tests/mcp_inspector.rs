//! The gateway driven by the MCP Inspector's command line
//! (`@modelcontextprotocol/inspector-cli`, pinned by `.ci/node.sh`), an
//! independent client, over stdio and streamable HTTP (issue 24): each of
//! server-everything's answers reaches the Inspector through a plain
//! binding exactly as it does straight from the server — text, an image,
//! resource links, structured content, annotations — and a cut answer's
//! `resource_link`, with its size and media type, reads as unknown in
//! another session.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::mcp_http::{gateway, token};
use common::{binary, fresh_db, scratch};
use serde_json::{json, Value};

fn node_modules() -> PathBuf {
    PathBuf::from(std::env::var("DRAGNET_NODE_MODULES").expect(
        "DRAGNET_NODE_MODULES names the pinned Node.js peers; `bash .ci/test` sets it \
         (or run `export DRAGNET_NODE_MODULES=$(bash .ci/node.sh)`)",
    ))
}

fn everything() -> PathBuf {
    node_modules().join("@modelcontextprotocol/server-everything/dist/index.js")
}

/// The tools called, with the Inspector's `--tool-arg` values.
const CALLS: &[(&str, &[&str])] = &[
    ("echo", &["message=hello"]),
    ("get-tiny-image", &[]),
    ("get-resource-links", &["count=2"]),
    ("get-structured-content", &["location=Chicago"]),
    (
        "get-annotated-message",
        &["messageType=error", "includeImage=true"],
    ),
];

/// agent.yaml: server-everything's tools bound without looping.
fn config() -> PathBuf {
    let path = scratch("yaml");
    let bindings: String = CALLS
        .iter()
        .map(|(t, _)| {
            format!("      - {{ tool_id: {t}, provider_id: everything, loop_responses: false }}\n")
        })
        .collect();
    let yaml = format!(
        "organisation: acme
token_secret_env: TEST_MCP_SECRET
size_budget_tokens: 3000
providers:
  everything:
    mcp:
      command: [node, {}, stdio]
agents:
  support:
    agentTools:
{bindings}",
        everything().display()
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Runs the Inspector: `target` first (a command, or a URL), then the
/// method's options, then `server_args` after `--` (the Inspector reads
/// flags placed after its variadic options as its own).
fn inspector(
    target: &[&str],
    options: &[&str],
    server_args: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let cli = node_modules().join("@modelcontextprotocol/inspector-cli/build/index.js");
    let mut command = Command::new("node");
    command
        .arg(cli)
        .args(target)
        .args(options)
        // It looks for its own package.json from the working directory.
        .current_dir(node_modules());
    if !server_args.is_empty() {
        command.arg("--").args(server_args);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("node runs the Inspector")
}

/// What the Inspector printed, as JSON; the run must have succeeded.
fn printed(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn call_options(tool: &str, args: &[&str]) -> Vec<String> {
    let mut options = vec![
        "--method".to_string(),
        "tools/call".into(),
        "--tool-name".into(),
        tool.into(),
    ];
    if !args.is_empty() {
        options.push("--tool-arg".into());
        options.extend(args.iter().map(|a| a.to_string()));
    }
    options
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Each tool's answer straight from server-everything.
fn straight() -> Vec<Value> {
    let server = everything().display().to_string();
    CALLS
        .iter()
        .map(|(tool, args)| {
            let options = call_options(tool, args);
            printed(&inspector(
                &["node"],
                &strs(&options),
                &[&server, "stdio"],
                &[],
            ))
        })
        .collect()
}

#[test]
fn over_stdio_every_answer_reaches_the_inspector_as_the_server_said_it() {
    let expected = straight();
    let config = config();
    let config_arg = config.display().to_string();
    let dragnet = binary().display().to_string();
    let db = fresh_db();
    let server_args = [
        "mcp",
        "--config",
        &config_arg,
        "--agent",
        "support",
        "--stdio",
    ];
    let env = [("DATABASE_URL", db.as_str()), ("DRAGNET_LOG", "warn")];
    for ((tool, args), expected) in CALLS.iter().zip(&expected) {
        let options = call_options(tool, args);
        let through = printed(&inspector(&[&dragnet], &strs(&options), &server_args, &env));
        assert_eq!(&through, expected, "{tool}");
    }
    assert_eq!(
        expected[0],
        json!({"content": [{"type": "text", "text": "Echo: hello"}]})
    );
    let _ = std::fs::remove_file(&config);
}

#[test]
fn over_http_answers_pass_and_a_cut_answer_is_linked_for_its_session_alone() {
    let expected = straight();
    let config = config();
    let gw = gateway(&config, &fresh_db());
    let authorization = format!("Authorization: Bearer {}", token("acme", "ada", "support"));
    let run = |thread: &str, options: &[&str]| {
        let thread = format!("X-Dragnet-Thread: {thread}");
        let mut all = vec![
            "--transport",
            "http",
            "--header",
            &authorization,
            "--header",
            &thread,
        ];
        all.extend(options);
        inspector(&[&gw.url], &all, &[], &[])
    };
    for ((tool, args), expected) in CALLS.iter().zip(&expected) {
        let options = call_options(tool, args);
        let through = printed(&run("t1", &strs(&options)));
        assert_eq!(&through, expected, "{tool}");
    }
    // The results' template is listed.
    let templates = printed(&run("t1", &["--method", "resources/templates/list"]));
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"], "dragnet://results/{resultId}",
        "{templates}"
    );
    // Over the budget: cut, stored, and linked.
    let long = format!("message={}", "y".repeat(20_000));
    let options = call_options("echo", &[&long]);
    let cut = printed(&run("t1", &strs(&options)));
    let link = cut["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no link in {cut}"))
        .clone();
    assert_eq!(link["mimeType"], "text/plain", "{link}");
    assert_eq!(link["size"], "Echo: ".len() + 20_000, "{link}");
    // Each run of the Inspector is a session of its own, and a session is
    // a thread: the next run, even presenting the same thread id, does
    // not see it (the Python client reads it in its own session, in
    // tests/mcp_content.rs).
    let uri = link["uri"].as_str().unwrap();
    let elsewhere = run("t1", &["--method", "resources/read", "--uri", uri]);
    assert!(!elsewhere.status.success());
    let refused = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(refused.contains("no stored result"), "{refused}");
    let _ = std::fs::remove_file(&config);
    drop(gw);
}
