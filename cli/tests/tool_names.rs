//! `dragnet tools` and `dragnet call` with awkward `operationId`s (`café`,
//! `列出订单`, 500 characters, ids that sanitise to one name), over a
//! document that points at the demo shop's paths: `tools` shows the name
//! and the original id, and `call` takes either, over real HTTP.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

fn long_id() -> String {
    "listEveryCustomerOfTheShopIncludingArchivedOnes".repeat(11)[..500].to_string()
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Writes the document into a directory of its own.
fn document() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dragnet-names-{}", unique()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "names", "version": "1"},
        "paths": {
            "/orders": {"get": {"operationId": "café"}},
            "/properties": {"get": {"operationId": "列出订单"}},
            "/customers": {"get": {"operationId": long_id()}},
            "/reports": {"get": {"operationId": "reports.list"}},
            "/alerts": {"get": {"operationId": "reports list"}}
        }
    });
    let path = dir.join("names.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

fn dragnet(args: &[&str]) -> Output {
    let db = std::env::temp_dir().join(format!("dragnet-names-{}.db", unique()));
    Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .env("DATABASE_URL", format!("sqlite://{}", db.display()))
        .env_remove("DRAGNET_DATABASE_URL")
        .env_remove("DRAGNET_CONFIG")
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn tools_shows_each_name_and_its_original_id() {
    let spec = document();
    let spec = spec.to_str().unwrap();
    let out = dragnet(&["tools", "--spec", spec, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut names = HashSet::new();
    let mut ids = Vec::new();
    for tool in &list {
        let name = tool["name"].as_str().unwrap();
        assert!(
            (1..=64).contains(&name.len())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{name}"
        );
        assert!(names.insert(name.to_string()), "duplicate {name}");
        ids.push(tool["operationId"].as_str().unwrap().to_string());
    }
    assert_eq!(
        ids,
        [
            "café",
            "列出订单",
            long_id().as_str(),
            "reports.list",
            "reports list"
        ]
    );
    let cafe = list[0]["name"].as_str().unwrap();
    assert!(cafe.starts_with("caf_"), "{cafe}");

    let out = dragnet(&["tools", "--spec", spec]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let row = table
        .lines()
        .find(|l| l.starts_with(cafe))
        .unwrap_or_else(|| panic!("a row for {cafe}:\n{table}"));
    assert!(row.ends_with("(operationId: café)"), "{row}");
    assert!(table.contains("(operationId: 列出订单)"), "{table}");
    assert!(table.contains("(operationId: reports list)"), "{table}");
}

#[tokio::test(flavor = "multi_thread")]
async fn call_takes_the_original_id_or_the_name() {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = shop.base_url().to_string();
    let spec = document().to_str().unwrap().to_string();
    let listed = {
        let spec = spec.clone();
        tokio::task::spawn_blocking(move || dragnet(&["tools", "--spec", &spec, "--json"]))
            .await
            .unwrap()
    };
    let list: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let name_of = |id: &str| {
        list.iter()
            .find(|t| t["operationId"] == id)
            .and_then(|t| t["name"].as_str())
            .unwrap()
            .to_string()
    };
    let cases = vec![
        ("café".to_string(), "/orders"),
        (name_of("café"), "/orders"),
        ("列出订单".to_string(), "/properties"),
        (name_of("列出订单"), "/properties"),
        (long_id(), "/customers"),
        (name_of(&long_id()), "/customers"),
        ("reports list".to_string(), "/alerts"),
        (name_of("reports list"), "/alerts"),
        ("reports.list".to_string(), "/reports"),
    ];
    for (tool, path) in cases {
        let (spec, base, called) = (spec.clone(), base.clone(), tool.clone());
        let out = tokio::task::spawn_blocking(move || {
            dragnet(&[
                "call",
                "--spec",
                &spec,
                "--base-url",
                &base,
                &called,
                "--json",
            ])
        })
        .await
        .unwrap();
        // 0 complete, 3 partial (one page of a paged list): a call either way
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{tool}: {:?} {}",
            out.status.code(),
            text(&out.stderr)
        );
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(body["_pagingComplete"].is_boolean(), "{tool}");
        let last = shop.requests().pop().unwrap();
        assert_eq!(last.path, path, "{tool}");
    }
    // a cut-down spelling is not a name
    let out = tokio::task::spawn_blocking(move || {
        dragnet(&["call", "--spec", &spec, "--base-url", &base, "caf"])
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("caf"), "{}", text(&out.stderr));
}
