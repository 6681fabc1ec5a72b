//! Ranking on a real pool: every operation of the twelve OpenAPI documents
//! in `shared/corpus/openapi/` (some 2,400 tools) indexed as discovery
//! indexes a pool, and natural-language requests written here, each with
//! the tool a person would pick. At least 90 % must have that tool in the
//! top five; the figure is printed (`--nocapture`) and kept in
//! docs/PERFORMANCE.md.

use std::path::PathBuf;

use dragnet_gateway::discovery::search::{verbs_of, SearchDoc, SearchIndex};
use dragnet_steps::openapi;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/openapi")
}

/// `(toolkit, operationId)` of every tool, and its searchable text.
fn pool() -> (Vec<(String, String)>, Vec<SearchDoc>) {
    let mut names = Vec::new();
    let mut docs = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("the corpus is beside the workspace")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let toolkit = file
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.split('_').next())
            .map(|s| s.split("-openapi").next().unwrap_or(s))
            .unwrap_or_default()
            .to_string();
        let kit = openapi::import_file(&file).expect("the corpus imports");
        for tool in &kit.tools {
            let op = kit
                .operation_ids
                .get(&tool.name)
                .cloned()
                .unwrap_or_else(|| tool.name.clone());
            names.push((toolkit.clone(), op));
            docs.push(SearchDoc {
                name: tool.name.clone(),
                toolkit: toolkit.clone(),
                description: tool.description.clone(),
                params: tool.params.iter().map(|p| p.name.clone()).collect(),
                action: verbs_of(tool.method.as_upper()).to_string(),
            });
        }
    }
    (names, docs)
}

/// A request, and the tool (toolkit, operationId) that answers it.
const QUERIES: &[(&str, &str, &str)] = &[
    (
        "send a message to a slack channel",
        "slack",
        "chat_postMessage",
    ),
    ("list invoices of a customer", "stripe", "GetInvoices"),
    ("refund a payment", "stripe", "PostRefunds"),
    ("create a new customer", "stripe", "PostCustomers"),
    (
        "cancel a customer's subscription",
        "stripe",
        "DeleteSubscriptionsSubscriptionExposedId",
    ),
    ("create a jira issue", "jira", "createIssue"),
    ("add a comment to an issue", "jira", "addComment"),
    ("search issues with jql", "jira", "searchForIssuesUsingJql"),
    ("assign an issue to a user", "jira", "assignIssue"),
    ("create a droplet", "digitalocean", "droplets_create"),
    ("list all droplets", "digitalocean", "droplets_list"),
    (
        "add a DNS record to a domain",
        "digitalocean",
        "domains_create_record",
    ),
    ("upload an ssh key", "digitalocean", "sshKeys_create"),
    (
        "create a block storage volume",
        "digitalocean",
        "volumes_create",
    ),
    ("create a mattermost channel", "mattermost", "CreateChannel"),
    (
        "create a post in a mattermost channel",
        "mattermost",
        "CreatePost",
    ),
    (
        "invite users to a slack channel",
        "slack",
        "conversations_invite",
    ),
    ("upload a file to slack", "slack", "files_upload"),
    (
        "add an emoji reaction to a message",
        "slack",
        "reactions_add",
    ),
    ("place an outgoing phone call", "twilio", "CreateCall"),
    ("send an sms text message", "twilio", "CreateMessage"),
    ("buy a phone number", "twilio", "CreateIncomingPhoneNumber"),
    ("create a spotify playlist", "spotify", "create-playlist"),
    (
        "add tracks to a playlist",
        "spotify",
        "add-tracks-to-playlist",
    ),
    ("get an artist's albums", "spotify", "get-an-artists-albums"),
    (
        "list the user's saved tracks",
        "spotify",
        "get-users-saved-tracks",
    ),
    ("list git repositories", "azure-devops", "Repositories_List"),
    (
        "open a pull request",
        "azure-devops",
        "Pull Requests_Create",
    ),
    (
        "list available models",
        "mistral",
        "list_models_v1_models_get",
    ),
    (
        "start a fine tuning job",
        "mistral",
        "jobs_api_routes_fine_tuning_start_fine_tuning_job",
    ),
    (
        "create a webhook endpoint for an application",
        "svix",
        "v1.endpoint.create",
    ),
    (
        "get a commit of a repository",
        "azure-devops",
        "Commits_Get",
    ),
];

#[test]
fn natural_requests_find_their_tool_in_the_top_five() {
    let (names, docs) = pool();
    assert!(docs.len() >= 2_000, "a pool of {} tools", docs.len());
    let index = SearchIndex::new(&docs);
    let mut found = 0;
    let mut misses = Vec::new();
    for (query, toolkit, op) in QUERIES {
        let want = names
            .iter()
            .position(|(k, o)| k == toolkit && o == op)
            .unwrap_or_else(|| panic!("no {toolkit} {op} in the corpus"));
        let hits = index.search(query, 5);
        match hits.iter().position(|h| h.doc == want) {
            Some(_) => found += 1,
            None => {
                let got: Vec<&str> = hits.iter().map(|h| names[h.doc].1.as_str()).collect();
                misses.push(format!("{query:?} → {got:?}"));
            }
        }
    }
    let share = found as f64 / QUERIES.len() as f64;
    println!(
        "discovery ranking: {found} of {} requests ({:.0} %) have their tool in the top 5 of {} tools",
        QUERIES.len(),
        share * 100.0,
        docs.len()
    );
    for miss in &misses {
        println!("  missed: {miss}");
    }
    assert!(QUERIES.len() >= 25);
    assert!(share >= 0.9, "{:.0} %: {misses:#?}", share * 100.0);
}
