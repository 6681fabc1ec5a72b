//! `dragnet call --paging` (issue 21): the paging roles of a tool named on
//! the command line, with the roles and values of a provider's `paging:`
//! block and checked by the same checker. The demo shop's
//! `/jira/customers` (`startAt` + `maxResults`, names the detection does
//! not know) walks only with its roles named.

mod common;

use common::{call_args, dragnet, shop, stderr, stdout_json};

fn run(args: Vec<String>) -> std::process::Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    dragnet(&refs)
}

#[tokio::test(flavor = "multi_thread")]
async fn named_roles_walk_jira_customers_to_every_row() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let o = tokio::task::spawn_blocking(move || {
        run(call_args(
            &base,
            &[
                "listJiraCustomers",
                "--paging",
                "size=maxResults,offset=startAt",
                "--all-pages",
                "--json",
            ],
        ))
    })
    .await
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["_pagingComplete"], true, "{v}");
    let want: Vec<u64> = dragnet_shop::dataset()
        .customers()
        .iter()
        .map(|c| c.id)
        .collect();
    let got: Vec<u64> = v["values"]
        .as_array()
        .unwrap_or_else(|| panic!("rows under values: {v}"))
        .iter()
        .filter_map(|c| c["id"].as_u64())
        .collect();
    assert_eq!(got, want);
    // Each page starts where the one before ended (the shop caps pages at 50).
    let starts: Vec<String> = shop
        .requests()
        .iter()
        .filter(|r| r.path == "/jira/customers")
        .filter_map(|r| r.query.iter().find(|(k, _)| k == "startAt"))
        .map(|(_, v)| v.clone())
        .collect();
    let expected: Vec<String> = (0..want.len()).step_by(50).map(|n| n.to_string()).collect();
    assert_eq!(starts, expected);
    shop.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_roles_are_a_clear_error_naming_the_real_parameters() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        // Without roles the tool does not walk.
        (vec!["listJiraCustomers", "--all-pages"], vec!["page-size"]),
        (
            vec![
                "listJiraCustomers",
                "--paging",
                "size=maxResults,offset=start",
                "--all-pages",
            ],
            vec![
                "--paging",
                "offset: `start` is not a parameter of `listJiraCustomers`",
                "`startAt`",
                "`maxResults`",
            ],
        ),
        (
            vec!["listJiraCustomers", "--paging", "sise=maxResults"],
            vec!["--paging", "`sise` is not a paging role"],
        ),
        (
            vec!["listJiraCustomers", "--paging", "offset=startAt"],
            vec!["--paging", "size: a page walk needs `size` too"],
        ),
        (
            vec!["listJiraCustomers", "--paging", "cursor=startAt"],
            vec!["--paging", "next: a cursor walk needs `next`"],
        ),
        (
            vec!["listJiraCustomers", "--paging", "size=maxResults,startAt"],
            vec!["--paging", "`startAt` is not role=value"],
        ),
    ];
    let outputs = tokio::task::spawn_blocking(move || {
        cases
            .into_iter()
            .map(|(extra, expected)| (expected, run(call_args(&base, &extra))))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (expected, o) in outputs {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        for part in expected {
            assert!(err.contains(part), "expected `{part}` in {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(
        shop.requests().is_empty(),
        "a bad spec never reaches the upstream"
    );
    shop.shutdown().await;
}
