//! The `dragnet` binary end to end: `tools`, `call` against the demo shop
//! over real HTTP, exit codes, and clear errors (never a panic) on bad input.

mod common;

use std::process::Output;

use common::postgres::Schema;
use common::{dragnet, dragnet_on, example, fresh_db, shop, spec, stderr, stdout_json};

#[test]
fn tools_lists_paging_roles_and_where_they_sit() {
    let o = dragnet(&["tools", "--spec", &spec(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tools = stdout_json(&o);
    let find = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    let orders = find("listOrders");
    assert_eq!(orders["walkable"], true);
    assert_eq!(orders["method"], "GET");
    assert_eq!(orders["path"], "/orders");
    assert_eq!(
        orders["paging"],
        serde_json::json!({"size": "per_page", "page": "page", "offset": null, "location": "query", "style": "page"})
    );
    assert_eq!(find("listCustomers")["paging"]["offset"], "offset");
    assert_eq!(find("listOrdersOData")["paging"]["size"], "$top");
    assert_eq!(find("searchOrders")["paging"]["location"], "body.paging");
    let events = find("listEvents");
    assert_eq!(events["walkable"], true, "walked by its cursor");
    assert_eq!(
        events["paging"]["size"], "limit",
        "asked for at its maximum"
    );
    // A cursor-style tool says where its cursor goes and comes from.
    assert_eq!(events["paging"]["style"], "cursor");
    assert_eq!(
        events["paging"]["cursor"],
        serde_json::json!({"name": "cursor", "location": "query"})
    );
    assert_eq!(events["paging"]["next"], "body:next_cursor");
    assert_eq!(find("listCustomers")["paging"]["style"], "offset");

    let o = dragnet(&["tools", "--spec", &spec()]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("listOrders") && text.contains("walkable"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn call_walks_projects_filters_and_exits_by_verdict() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let spec = spec();
    let out = tokio::task::spawn_blocking(move || {
        let complete = dragnet(&[
            "call",
            "--spec",
            &spec,
            "--base-url",
            &base,
            "listOrders",
            "status=open",
            "--all-pages",
            "--fields",
            "id,total,customer.name",
            "--filter",
            "total gt 400",
            "--json",
        ]);
        let partial = dragnet(&[
            "call",
            "--spec",
            &spec,
            "--base-url",
            &base,
            "listOrders",
            "status=open",
            "--all-pages",
            "--max-pages",
            "2",
            "--json",
        ]);
        let plain = dragnet(&[
            "call",
            "--spec",
            &spec,
            "--base-url",
            &base,
            "listPropertyOrders",
            "--for-each",
            "property_id=1,2",
            "per_page=3",
        ]);
        (complete, partial, plain)
    })
    .await
    .unwrap();
    let (complete, partial, plain) = out;
    assert_eq!(complete.status.code(), Some(0), "{}", stderr(&complete));
    let v = stdout_json(&complete);
    assert_eq!(v["_pagingComplete"], true);
    let rows = v["data"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["total"].as_f64().unwrap() > 400.0));
    assert!(rows.iter().all(|r| r.as_object().unwrap().len() == 3));

    assert_eq!(
        partial.status.code(),
        Some(3),
        "partial exits 3: {}",
        stderr(&partial)
    );
    let v = stdout_json(&partial);
    assert_eq!(v["_pagingComplete"], false);
    assert_eq!(v["_likelyMoreRows"], true);
    assert!(v["_note"]
        .as_str()
        .unwrap()
        .contains("pages-per-collection"));

    // one page per value without --all-pages: rows, then a plain verdict block
    assert_eq!(plain.status.code(), Some(3), "{}", stderr(&plain));
    let text = String::from_utf8_lossy(&plain.stdout);
    assert_eq!(text.lines().take_while(|l| l.starts_with('{')).count(), 6);
    assert!(text.contains("PARTIAL"), "{text}");
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_a_clear_error_with_a_nonzero_exit() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let spec = spec();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["listOrdrs".into()], "unknown tool `listOrdrs`"),
        (vec!["listOrders".into(), "page=abc".into()], "`page`"),
        (vec!["listOrders".into(), "page".into()], "name=value"),
        (
            vec!["listOrders".into(), "--filter".into(), "total ~ 3".into()],
            "unknown operator `~`",
        ),
        (
            vec!["listOrders".into(), "--filter".into(), "total".into()],
            "field op value",
        ),
        (
            vec!["listOrders".into(), "--filter".into(), "total gt".into()],
            "invalid filter clause 0: `total gt` has no value",
        ),
        (
            vec![
                "listOrders".into(),
                "--filter".into(),
                "status eq open".into(),
                "--filter".into(),
                "total gte  ".into(),
            ],
            "invalid filter clause 1: `total gte` has no value",
        ),
        (
            vec!["listOrders".into(), "--for-each".into(), "store=1,2".into()],
            "invalid_for_each_key",
        ),
        (
            vec!["listProperties".into(), "--all-pages".into()],
            "page-size",
        ),
        (vec!["getOrder".into()], "order_id"),
    ];
    let outputs = tokio::task::spawn_blocking(move || {
        cases
            .into_iter()
            .map(|(extra, expected)| {
                let mut args: Vec<String> = vec![
                    "call".into(),
                    "--spec".into(),
                    spec.clone(),
                    "--base-url".into(),
                    base.clone(),
                ];
                args.extend(extra.clone());
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                (extra, expected, dragnet(&refs))
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (extra, expected, o) in outputs {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert!(
            err.contains(expected),
            "{extra:?}: expected `{expected}` in {err}"
        );
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
    }
    let o = dragnet(&["tools", "--spec", "/nonexistent/spec.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/spec.yaml"));
    assert!(
        shop.requests().is_empty(),
        "bad input never reaches the upstream"
    );
    shop.shutdown().await;
}

#[test]
fn demo_runs_both_example_workflows_in_process() {
    let o = dragnet(&["demo"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    assert!(text.contains("`nightly-open-orders`: Succeeded"), "{text}");
    assert!(text.contains("`all-orders-audit`: Partial"), "{text}");
    assert!(
        text.contains("took else because $.steps.orders._loop.complete was false"),
        "{text}"
    );
    assert!(
        text.contains("1 report(s) and 1 alert(s) were posted"),
        "{text}"
    );
}

#[test]
fn validate_and_schema() {
    let o = dragnet(&[
        "validate",
        &example("nightly-open-orders.workflow.yaml"),
        &example("all-orders-audit.workflow.yaml"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = std::env::temp_dir().join(format!("dragnet-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.workflow.yaml");
    std::fs::write(
        &broken,
        "name: broken\nsteps:\n  - id: a\n    tool: shop.listOrders\n    needs: [ghost]\n",
    )
    .unwrap();
    let o = dragnet(&["validate", broken.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains(&format!("{}:", broken.display())), "{err}");
    assert!(err.contains("ghost"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let o = dragnet(&["schema"]);
    assert!(o.status.success());
    let schema = stdout_json(&o);
    assert!(
        schema
            .get("properties")
            .is_some_and(|p| p.get("steps").is_some()),
        "{schema}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn run_exits_by_outcome() {
    let shop = shop().await;
    let base = format!("shop={}", shop.base_url());
    let nightly = example("nightly-open-orders.workflow.yaml");
    let audit = example("all-orders-audit.workflow.yaml");
    let (ok, partial, failed) = tokio::task::spawn_blocking(move || {
        let ok = dragnet(&[
            "run",
            &nightly,
            "--base-url",
            &base,
            "--input",
            "min_total=900",
            "--json",
        ]);
        let partial = dragnet(&["run", &audit, "--base-url", &base]);
        let failed = dragnet(&["run", &nightly, "--base-url", "shop=http://127.0.0.1:9"]);
        (ok, partial, failed)
    })
    .await
    .unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let record = stdout_json(&ok);
    assert_eq!(record["status"], "succeeded");
    assert_eq!(record["inputs"]["min_total"], 900.0);
    assert_eq!(record["steps"][1]["verdict"]["complete"], true);
    assert_eq!(partial.status.code(), Some(3), "{}", stderr(&partial));
    let text = String::from_utf8_lossy(&partial.stdout);
    assert!(text.contains("orders") && text.contains("NO"), "{text}");
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(String::from_utf8_lossy(&failed.stdout).contains("could not connect"));
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_and_cache_commands() {
    runs_and_cache_commands_on(fresh_db(), "sqlite").await;
}

/// The same on PostgreSQL, where a command that ends opens one connection
/// unless told otherwise: the runs' writes, the fan-out's cache reads and
/// writes, the listing and the purge all go through it, and none waits
/// for a second one (which would end in the pool's timeout).
#[tokio::test(flavor = "multi_thread")]
async fn runs_and_cache_commands_on_postgres() {
    let schema = Schema::new("cli_cache");
    runs_and_cache_commands_on(schema.url.clone(), "postgres").await;
}

async fn runs_and_cache_commands_on(db: String, backend: &str) {
    let shop = shop().await;
    let base = format!("shop={}", shop.base_url());
    let nightly = example("nightly-open-orders.workflow.yaml");
    let outputs = tokio::task::spawn_blocking(move || {
        let migrate = dragnet_on(&db, &["migrate"]);
        let first = dragnet_on(&db, &["run", &nightly, "--base-url", &base, "--json"]);
        let second = dragnet_on(&db, &["run", &nightly, "--base-url", &base, "--json"]);
        let refresh = dragnet_on(
            &db,
            &["run", &nightly, "--base-url", &base, "--json", "--refresh"],
        );
        let list = dragnet_on(&db, &["cache", "list", "--json"]);
        let purge = dragnet_on(
            &db,
            &["cache", "purge", "--tool", "shop.listPropertyOrders"],
        );
        let after = dragnet_on(&db, &["cache", "list", "--json"]);
        let runs = dragnet_on(&db, &["runs", "list", "--json"]);
        let show = dragnet_on(&db, &["runs", "show", "nope"]);
        (
            migrate, first, second, refresh, list, purge, after, runs, show,
        )
    })
    .await
    .unwrap();
    let (migrate, first, second, refresh, list, purge, after, runs, show) = outputs;
    assert!(migrate.status.success(), "{}", stderr(&migrate));
    assert!(String::from_utf8_lossy(&migrate.stdout).contains(backend));
    // The fan-out walk is cached (plain calls never are).
    let cache_of = |o: &Output| stdout_json(o)["steps"][1]["output"]["_loop"]["cache"].clone();
    assert_eq!(cache_of(&first)["hit"], false);
    assert_eq!(cache_of(&first)["stored"], true);
    assert_eq!(
        cache_of(&second)["hit"],
        true,
        "the fan-out walk is served from the cache"
    );
    assert_eq!(cache_of(&refresh)["hit"], false, "--refresh fetches again");
    let entries = stdout_json(&list);
    assert_eq!(entries.as_array().unwrap().len(), 1);
    assert_eq!(entries[0]["tool"], "shop.listPropertyOrders");
    assert_eq!(entries[0]["scope"], "org:default");
    assert!(String::from_utf8_lossy(&purge.stdout).contains("purged 1"));
    assert_eq!(stdout_json(&after).as_array().unwrap().len(), 0);
    assert_eq!(stdout_json(&runs).as_array().unwrap().len(), 3);
    assert_eq!(show.status.code(), Some(1));
    assert!(stderr(&show).contains("no run `nope`"));
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn call_fans_out_concurrently_with_the_same_rows() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let spec = spec();
    let out = tokio::task::spawn_blocking(move || {
        let walk = |extra: &[&str]| {
            let mut args = vec![
                "call",
                "--spec",
                &spec,
                "--base-url",
                &base,
                "listPropertyOrders",
                "--for-each",
                "property_id=1,2,3,4,5",
                "--all-pages",
                "--fields",
                "id,property_id",
                "--json",
            ];
            args.extend_from_slice(extra);
            dragnet(&args)
        };
        (
            walk(&[]),
            walk(&["--concurrency", "4"]),
            walk(&["--concurrency", "0"]),
            walk(&["--concurrency", "17"]),
        )
    })
    .await
    .unwrap();
    let (one, four, zero, too_many) = out;
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert_eq!(four.status.code(), Some(0), "{}", stderr(&four));
    let (one, four) = (stdout_json(&one), stdout_json(&four));
    assert_eq!(one["data"], four["data"], "the same rows in value order");
    assert_eq!(four["_pagingComplete"], true);
    for bad in [zero, too_many] {
        assert_eq!(bad.status.code(), Some(1));
        assert!(stderr(&bad).contains("--concurrency"), "{}", stderr(&bad));
    }
    shop.shutdown().await;
}
