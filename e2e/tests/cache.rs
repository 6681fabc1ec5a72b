//! The cache in the loop layer over real HTTP, on PostgreSQL and SQLite:
//! a hit makes no upstream request, only complete walks are stored, a new
//! `_fields`/`_filter` still hits, `_refresh` replaces, shadow never serves,
//! experiments never read, TTLs follow an injected clock, and scopes never
//! cross.

use std::sync::Arc;

use chrono::Duration as Span;
use dragnet_core::ports::cache::CacheMode;
use dragnet_e2e::{agent_view, ids, test_limits, Harness};
use dragnet_store::on_both_backends;
use dragnet_store::testing::{t0, TestClock};
use dragnet_store::Db;
use dragnet_walk::cache::{CachePolicy, CacheScope};
use dragnet_walk::{LoopOptions, LoopResult, Runtime, ToolCall};
use serde_json::{json, Value};

struct Setup {
    h: Harness,
    db: Db,
    clock: Arc<TestClock>,
}

impl Setup {
    async fn new(db: Db) -> Setup {
        Setup {
            h: Harness::start().await,
            db,
            clock: Arc::new(TestClock::new(t0())),
        }
    }

    fn policy(&self, mode: CacheMode, scope: CacheScope, read: bool) -> CachePolicy {
        CachePolicy {
            store: Arc::new(self.db.cache()),
            mode,
            ttl: scope.default_ttl(),
            scope,
            tool_id: "shop.listOrders".into(),
            read,
            clock: self.clock.clone(),
        }
    }

    async fn call(&self, args: Value, fault: &str, policy: CachePolicy) -> LoopResult {
        let Value::Object(map) = args else { panic!() };
        let (arguments, options) = LoopOptions::split_reserved(map).unwrap();
        let call = ToolCall {
            tool: self.h.tool("listOrders"),
            arguments,
            options,
            limits: test_limits(),
            cache: Some(policy),
        };
        dragnet_walk::execute(call, &self.h.upstream(fault), &Runtime::quiet())
            .await
            .unwrap()
    }

    fn requests(&self) -> usize {
        self.h.requests().len()
    }
}

fn org() -> CacheScope {
    CacheScope::Organisation { org: "acme".into() }
}

fn walk() -> Value {
    json!({"status": "open", "_all_pages": true})
}

async fn a_hit_makes_no_request_and_is_labelled(db: Db) -> anyhow::Result<()> {
    let s = Setup::new(db).await;
    let first = s
        .call(walk(), "", s.policy(CacheMode::On, org(), true))
        .await;
    assert!(first.verdict.complete);
    let label = first.cache.clone().unwrap();
    assert!(!label.hit && label.stored);
    let before = s.requests();
    // a different projection and filter are still a hit
    let args = json!({"status": "open", "_all_pages": true, "_fields": ["id", "total"],
                      "_filter": [{"field": "total", "op": "gt", "value": 900}]});
    let hit = s.call(args, "", s.policy(CacheMode::On, org(), true)).await;
    assert_eq!(s.requests(), before, "a hit makes no upstream request");
    assert!(hit.cache.as_ref().unwrap().hit);
    assert!(hit.verdict.complete);
    assert_eq!(hit.verdict.requests, 0);
    assert_eq!(hit.verdict.item_count, first.verdict.item_count);
    assert!(ids(&hit).len() < first.verdict.item_count);
    let view = agent_view(&hit);
    assert_eq!(view["_cache"]["hit"], true);
    assert!(view["_cache"]["cachedAt"].is_string() && view["_cache"]["expiresAt"].is_string());
    assert!(view["_note"].as_str().unwrap().contains("_refresh: true"));
    let workflow_view: Value = serde_json::from_str(&hit.render_workflow())?;
    assert_eq!(workflow_view["_loop"]["cache"]["hit"], true);
    let workflow_note = workflow_view["_loop"]["note"].as_str().unwrap();
    assert!(
        workflow_note.contains("dragnet run --refresh"),
        "{workflow_note}"
    );
    assert!(!workflow_note.contains("_refresh"), "{workflow_note}");
    // the same rows as a live walk, shaped the same way
    let live =
        s.h.call(
            "listOrders",
            json!({"status": "open", "_all_pages": true, "_fields": ["id", "total"],
        "_filter": [{"field": "total", "op": "gt", "value": 900}]}),
            "",
        )
        .await?;
    assert_eq!(ids(&hit), ids(&live));
    Ok(())
}

