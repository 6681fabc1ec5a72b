//! A cache key names which upstream answered: the same tool and arguments
//! against two servers seeded differently never share an entry, on
//! PostgreSQL and SQLite.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::routing::get;
use axum::{Json, Router};
use dragnet_core::ports::cache::CacheMode;
use dragnet_core::Tool;
use dragnet_e2e::{ids, serve, test_limits, tool_from_doc};
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_store::on_both_backends;
use dragnet_store::testing::{t0, TestClock};
use dragnet_store::Db;
use dragnet_walk::cache::{CachePolicy, CacheScope};
use dragnet_walk::{LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::json;

const DOC: &str = r#"{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/orders":{"get":{
  "operationId":"listOrders","parameters":[
    {"name":"page","in":"query","schema":{"type":"integer","minimum":1}},
    {"name":"per_page","in":"query","schema":{"type":"integer","maximum":10}}],
  "responses":{"200":{"description":"ok"}}}}}}"#;

/// Five orders whose ids start at `first`; counts the requests it answers.
fn seeded(first: i64, hits: Arc<AtomicU64>) -> Router {
    Router::new().route(
        "/orders",
        get(move || {
            hits.fetch_add(1, Ordering::Relaxed);
            async move {
                let data: Vec<_> = (first..first + 5).map(|id| json!({"id": id})).collect();
                Json(json!({"data": data, "total": 5}))
            }
        }),
    )
}

async fn call(tool: &Tool, base: &str, db: &Db) -> LoopResult {
    let policy = CachePolicy {
        store: Arc::new(db.cache()),
        mode: CacheMode::On,
        ttl: std::time::Duration::from_secs(3600),
        scope: CacheScope::Organisation { org: "acme".into() },
        tool_id: "shop.listOrders".into(),
        read: true,
        clock: Arc::new(TestClock::new(t0())),
    };
    let call = ToolCall {
        tool,
        arguments: Default::default(),
        options: LoopOptions {
            all_pages: true,
            ..LoopOptions::default()
        },
        limits: test_limits(),
        cache: Some(policy),
    };
    let upstream = HttpUpstream::new(base, Credentials::None).unwrap();
    dragnet_walk::execute(call, &upstream, &Runtime::quiet())
        .await
        .unwrap()
}

async fn two_servers_never_share_an_entry(db: Db) -> anyhow::Result<()> {
    let tool = tool_from_doc(DOC, "listOrders");
    let (hits_a, hits_b) = (Arc::default(), Arc::default());
    let a = serve(seeded(1, Arc::clone(&hits_a))).await;
    let b = serve(seeded(100, Arc::clone(&hits_b))).await;
    let from_a = call(&tool, &a, &db).await;
    assert_eq!(ids(&from_a), vec![1, 2, 3, 4, 5]);
    let from_b = call(&tool, &b, &db).await;
    assert!(!from_b.cache.as_ref().unwrap().hit, "B was served A's rows");
    assert_eq!(ids(&from_b), vec![100, 101, 102, 103, 104]);
    assert_eq!(hits_b.load(Ordering::Relaxed), 1);
    // Each server's own entry still hits.
    let again = call(&tool, &a, &db).await;
    assert!(again.cache.as_ref().unwrap().hit);
    assert_eq!(ids(&again), vec![1, 2, 3, 4, 5]);
    assert_eq!(hits_a.load(Ordering::Relaxed), 1);
    assert_eq!(db.cache().cache_list().await?.len(), 2);
    Ok(())
}

on_both_backends!(two_servers_never_share_an_entry);
