//! The gateway driven by the MCP Inspector's command line
//! (`@modelcontextprotocol/inspector-cli`, pinned by `.ci/node.sh`), an
//! independent client, over stdio and streamable HTTP (issue 24): the
//! answers of server-everything (from npm) and of the tests' Python
//! upstream reach the Inspector through a plain binding exactly as they do
//! straight from the server — text, an image, audio, resource links,
//! embedded text and blob resources, structured content, annotations and
//! `_meta` — and a cut answer's
//! `resource_link`, with its size and media type, reads as unknown in
//! another session.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::mcp_http::{gateway, token};
use common::{binary, fresh_db, python, scratch};
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

/// The tools called (of server-everything, else of the Python upstream),
/// with the Inspector's `--tool-arg` values. (server-everything's embedded
/// resources carry the time they were made, so two calls never answer
/// alike: the Python upstream's `media` brings embedded resources.)
const CALLS: &[(&str, &[&str])] = &[
    ("echo", &["message=hello"]),
    ("get-tiny-image", &[]),
    ("get-resource-links", &["count=2"]),
    ("get-structured-content", &["location=Chicago"]),
    (
        "get-annotated-message",
        &["messageType=error", "includeImage=true"],
    ),
    ("media", &["id=7"]),
];

/// The tests' Python upstream and the file it records calls in.
fn tickets() -> [String; 2] {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/upstream_server.py");
    [
        script.display().to_string(),
        scratch("jsonl").display().to_string(),
    ]
}

/// Whose tool `tool` is.
fn provider_of(tool: &str) -> &'static str {
    match tool {
        "media" => "tickets",
        _ => "everything",
    }
}

/// agent.yaml: both servers' tools bound without looping.
fn config() -> PathBuf {
    let path = scratch("yaml");
    let bindings: String = CALLS
        .iter()
        .map(|(t, _)| {
            let provider = provider_of(t);
            format!("      - {{ tool_id: {t}, provider_id: {provider}, loop_responses: false }}\n")
        })
        .collect();
    let [script, record] = tickets();
    let yaml = format!(
        "organisation: acme
token_secret_env: TEST_MCP_SECRET
size_budget_tokens: 3000
providers:
  everything:
    mcp:
      command: [node, {}, stdio]
  tickets:
    mcp:
      command: [{}, {script}, {record}]
agents:
  support:
    agentTools:
{bindings}",
        everything().display(),
        python(),
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

/// Each tool's answer straight from its server.
fn straight() -> Vec<Value> {
    let everything = everything().display().to_string();
    let [script, record] = tickets();
    let python = python();
    CALLS
        .iter()
        .map(|(tool, args)| {
            let options = call_options(tool, args);
            let options = strs(&options);
            let answer = match provider_of(tool) {
                "tickets" => inspector(&[&python], &options, &[&script, &record], &[]),
                _ => inspector(&["node"], &options, &[&everything, "stdio"], &[]),
            };
            printed(&answer)
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
