//! MCP tools in workflows (issue 23): a provider may be an upstream MCP
//! server, written as in `agent.yaml`. The upstream is the Python SDK's
//! server of `tests/mcp/upstream_server.py` (a paged tool, a prose tool, a
//! tool that always answers a tool error) and a real one from npm
//! (`@modelcontextprotocol/server-everything`, pinned by `.ci/node.sh`).
//! Runs go through `dragnet run` (the file's `mcp.command` started for the
//! run and stopped after it) and through `dragnet serve`, where a pushed
//! workflow may not start a program and names a server the operator
//! declared instead.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use common::{
    acme_token, client, command, fresh_db, python, recorded, scratch, serve_with, stderr, stdout,
    Served,
};
use serde_json::{json, Value};

fn script(name: &str) -> String {
    format!("{}/tests/mcp/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The steps every workflow of these tests runs against the tickets
/// server: a walk of a paged tool, a plain call, a failing tool, a tool
/// the server does not have, and a walk of a tool that cannot be walked.
const STEPS: &str = "steps:
  - id: open_tickets
    tool: tickets.list_tickets
    input: {status: open, per_page: 50}
    loop: {all_pages: true, fields: [id, subject]}
  - id: note
    tool: tickets.ticket_note
    input: {id: 7}
  - id: close
    tool: tickets.close_ticket
    input: {id: 7}
  - id: missing
    tool: tickets.reopen_ticket
  - id: walked_prose
    tool: tickets.ticket_note
    input: {id: 8}
    loop: {all_pages: true}
  - id: gate
    type: branch
    if: {ref: $.steps.open_tickets._loop.complete}
    then: [count]
  - id: count
    tool: tickets.ticket_note
    input: {id: {ref: $.steps.open_tickets._loop.itemCount}}
";

/// A workflow file whose provider `tickets` is `provider` (YAML, indented
/// by four spaces).
fn workflow(provider: &str) -> String {
    format!("name: tickets-report\nproviders:\n  tickets:\n{provider}{STEPS}")
}

/// The provider block of the tickets server started as a child: the same
/// text goes into a workflow and into agent.yaml.
fn child_provider(record: &Path) -> String {
    format!(
        "    mcp:\n      command: [{}, {}, {}]\n      env:\n        TICKETS_MODE: {{env: TICKETS_MODE_SOURCE}}\n",
        python(),
        script("upstream_server.py"),
        record.display()
    )
}

/// Checks a finished run record of [`STEPS`].
fn check_record(record: &Value) {
    let step = |id: &str| {
        record["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("no step {id} in {record}"))
            .clone()
    };
    // The walk: every open ticket (115 of 230), over three pages of 50,
    // projected, with a complete verdict.
    let open = step("open_tickets");
    assert_eq!(open["status"], "succeeded", "{open}");
    let output = &open["output"];
    assert_eq!(output["_loop"]["complete"], true, "{output}");
    assert_eq!(output["_loop"]["itemCount"], 115, "{output}");
    assert_eq!(output["_loop"]["requests"], 3, "{output}");
    let rows = output["tickets"]
        .as_array()
        .expect("the rows, where the tool put them");
    assert_eq!(rows.len(), 115);
    assert_eq!(rows[0], json!({"id": 2, "subject": "ticket 2"}));
    // A plain call: the prose answer, whole.
    let note = step("note");
    assert_eq!(note["status"], "succeeded", "{note}");
    assert!(
        note["output"].to_string().contains("Ticket 7 was opened"),
        "{note}"
    );
    // A tool error fails its step with the tool's own words.
    let close = step("close");
    assert_eq!(close["status"], "failed", "{close}");
    assert_eq!(
        close["reason"], "the tool answered an error: ticket 7 cannot be closed: it has open tasks",
        "{close}"
    );
    // A tool the server does not have: named, with the ones it has.
    let missing = step("missing");
    assert_eq!(missing["status"], "failed", "{missing}");
    let reason = missing["reason"].as_str().unwrap();
    assert!(
        reason.contains("no tool `reopen_ticket`") && reason.contains("list_tickets"),
        "{reason}"
    );
    // `all_pages` on a tool without paging arguments is refused before
    // any call.
    let prose = step("walked_prose");
    assert_eq!(prose["status"], "failed", "{prose}");
    assert!(
        prose["reason"].as_str().unwrap().contains("ticket_note"),
        "{prose}"
    );
    // The branch reads the walk's verdict; the step it gates ran with a
    // value from the walk.
    assert_eq!(step("gate")["status"], "succeeded");
    let count = step("count");
    assert_eq!(count["status"], "succeeded", "{count}");
    assert!(
        count["output"].to_string().contains("Ticket 115"),
        "{count}"
    );
}

/// Checks what reached the upstream: three pages, the notes, the refused
/// close, and never a reserved argument or the prose walk.
fn check_upstream(record: &Path) {
    let calls = recorded(record);
    let mut pages: Vec<i64> = calls
        .iter()
        .filter(|c| c["tool"] == "list_tickets")
        .map(|c| c["arguments"]["page"].as_i64().unwrap())
        .collect();
    pages.sort_unstable();
    assert_eq!(pages, vec![1, 2, 3], "{calls:?}");
    let notes: Vec<&Value> = calls
        .iter()
        .filter(|c| c["tool"] == "ticket_note")
        .map(|c| &c["arguments"]["id"])
        .collect();
    assert_eq!(notes.len(), 2, "the prose walk made no call: {calls:?}");
    assert_eq!(
        calls.iter().filter(|c| c["tool"] == "close_ticket").count(),
        1
    );
    for c in &calls {
        let args = c["arguments"].as_object().unwrap();
        assert!(args.keys().all(|k| !k.starts_with('_')), "{c}");
        // The child got the variable its provider names, and nothing else
        // of the environment of the process that started it.
        assert_eq!(c["mode"], "read-only", "{c}");
        assert_eq!(c["leak"], Value::Null, "{c}");
    }
}

/// Whether any process still runs `upstream_server.py` with `record`.
fn child_alive(record: &Path) -> bool {
    let needle = record.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|cmdline| {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            text.contains("upstream_server.py") && text.contains(&needle)
        })
}

#[test]
fn dragnet_run_calls_walks_and_fails_mcp_tools_and_stops_the_child() {
    let record = scratch("jsonl");
    let file = scratch("yaml");
    std::fs::write(&file, workflow(&child_provider(&record))).unwrap();
    let db = fresh_db();
    let out = command(&db)
        .args(["run", &file.display().to_string(), "--json"])
        .env("TICKETS_MODE_SOURCE", "read-only")
        .env("DRAGNET_TEST_SECRET", "s3cret-of-the-host")
        .output()
        .unwrap();
    // One step failed (the tool error), so the run did.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    assert_eq!(run["status"], "failed", "{run}");
    check_record(&run);
    check_upstream(&record);
    // The child was started for the run and stopped after it.
    assert!(!child_alive(&record), "the upstream outlived its run");
    let _ = std::fs::remove_file(&record);
}

#[test]
fn a_variable_the_mcp_child_needs_fails_only_its_steps_naming_it() {
    let record = scratch("jsonl");
    let file = scratch("yaml");
    std::fs::write(&file, workflow(&child_provider(&record))).unwrap();
    let out = command(&fresh_db())
        .args(["run", &file.display().to_string(), "--json"])
        .env_remove("TICKETS_MODE_SOURCE")
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reason = run["steps"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("TICKETS_MODE_SOURCE") && reason.contains("`tickets`"),
        "{run}"
    );
    assert!(recorded(&record).is_empty(), "nothing was started");
}

#[test]
fn the_same_provider_block_serves_a_workflow_and_agent_yaml() {
    let record = scratch("jsonl");
    let provider = child_provider(&record);
    // The block, unchanged, in agent.yaml: the gateway starts the same
    // server and walks the same tool.
    let agent = scratch("yaml");
    std::fs::write(
        &agent,
        format!(
            "organisation: acme
providers:
  tickets:
{provider}agents:
  support:
    agentTools:
      - {{ tool_id: list_tickets, provider_id: tickets, loop_responses: true }}
"
        ),
    )
    .unwrap();
    let plan = json!({
        "stdio": {
            "command": common::binary().display().to_string(),
            "args": ["mcp", "--config", agent.display().to_string(), "--agent", "support", "--stdio"],
            "env": {"DATABASE_URL": fresh_db(), "DRAGNET_LOG": "warn", "TICKETS_MODE_SOURCE": "read-only"},
        },
        "mode": "legacy",
        "steps": [
            {"call": "list_tickets", "args": {"status": "open", "per_page": 50, "_all_pages": true, "_fields": ["id"]}},
        ],
    });
    let seen = common::mcp_plan(&plan);
    assert_eq!(seen[0]["error"], false, "{}", seen[0]);
    assert_eq!(seen[0]["json"]["_pagingComplete"], true, "{}", seen[0]);
    // And in a workflow.
    let file = scratch("yaml");
    std::fs::write(&file, workflow(&provider)).unwrap();
    let out = command(&fresh_db())
        .args(["run", &file.display().to_string(), "--json"])
        .env("TICKETS_MODE_SOURCE", "read-only")
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_record(&run);
}

#[test]
fn a_workflow_calls_a_real_mcp_server_from_npm() {
    let modules = std::env::var("DRAGNET_NODE_MODULES").expect(
        "DRAGNET_NODE_MODULES names the pinned Node.js peers; `bash .ci/test` sets it \
         (or run `export DRAGNET_NODE_MODULES=$(bash .ci/node.sh)`)",
    );
    let server =
        PathBuf::from(modules).join("@modelcontextprotocol/server-everything/dist/index.js");
    let file = scratch("yaml");
    std::fs::write(
        &file,
        format!(
            "name: everything
providers:
  everything:
    mcp:
      command: [node, {}, stdio]
steps:
  - id: echo
    tool: everything.echo
    input: {{message: hello from a workflow}}
  - id: sum
    tool: everything.get-sum
    input: {{a: 2, b: 40}}
",
            server.display()
        ),
    )
    .unwrap();
    let out = command(&fresh_db())
        .args(["run", &file.display().to_string(), "--json"])
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    assert_eq!(run["status"], "succeeded", "{run}");
    let echo = run["steps"][0]["output"].to_string();
    assert!(echo.contains("Echo: hello from a workflow"), "{run}");
    let sum = run["steps"][1]["output"].to_string();
    assert!(sum.contains("42"), "{run}");
}

/// Triggers `tickets-report` through `client`, which fails (one of its
/// steps is a tool error), and returns the run's record as the server
/// shows it.
fn triggered_failing(client: &dyn Fn(&[&str]) -> std::process::Output) -> Value {
    let run = client(&["trigger", "tickets-report", "--follow"]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let listed = client(&["runs", "list", "--json"]);
    let rows: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = rows[0]["run_id"].as_str().unwrap().to_string();
    serde_json::from_slice(&client(&["runs", "show", &id, "--json"]).stdout).unwrap()
}

/// The key teams' secrets are sealed under in these tests.
const SEALING_KEY: &str = "0123456789abcdef0123456789abcdef-sealing";

/// Starts `dragnet serve` with the configuration file `config`, the
/// operator's variable the declared server reads, a secret of the host's
/// that must reach nobody, the sealing key of teams' secrets, and a
/// variable named like a team's secret (which must not be read for it).
fn serve(db: &str, config: &Path) -> (Served, String) {
    let mut command = command(db);
    command
        .env("DRAGNET_CONFIG", config)
        .env("OPERATOR_TICKETS_MODE", "read-only")
        .env("DRAGNET_TEST_SECRET", "s3cret-of-the-host")
        .env("DRAGNET_SECRETS_KEY", SEALING_KEY)
        .env("TICKETS_KEY", "the-servers-own-value");
    serve_with(command)
}

#[test]
fn on_a_server_a_workflow_names_a_declared_server_and_never_starts_a_program() {
    let record = scratch("jsonl");
    let db = fresh_db();
    let token = acme_token(&db);
    let config = scratch("toml");
    std::fs::write(
        &config,
        format!(
            "[server.mcp_servers.tickets]\ncommand = [{:?}, {:?}, {:?}]\nenv = {{ TICKETS_MODE = {{ env = \"OPERATOR_TICKETS_MODE\" }} }}\n",
            python(),
            script("upstream_server.py"),
            record.display().to_string()
        ),
    )
    .unwrap();
    let (_server, addr) = serve(&db, &config);
    let client = client(&db, &addr, &token);

    // A program named by the workflow is refused at push, located at its
    // `command` (line 5, column 16).
    let own = scratch("yaml");
    std::fs::write(&own, workflow(&child_provider(&record))).unwrap();
    let refused = client(&["workflows", "push", &own.display().to_string()]);
    assert!(!refused.status.success());
    let said = stderr(&refused);
    assert!(
        said.contains("may not start a program")
            && said.contains(".yaml:5:16:")
            && said.contains("declared: tickets"),
        "{said}"
    );
    // So is a server nobody declared.
    let unknown = scratch("yaml");
    std::fs::write(&unknown, workflow("    mcp: {server: wiki}\n")).unwrap();
    let refused = client(&["workflows", "push", &unknown.display().to_string()]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("declares no MCP server `wiki`"),
        "{}",
        stderr(&refused)
    );
    assert!(recorded(&record).is_empty(), "nothing was started");

    // The declared server, by name: the run starts it and walks it.
    let declared = scratch("yaml");
    std::fs::write(&declared, workflow("    mcp: {server: tickets}\n")).unwrap();
    let pushed = client(&["workflows", "push", &declared.display().to_string()]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let record_json = triggered_failing(&client);
    check_record(&record_json);
    check_upstream(&record);
    assert!(!child_alive(&record), "the upstream outlived its run");
}

/// The tickets server over streamable HTTP on a free port, killed when
/// dropped.
struct HttpUpstream(Child, u16);

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_upstream(record: &Path) -> HttpUpstream {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(python())
        .arg(script("upstream_server.py"))
        .arg(record)
        .args(["--http", &port.to_string()])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let up = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "the upstream did not start listening");
    HttpUpstream(child, port)
}

/// Sets the team secret `name` to `value` on store `db` (stdin, sealed
/// under `key`).
fn set_secret(db: &str, key: &str, name: &str, value: &str) {
    use std::io::Write;
    let mut child = command(db)
        .args(["secrets", "set", name, "--team", "acme"])
        .env("DRAGNET_SECRETS_KEY", key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(value.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn on_a_server_an_mcp_url_reads_the_teams_secret_and_is_held_to_upstream_hosts() {
    let record = scratch("jsonl");
    let upstream = http_upstream(&record);
    let db = fresh_db();
    let token = acme_token(&db);
    // Loopback is refused by address; `localhost` is admitted by name.
    let config = scratch("toml");
    std::fs::write(
        &config,
        "[server]\nupstream_hosts = [\"*\", \"!127.0.0.0/8\", \"!::1\"]\n",
    )
    .unwrap();
    let (_server, addr) = serve(&db, &config);
    let client = client(&db, &addr, &token);
    let push = |provider: &str| {
        let file = scratch("yaml");
        std::fs::write(&file, workflow(provider)).unwrap();
        client(&["workflows", "push", &file.display().to_string()])
    };

    // A cloud metadata address is refused at push, at its `url`.
    let refused = push("    mcp: {url: \"http://169.254.169.254/mcp\"}\n");
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(".yaml:4:16:") && stderr(&refused).contains("metadata"),
        "{}",
        stderr(&refused)
    );
    // A secret header names the team's secret: refused until it is set,
    // at its place (the server's own variable of that name does not count).
    let provider = format!(
        "    mcp:\n      url: http://localhost:{}/mcp\n      headers_env: {{X-Upstream-Key: TICKETS_KEY}}\n",
        upstream.1
    );
    let refused = push(&provider);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("the team has no secret `TICKETS_KEY`")
            && stderr(&refused).contains(".yaml:6:37:"),
        "{}",
        stderr(&refused)
    );
    set_secret(&db, SEALING_KEY, "TICKETS_KEY", "team-acme-key");
    let pushed = push(&provider);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    // `localhost` resolves to loopback, which the policy refuses: the run
    // connects to nothing and every step that uses it fails, naming why.
    let shown = triggered_failing(&client);
    let reason = shown["steps"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the upstream host `localhost` is refused") && reason.contains("127.0.0.1"),
        "{shown}"
    );
    assert!(recorded(&record).is_empty(), "the upstream got nothing");

    // At 127.0.0.1 under a policy that admits it, the team's value (and
    // only it) reaches the server, and the walk is whole.
    drop(_server);
    std::fs::write(&config, "").unwrap();
    let (_server, addr) = serve(&db, &config);
    let client = common::client(&db, &addr, &token);
    let shown = triggered_failing(&client);
    check_record(&shown);
    let calls = recorded(&record);
    assert!(!calls.is_empty());
    for c in &calls {
        assert_eq!(c["key"], "team-acme-key", "{c}");
    }
}
