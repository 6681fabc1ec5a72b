//! `agent.yaml` compiled: a configuration with every kind of provider and
//! two agents binding the same tool differently, a broken one with every
//! problem located at once, and the published JSON Schema kept current.

use std::path::{Path, PathBuf};

use dragnet_gateway::config::{self, BaseUrl, ChildEnv, McpServer, ProviderKind};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn a_configuration_compiles_with_its_providers_and_bindings() {
    let c = config::load(&fixture("agent.yaml")).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(c.organisation, "demo");
    assert_eq!(c.size_budget.tokens, 8000);
    assert_eq!(c.limits.max_pages, 40);
    match &c.providers["shop"].kind {
        ProviderKind::OpenApi {
            base_url,
            runtime_credentials_header,
            app,
            ..
        } => {
            assert_eq!(*base_url, BaseUrl::Embedded);
            assert_eq!(
                runtime_credentials_header.as_deref(),
                Some("X-Shop-User-Token")
            );
            assert!(!app);
        }
        other => panic!("{other:?}"),
    }
    match &c.providers["crm"].kind {
        ProviderKind::Mcp(McpServer::Command { argv, env }) => {
            assert_eq!(argv[0], "python3");
            assert_eq!(env["CRM_API_KEY"], ChildEnv::Var("DEMO_CRM_KEY".into()));
            assert_eq!(env["CRM_MODE"], ChildEnv::Literal("read-only".into()));
        }
        other => panic!("{other:?}"),
    }
    // The same tool, looping for one agent and not for the other.
    let analyst = &c.agents["analyst"].bindings;
    let clerk = &c.agents["clerk"].bindings;
    assert!(analyst[0].looping && !clerk[0].looping);
    assert_eq!(
        analyst[0].tool.as_ref().map(|t| t.name.as_str()),
        Some("listOrders")
    );
    assert_eq!(analyst[1].dataset_ttl_hours, Some(6));
    assert!(
        analyst[3].tool.is_none(),
        "an MCP tool is known once connected"
    );
    assert_eq!(clerk[0].discovery, Some(false));
}

#[test]
fn every_problem_is_reported_at_once_with_its_place() {
    let d = config::load(&fixture("broken_agent.yaml")).expect_err("it is refused");
    let got: Vec<String> = d
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
        .collect();
    let expect = [
        ("1:15", "`organisation` is empty"),
        ("2:21", "`size_budget_tokens` is 10"),
        ("3:1", "unknown field `owner`"),
        (
            "10:15",
            "must start with http:// or https://, or be `embedded`",
        ),
        ("12:5", "more than one of `openapi`, `mcp` and `app`"),
        ("15:10", "`mcp.url` must start with http:// or https://"),
        ("17:3", "invalid agent name `bad agent`"),
        (
            "21:20",
            "has no tool `listOrderz`; did you mean listOrders?",
        ),
        ("22:45", "no provider `shopp`; did you mean shop?"),
        ("23:67", "give 1 to 720 hours"),
        ("24:9", "`anything` of `crm` is bound twice"),
        ("25:42", "unknown field `loops`"),
    ];
    for (at, text) in expect {
        assert!(
            got.iter()
                .any(|g| g.starts_with(&format!("{at}:")) && g.contains(text)),
            "no `{at}: …{text}…` in\n{}",
            got.join("\n")
        );
    }
    assert_eq!(got.len(), expect.len(), "{}", got.join("\n"));
}

#[test]
fn an_mcp_childs_environment_is_checked_where_it_is_written() {
    let text = "organisation: acme
providers:
  files:
    mcp:
      command: [server]
      env: { \"BAD NAME\": x, KEY: { env: \"\" }, OK: fine }
  wiki:
    mcp: { url: \"http://127.0.0.1:9/mcp\", env: { A: b } }
agents:
  a:
    agentTools: []
";
    let d = config::load_str(Path::new("agent.yaml"), text).expect_err("it is refused");
    let got: Vec<String> = d
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
        .collect();
    assert_eq!(got.len(), 3, "{}", got.join("\n"));
    assert!(
        got[0].starts_with("6:14:") && got[0].contains("`BAD NAME`"),
        "{got:?}"
    );
    assert!(got[1].contains("`mcp.env.KEY.env` is empty"), "{got:?}");
    assert!(
        got[2].starts_with("8:") && got[2].contains("`mcp.env` is the environment of a `command`"),
        "{got:?}"
    );
}

#[test]
fn the_checked_in_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/agent.schema.json");
    let current = serde_json::to_string_pretty(&config::json_schema()).unwrap() + "\n";
    if std::env::var_os("DRAGNET_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, &current).unwrap();
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == current,
        "{} is out of date; regenerate it with\n  DRAGNET_WRITE_SCHEMA=1 cargo test -p dragnet-gateway --test config",
        path.display()
    );
    let schema = config::json_schema();
    assert_eq!(schema["title"], "dragnet agent gateway");
    assert!(schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "agents"));
}

#[test]
fn the_shipped_example_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/agent.yaml");
    let c = config::load(&path).unwrap_or_else(|d| panic!("{d}"));
    assert!(c.agents["analyst"]
        .bindings
        .iter()
        .all(|b| b.looping && b.tool.is_some()));
    assert!(!c.agents["clerk"].bindings[0].looping);
}

#[test]
fn the_discovery_example_loads_with_its_budget() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/discovery.agent.yaml");
    let c = config::load(&path).unwrap_or_else(|d| panic!("{d}"));
    let agent = &c.agents["concierge"];
    assert_eq!(agent.tool_budget, 5);
    assert_eq!(agent.bindings.len(), 10);
    assert!(c.connections_key_env.is_some());
}

#[test]
fn a_tool_budget_out_of_range_is_located() {
    let text =
        "organisation: demo\nproviders: {}\nagents:\n  a:\n    toolBudget: 0\n    agentTools: []\n";
    let e = config::load_str(Path::new("budget.yaml"), text).unwrap_err();
    let shown = e.to_string();
    assert!(shown.contains("budget.yaml:5:17"), "{shown}");
    assert!(
        shown.contains("`toolBudget` is 0; give 1 to 128"),
        "{shown}"
    );
}

#[test]
fn paging_roles_named_by_hand_are_checked_and_applied() {
    let d = config::load(&fixture("paging_agent.yaml")).expect_err("two mistakes");
    let got: Vec<String> = d
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
        .collect();
    assert_eq!(got.len(), 2, "{}", got.join("\n"));
    assert!(
        got[0].starts_with("12:42:") && got[0].contains("`pge` is not a parameter of `listOrders`"),
        "{}",
        got[0]
    );
    assert!(
        got[1].starts_with("15:5:") && got[1].contains("is an MCP server"),
        "{}",
        got[1]
    );
    // Without the mistakes, the named roles replace what detection found.
    let text = std::fs::read_to_string(fixture("paging_agent.yaml")).unwrap();
    let shop_only = text.split("  bad:").next().unwrap();
    let agents = text.split("agents:").nth(1).unwrap();
    let good = format!("{shop_only}agents:{agents}");
    let path = fixture("paging_agent.good.tmp.yaml");
    std::fs::write(&path, good).unwrap();
    let loaded = config::load(&path);
    let _ = std::fs::remove_file(&path);
    let c = loaded.unwrap_or_else(|d| panic!("{d}"));
    let tool = c.agents["analyst"].bindings[0].tool.clone().unwrap();
    let cursor = tool.cursor_walk().expect("walked by the named cursor");
    assert_eq!(cursor.param.as_ref().unwrap().name, "offset");
    assert_eq!(cursor.next.describe(), "body:next_cursor");
}
