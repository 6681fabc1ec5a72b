//! Imports every real-world OpenAPI document of the shared corpus
//! (`shared/corpus/openapi/`, beside the workspace) and checks the toolkit
//! invariants on each, plus paging facts verified by reading the documents.
//! A missing or short corpus is a failure, never a skip.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use dragnet_steps::looping::detect::{Position, Walkability};
use dragnet_steps::openapi::import_file;
use dragnet_steps::{Tool, Toolkit};

const EXPECTED_DOCUMENTS: usize = 12;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/openapi")
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Imports all documents once; file name → toolkit.
fn import_all() -> Vec<(String, Toolkit)> {
    let dir = corpus_dir();
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus folder {} is missing: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("readable corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= EXPECTED_DOCUMENTS,
        "expected {EXPECTED_DOCUMENTS} documents in {}, found {}",
        dir.display(),
        files.len()
    );
    let started = Instant::now();
    let mut out = Vec::new();
    for file in files {
        let one = Instant::now();
        let kit = import_file(&file).unwrap_or_else(|e| panic!("{e}"));
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let walkable = kit
            .tools
            .iter()
            .filter(|t| t.walkability.is_walkable())
            .count();
        let cursor = kit
            .tools
            .iter()
            .filter(|t| matches!(t.walkability, Walkability::Cursor { .. }))
            .count();
        let with_items = kit
            .tools
            .iter()
            .filter(|t| t.response_items_path.is_some())
            .count();
        let largest = kit
            .tools
            .iter()
            .map(|t| t.input_schema.to_string().len())
            .max()
            .unwrap_or(0);
        println!(
            "{name:<52} tools {:>4}  walkable {:>3}  cursor {:>3}  items_path {:>4}  largest schema {:>7} B  {:>5} ms",
            kit.tools.len(),
            walkable,
            cursor,
            with_items,
            largest,
            one.elapsed().as_millis()
        );
        out.push((name, kit));
    }
    let total = started.elapsed();
    println!("all documents: {} ms", total.as_millis());
    // A guard against blow-ups (inlining gone exponential), not a benchmark:
    // a release build takes well under a second.
    assert!(total.as_secs() < 60, "import took {total:?}");
    out
}

fn kit<'a>(all: &'a [(String, Toolkit)], prefix: &str) -> &'a Toolkit {
    all.iter()
        .find(|(name, _)| name.starts_with(prefix))
        .map(|(_, kit)| kit)
        .unwrap_or_else(|| panic!("no corpus document starting with `{prefix}`"))
}

#[test]
fn openapi_corpus_imports_with_invariants_and_known_paging_facts() {
    let all = import_all();
    for (file, kit) in &all {
        assert!(!kit.tools.is_empty(), "{file}: no tools");
        let mut seen = HashSet::new();
        for tool in &kit.tools {
            assert!(valid_name(&tool.name), "{file}: bad name `{}`", tool.name);
            assert!(
                seen.insert(tool.name.as_str()),
                "{file}: duplicate `{}`",
                tool.name
            );
            assert_eq!(
                tool.input_schema["type"], "object",
                "{file}: {} input schema",
                tool.name
            );
            assert_eq!(kit.tool(&tool.name), Some(tool), "{file}: by name");
        }
        // Every original operationId names its own tool, unless the
        // document gives one id to several operations.
        let ids: Vec<&str> = kit.operation_ids.values().map(String::as_str).collect();
        let mut renamed = 0;
        for (name, id) in &kit.operation_ids {
            renamed += usize::from(name != id);
            if ids.iter().filter(|i| *i == id).count() == 1 {
                assert_eq!(
                    kit.tool(id).map(|t| t.name.as_str()),
                    Some(name.as_str()),
                    "{file}: operationId `{id}`"
                );
            }
        }
        println!("{file}: {renamed} operationIds renamed");
    }
    known_facts(&all);
}

fn tool<'a>(kit: &'a Toolkit, name: &str) -> &'a Tool {
    kit.tool(name)
        .unwrap_or_else(|| panic!("{}: no tool `{name}`", kit.source))
}

fn path(keys: &[&str]) -> Option<Vec<String>> {
    Some(keys.iter().map(|k| (*k).to_string()).collect())
}

