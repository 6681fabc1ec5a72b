//! An answer without a collection is no walk (issue 21): `dragnet demo`'s
//! `createReport` and `createAlert` POSTs show no items, complete or
//! requests counters in the summary table and no "page 1/20 · 0 items"
//! progress line, while the steps that walk still show both; their `_loop`
//! stays as SPEC §3.4 has it. `dragnet call` of a single resource prints
//! it whole with its note, without the rows-and-requests line.

mod common;

use common::{call_args, dragnet, shop, stderr, stdout};

/// The summary row of `step` in the table that follows `run_header`.
fn row<'a>(text: &'a str, run_header: &str, step: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(run_header))
        .find(|l| l.split_whitespace().next() == Some(step))
        .unwrap_or_else(|| panic!("a row for {step} after {run_header}: {text}"))
        .split_whitespace()
        .collect()
}

#[test]
fn demo_shows_no_walk_for_answers_without_a_collection() {
    let o = dragnet(&["demo"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");

    let nightly = "== nightly-open-orders";
    // step, status, items, complete, requests, time, "ms"
    let report = row(&out, nightly, "report");
    assert_eq!(report[..5], ["report", "succeeded", "—", "—", "—"], "{out}");
    let walked = row(&out, nightly, "open_orders");
    assert_eq!(walked[3], "yes", "{out}");
    assert!(walked[2].parse::<u64>().is_ok_and(|n| n > 0), "{out}");
    assert!(walked[4].parse::<u64>().is_ok_and(|n| n > 1), "{out}");
    let alert = row(&out, "== all-orders-audit", "alert");
    assert_eq!(alert[..5], ["alert", "succeeded", "—", "—", "—"], "{out}");
    let orders = row(&out, "== all-orders-audit", "orders");
    assert_eq!(orders[2..5], ["2000", "NO", "20"], "{out}");

    // Progress lines (stderr is no terminal here: one plain line each).
    for step in ["report", "alert"] {
        assert!(
            !err.lines().any(|l| l.starts_with(&format!("{step}: page"))),
            "no progress line for {step}: {err}"
        );
    }
    for step in ["open_orders", "orders", "properties"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with(&format!("{step}: page 1/20 · "))),
            "{step} shows its walk: {err}"
        );
    }
    // The workflow's `_loop` keeps its keys.
    assert!(
        out.contains(r#""_loop":{"complete":true,"requests":1,"itemCount":0,"stoppedBy":null,"note":"Complete: the response has no collection and is returned whole (1 request)."}"#),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn call_of_a_single_resource_prints_no_walk_counters() {
    let shop = shop().await;
    let base = shop.base_url().to_string();
    let (single, walked) = tokio::task::spawn_blocking(move || {
        let run = |extra: &[&str]| {
            let args = call_args(&base, extra);
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            dragnet(&refs)
        };
        (
            run(&["getOrder", "order_id=1"]),
            run(&["listCustomers", "limit=5"]),
        )
    })
    .await
    .unwrap();
    assert_eq!(single.status.code(), Some(0), "{}", stderr(&single));
    let text = stdout(&single);
    assert!(
        text.contains("Complete: the response has no collection"),
        "{text}"
    );
    assert!(
        !text.lines().any(|l| l.contains(" rows, ")),
        "no walk counters: {text}"
    );
    // A collection still gets its counters.
    let text = stdout(&walked);
    assert!(
        text.lines().any(|l| l.contains(": 5 rows, 1 requests")),
        "{text}"
    );
    shop.shutdown().await;
}
