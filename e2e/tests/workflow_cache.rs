//! Workflow steps and the cache, on PostgreSQL and SQLite: off unless a step
//! opts in with `loop.cache`; an opted-in step is served from the cache on
//! the next run (`_loop.cache.hit`), `--refresh` fetches again and replaces,
//! experiment runs never read; run records are written as the run goes. A
//! step served the cached rows as they are is stored as a pointer at them
//! and reads back byte for byte, also after a refresh replaced the entry.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use dragnet_core::ports::cache::CacheMode;
use dragnet_engine::run::{self, Fanout, RunCache, RunOptions, RunRecord};
use dragnet_engine::workflow;
use dragnet_shop::ShopHandle;
use dragnet_store::on_both_backends;
use dragnet_store::testing::{t0, TestClock};
use dragnet_store::{Db, ObserverOptions, StoreObserver};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

const WORKFLOW: &str = "name: cached
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
steps:
  - id: cached
    tool: shop.listOrders
    input: {status: paid}
    loop: {all_pages: true, fields: [id], cache: {ttl_minutes: 30}}
  - id: plain
    tool: shop.listOrders
    input: {status: shipped}
    loop: {all_pages: true, cache: {ttl_minutes: 30}}
  - id: uncached
    tool: shop.listCustomers
    loop: {all_pages: true}
";

async fn run_once(
    db: &Db,
    shop: &ShopHandle,
    experiment: bool,
    refresh: bool,
) -> anyhow::Result<RunRecord> {
    let source = dragnet_shop::openapi_path()
        .parent()
        .unwrap()
        .join("cached.workflow.yaml");
    let wf = Arc::new(workflow::load_str(&source, WORKFLOW).map_err(|d| anyhow::anyhow!("{d}"))?);
    let tracker = TaskTracker::new();
    let clock = Arc::new(TestClock::new(t0()));
    let store = Arc::new(StoreObserver::start(
        db.runs(),
        clock.clone(),
        ObserverOptions::default(),
        &tracker,
        CancellationToken::new(),
    ));
    let options = RunOptions {
        base_urls: HashMap::from([("shop".to_string(), shop.base_url().to_string())]),
        cache: Some(RunCache {
            store: Arc::new(db.cache()),
            mode: CacheMode::On,
            org: "acme".into(),
            experiment,
            refresh,
        }),
        clock,
        ..RunOptions::default()
    };
    let record = run::run(wf, options, Arc::new(Fanout(vec![store.clone()]))).await?;
    store.close().await;
    Ok(record)
}

fn loop_of(record: &RunRecord, step: &str) -> Value {
    let out: Value =
        serde_json::from_str(record.step(step).unwrap().output.as_ref().unwrap().get()).unwrap();
    out["_loop"].clone()
}

async fn opted_in_steps_are_served_from_the_cache(db: Db) -> anyhow::Result<()> {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let paths = |shop: &ShopHandle| -> Vec<String> {
        shop.requests().into_iter().map(|r| r.path).collect()
    };

    let first = run_once(&db, &shop, false, false).await?;
    assert_eq!(loop_of(&first, "cached")["cache"]["stored"], true);
    assert!(
        loop_of(&first, "uncached").get("cache").is_none(),
        "off unless the step opts in"
    );
    let entries = db.cache().cache_list().await?;
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|e| e.tool == "shop.listOrders"));
    assert_eq!(entries[0].scope, "org:acme");

    shop.clear_requests();
    let second = run_once(&db, &shop, false, false).await?;
    let cached = loop_of(&second, "cached");
    assert_eq!(cached["cache"]["hit"], true);
    assert_eq!(cached["complete"], true);
    assert_eq!(cached["requests"], 0);
    assert!(
        paths(&shop).iter().all(|p| p == "/customers"),
        "only the uncached step reached the shop"
    );
    assert_eq!(
        loop_of(&second, "cached")["itemCount"],
        loop_of(&first, "cached")["itemCount"]
    );
    assert_eq!(loop_of(&second, "plain")["cache"]["hit"], true);
    // The rows as cached are pointed at; projected ones are not them.
    assert!(second.step("plain").unwrap().served_from.is_some());
    assert!(second.step("cached").unwrap().served_from.is_none());
    let outputs = |r: &RunRecord| -> Vec<Option<String>> {
        let text = |s: &run::StepRecord| s.output.as_ref().map(|d| d.get().to_string());
        r.steps.iter().map(text).collect()
    };
    let read_back = db.runs().get_run(&second.run_id).await?.unwrap();
    assert_eq!(outputs(&read_back), outputs(&second), "byte for byte");

    shop.clear_requests();
    let refreshed = run_once(&db, &shop, false, true).await?;
    assert_eq!(loop_of(&refreshed, "cached")["cache"]["hit"], false);
    assert!(
        paths(&shop).iter().any(|p| p == "/orders"),
        "--refresh fetches again"
    );
    let read_back = db.runs().get_run(&second.run_id).await?.unwrap();
    assert_eq!(
        outputs(&read_back),
        outputs(&second),
        "what the second run was served outlives the entry it was served from"
    );

    shop.clear_requests();
    let experiment = run_once(&db, &shop, true, false).await?;
    assert_eq!(loop_of(&experiment, "cached")["cache"]["hit"], false);
    assert!(
        paths(&shop).iter().any(|p| p == "/orders"),
        "experiments never read the cache"
    );

    // every run was recorded, with its steps
    let runs = db.runs().list_runs(10).await?;
    assert_eq!(runs.len(), 4);
    let stored = serde_json::to_value(db.runs().get_run(&second.run_id).await?.unwrap())?;
    assert_eq!(stored["status"], "succeeded");
    assert_eq!(stored["steps"][0]["verdict"]["complete"], true);
    shop.shutdown().await;
    Ok(())
}

on_both_backends!(opted_in_steps_are_served_from_the_cache);