async fn only_complete_walks_are_stored(db: Db) -> anyhow::Result<()> {
    let s = Setup::new(db).await;
    let partial = s
        .call(
            walk(),
            "status=3:500:always",
            s.policy(CacheMode::On, org(), true),
        )
        .await;
    assert!(!partial.verdict.complete);
    assert!(!partial.cache.unwrap().stored);
    assert!(s.db.cache().cache_list().await?.is_empty());
    let one_page = s
        .call(
            json!({"status": "open"}),
            "",
            s.policy(CacheMode::On, org(), true),
        )
        .await;
    assert!(!one_page.verdict.complete);
    assert!(
        s.db.cache().cache_list().await?.is_empty(),
        "a single page of a walkable tool is not complete"
    );
    Ok(())
}

async fn refresh_bypasses_and_replaces(db: Db) -> anyhow::Result<()> {
    let s = Setup::new(db).await;
    s.call(walk(), "", s.policy(CacheMode::On, org(), true))
        .await;
    s.clock.advance(Span::minutes(10));
    let before = s.requests();
    let args = json!({"status": "open", "_all_pages": true, "_refresh": true});
    let fresh = s.call(args, "", s.policy(CacheMode::On, org(), true)).await;
    assert!(s.requests() > before, "refresh fetched again");
    let label = fresh.cache.unwrap();
    assert!(!label.hit && label.stored);
    let list = s.db.cache().cache_list().await?;
    assert_eq!(list.len(), 1, "replaced, not added");
    assert_eq!(list[0].cached_at, t0() + Span::minutes(10));
    Ok(())
}

async fn shadow_records_but_never_serves(db: Db) -> anyhow::Result<()> {
    let s = Setup::new(db).await;
    s.call(walk(), "", s.policy(CacheMode::Shadow, org(), true))
        .await;
    assert_eq!(
        s.db.cache().cache_list().await?.len(),
        1,
        "shadow records the walk"
    );
    let before = s.requests();
    let again = s
        .call(walk(), "", s.policy(CacheMode::Shadow, org(), true))
        .await;
    assert!(s.requests() > before, "shadow never serves");
    assert!(!again.cache.unwrap().hit);
    // off: neither
    let off = s
        .call(walk(), "", s.policy(CacheMode::Off, org(), true))
        .await;
    assert!(off.cache.is_none());
    Ok(())
}

async fn experiments_never_read(db: Db) -> anyhow::Result<()> {
    let s = Setup::new(db).await;
    s.call(walk(), "", s.policy(CacheMode::On, org(), true))
        .await;
    let before = s.requests();
    let experiment = s
        .call(walk(), "", s.policy(CacheMode::On, org(), false))
        .await;
    assert!(s.requests() > before);
    assert!(!experiment.cache.unwrap().hit);
    Ok(())
}

async fn ttl_follows_the_injected_clock(db: Db) -> anyhow::Result<()> {
    let s = Setup::new(db).await;
    let user = CacheScope::User {
        org: "acme".into(),
        user: "u1".into(),
    };
    s.call(walk(), "", s.policy(CacheMode::On, user.clone(), true))
        .await;
    s.clock.advance(Span::minutes(59));
    let before = s.requests();
    assert!(
        s.call(walk(), "", s.policy(CacheMode::On, user.clone(), true))
            .await
            .cache
            .unwrap()
            .hit
    );
    assert_eq!(s.requests(), before);
    s.clock.advance(Span::minutes(2));
    let expired = s
        .call(walk(), "", s.policy(CacheMode::On, user, true))
        .await;
    assert!(
        !expired.cache.unwrap().hit,
        "runtime credentials expire after an hour"
    );
    assert!(s.requests() > before);
    Ok(())
}

async fn a_hit_never_crosses_scopes(db: Db) -> anyhow::Result<()> {
    let s = Setup::new(db).await;
    let alice = CacheScope::User {
        org: "acme".into(),
        user: "alice".into(),
    };
    let bob = CacheScope::User {
        org: "acme".into(),
        user: "bob".into(),
    };
    let tenant = CacheScope::Tenant {
        org: "acme".into(),
        tenant: "eu".into(),
    };
    s.call(walk(), "", s.policy(CacheMode::On, alice.clone(), true))
        .await;
    for other in [
        bob,
        tenant,
        org(),
        CacheScope::User {
            org: "other".into(),
            user: "alice".into(),
        },
    ] {
        let r = s
            .call(walk(), "", s.policy(CacheMode::On, other.clone(), true))
            .await;
        assert!(!r.cache.unwrap().hit, "{other:?} must not see alice's walk");
    }
    assert!(
        s.call(walk(), "", s.policy(CacheMode::On, alice, true))
            .await
            .cache
            .unwrap()
            .hit
    );
    Ok(())
}

on_both_backends!(
    a_hit_makes_no_request_and_is_labelled,
    only_complete_walks_are_stored,
    refresh_bypasses_and_replaces,
    shadow_records_but_never_serves,
    experiments_never_read,
    ttl_follows_the_injected_clock,
    a_hit_never_crosses_scopes,
);
