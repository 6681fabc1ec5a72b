//! `dragnet mcp --explain AGENT`: which tools are listed directly and which
//! pooled, and why, for an agent whose connected-app toolkit does not fit
//! its budget.

mod common;

use common::{command, fresh_db, scratch, stderr, stdout};

#[test]
fn explain_says_which_tools_are_direct_and_which_pooled() {
    let shop_doc = dragnet_shop::openapi_path().display().to_string();
    let file = scratch("yaml");
    std::fs::write(
        &file,
        format!(
            "organisation: demo
providers:
  shop:
    openapi: {shop_doc}
    base_url: embedded
  mail:
    app: {shop_doc}
    base_url: embedded
agents:
  clerk:
    toolBudget: 4
    agentTools:
      - {{ tool_id: listOrders, provider_id: shop }}
      - {{ tool_id: getOrder, provider_id: shop }}
      - {{ tool_id: listProperties, provider_id: mail }}
      - {{ tool_id: listCustomers, provider_id: mail, discovery: false }}
      - {{ tool_id: listPropertyOrders, provider_id: mail }}
      - {{ tool_id: listEvents, provider_id: mail }}
"
        ),
    )
    .unwrap();
    let db = fresh_db();
    let out = command(&db)
        .args([
            "mcp",
            "--config",
            &file.display().to_string(),
            "--explain",
            "clerk",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("agent `clerk`: 3 of 6 tools listed directly (budget 4), 3 pooled"),
        "{text}"
    );
    let line = |tool: &str| {
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(tool))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("listOrders").contains("direct") && line("listOrders").contains("own provider"));
    assert!(
        line("listCustomers").contains("direct") && line("listCustomers").contains("discovery")
    );
    assert!(
        line("listEvents").contains("pooled")
            && line("listEvents").contains("(3 tools) does not fit the 1 left"),
        "{text}"
    );
    assert!(text.contains("search_tools, load_tool, call_tool"));
    // An unknown agent is named with the known ones.
    let out = command(&db)
        .args([
            "mcp",
            "--config",
            &file.display().to_string(),
            "--explain",
            "nobody",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("clerk"), "{}", stderr(&out));
}