/// Facts checked by reading the documents themselves.
fn known_facts(all: &[(String, Toolkit)]) {
    // Jira pages with `startAt`, which is not an offset name (SPEC §3.1).
    let jira = kit(all, "jira");
    let dashboards = tool(jira, "getAllDashboards");
    assert!(dashboards.argument_names().contains(&"startAt".to_string()));
    assert_eq!(
        dashboards.walkability,
        Walkability::SizeOnly {
            size: "maxResults".into()
        }
    );
    assert_eq!(dashboards.response_items_path, path(&["dashboards"]));
    // …but its audit log takes `offset` + `limit`.
    let audit = tool(jira, "getAuditRecords")
        .paging()
        .expect("offset + limit");
    assert!(matches!(&audit.position, Position::Offset(p) if p.name == "offset"));
    assert_eq!(audit.size.default, Some(1000));

    // Azure DevOps: OData `$top` + `$skip`, a bare array response.
    let pushes = tool(kit(all, "azure-devops_git"), "Pushes_List");
    let paging = pushes.paging().expect("$top + $skip");
    assert_eq!(paging.size.name, "$top");
    assert!(matches!(&paging.position, Position::Offset(p) if p.name == "$skip"));
    assert_eq!(pushes.response_items_path, path(&[]));

    // Stripe lists by cursor; the empty form body of its GETs is dropped.
    let customers = tool(kit(all, "stripe"), "GetCustomers");
    assert_eq!(
        customers.walkability,
        Walkability::Cursor {
            param: "starting_after".into()
        }
    );
    assert!(customers.body.is_none());
    assert_eq!(customers.response_items_path, path(&["data"]));

    // Spotify: `limit` (1..=100) + `offset`, items under `items`.
    let tracks = tool(kit(all, "spotify"), "get-playlists-tracks");
    let paging = tracks.paging().expect("limit + offset");
    assert_eq!(paging.size.maximum, Some(100));
    assert_eq!(tracks.response_items_path, path(&["items"]));

    // DigitalOcean: `page` (from 1) + `per_page` (up to 200).
    let keys = tool(kit(all, "digitalocean"), "sshKeys_list");
    let paging = keys.paging().expect("page + per_page");
    assert!(matches!(&paging.position, Position::Page(p) if p.minimum == Some(1)));
    assert_eq!(paging.size.maximum, Some(200));
    assert_eq!(keys.response_items_path, path(&["ssh_keys"]));

    // Slack: `limit` + `cursor`.
    let conversations = tool(kit(all, "slack"), "conversations_list");
    assert_eq!(
        conversations.walkability,
        Walkability::Cursor {
            param: "cursor".into()
        }
    );

    // Twilio capitalises `PageSize`/`Page`: names match exactly, so no paging.
    let calls = tool(kit(all, "twilio"), "ListCall");
    assert!(calls.argument_names().contains(&"PageSize".to_string()));
    assert_eq!(calls.walkability, Walkability::NoPaging);

    // Mistral tells path variants apart with a fragment, which is never sent.
    let stream = tool(
        kit(all, "mistral"),
        "agents_api_v1_conversations_start_stream",
    );
    assert_eq!(stream.path, "/v1/conversations");
}

/// Cursor and next-link paging over the whole corpus: every operation
/// found is listed per document (`--nocapture`), and the styles of
/// operations read in the documents are checked. Page-number and offset
/// paging win where both apply.
#[test]
fn cursor_and_next_link_paging_is_found_where_the_documents_declare_it() {
    let all = import_all();
    for (file, kit) in &all {
        let found: Vec<String> = kit
            .tools
            .iter()
            .filter_map(|t| {
                let c = t.cursor.as_ref()?;
                let param = c.param.as_ref().map(|p| p.name.as_str()).unwrap_or("-");
                Some(format!(
                    "{} ({}, {param}, {})",
                    t.name,
                    c.style,
                    c.next.describe()
                ))
            })
            .collect();
        println!("{file}: {} cursor-style operations", found.len());
        for f in &found {
            println!("  {f}");
        }
        for t in &kit.tools {
            assert!(
                t.cursor.is_none() || !t.walkability.is_walkable(),
                "{file} {}: page paging wins",
                t.name
            );
        }
    }
    let style = |prefix: &str, name: &str| {
        let t = tool(kit(&all, prefix), name);
        let c = t
            .cursor
            .as_ref()
            .unwrap_or_else(|| panic!("{prefix} {name} pages by cursor"));
        (
            c.style,
            c.param.as_ref().map(|p| p.name.clone()),
            c.next.describe(),
        )
    };
    assert_eq!(
        style("stripe", "GetCharges"),
        (
            "cursor",
            Some("starting_after".into()),
            "last_item:id".into()
        )
    );
    assert_eq!(
        style("svix", "v1_application_list"),
        ("cursor", Some("iterator".into()), "body:iterator".into())
    );
    assert_eq!(
        style("twilio", "ListMessage"),
        ("next_url", None, "body:next_page_uri".into())
    );
    assert_eq!(
        style("digitalocean", "billingHistory_list"),
        ("next_url", None, "body:links.pages.next".into())
    );
    let slack = style("slack", "admin_conversations_getTeams");
    assert_eq!(slack.2, "body:response_metadata.next_cursor");
    let mistral = style("mistral", "agents_api_v1_agents_list_pages");
    assert_eq!(mistral.1.as_deref(), Some("page_token"));
    // Page-number paging wins: DigitalOcean's droplets page by number.
    let droplets = tool(kit(&all, "digitalocean"), "droplets_list");
    assert!(droplets.walkability.is_walkable() && droplets.cursor.is_none());
}
