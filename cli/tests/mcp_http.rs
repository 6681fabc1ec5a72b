//! `dragnet mcp --http` driven by an independent client (the Python `mcp`
//! package 2.3.0 over streamable HTTP, in `legacy` and `2026-07-28`
//! modes), against the demo shop run in the test so its request log can be
//! read: tokens checked before anything is served; tools listed by the
//! token's agent; a walk cut to the budget, the retrieval-only refusal, a
//! query on a field the answer did not show, a fetch; a cache hit labelled,
//! then `_refresh`; organisations, threads and users kept apart; runtime
//! credentials sent upstream per user, never cached across users, never
//! logged or stored; reserved arguments never reaching the upstream.

mod common;

use common::mcp_http::{bearer, config, gateway, key, plan, token, SECRET};
use common::{command, fresh_db, shop};
use dragnet_gateway::token::{Claims, TokenKey};
use serde_json::{json, Value};

fn walk_orders() -> Value {
    json!({"call": "listOrders", "args": {
        "status": "cancelled", "per_page": 100, "_all_pages": true, "_fields": ["id", "status"]
    }})
}

/// The same walk, past the cache (organisation credentials share it).
fn walk_orders_afresh() -> Value {
    let mut walk = walk_orders();
    walk["args"]["_refresh"] = json!(true);
    walk
}

/// POSTs an `initialize` with `authorization`; the status and body.
async fn initialize(url: &str, authorization: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "1"}}
        }));
    if let Some(a) = authorization {
        request = request.header("authorization", a);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_forged_expired_and_foreign_tokens_are_refused() {
    let shop = shop().await;
    let config = config("acme", shop.base_url());
    let gw = gateway(&config, &fresh_db());
    let good = token("acme", "ada", "analyst");
    let forged = TokenKey::new(b"another secret that is also 32 bytes long")
        .unwrap()
        .mint(&Claims {
            org: "acme".into(),
            sub: "ada".into(),
            agent: "analyst".into(),
            cache_scope: None,
            exp: chrono::Utc::now().timestamp() + 600,
        });
    let expired = key().mint(&Claims {
        org: "acme".into(),
        sub: "ada".into(),
        agent: "analyst".into(),
        cache_scope: None,
        exp: chrono::Utc::now().timestamp() - 5,
    });
    let cases = [
        (None, 401, "no bearer token"),
        (Some("Bearer".to_string()), 401, "no bearer token"),
        (Some(format!("Bearer {forged}")), 401, "signature"),
        (Some(format!("Bearer {expired}")), 401, "expired"),
        (Some("Bearer not.a.jwt".into()), 401, "not a JWT"),
        (
            Some(format!("Bearer {}", token("bravo", "ada", "analyst"))),
            403,
            "organisation",
        ),
        (
            Some(format!("Bearer {}", token("acme", "ada", "nobody"))),
            403,
            "no agent",
        ),
    ];
    for (authorization, status, says) in cases {
        let (got, body) = initialize(&gw.url, authorization.as_deref()).await;
        assert_eq!(got, status, "{authorization:?}: {body}");
        assert!(body.contains(says), "{authorization:?}: {body}");
        if let Some(a) = &authorization {
            let presented = a.trim_start_matches("Bearer ").trim();
            assert!(
                presented.len() < 8 || !body.contains(presented),
                "the refusal repeats the token: {body}"
            );
        }
    }
    let (ok, body) = initialize(&gw.url, Some(&format!("Bearer {good}"))).await;
    assert_eq!(ok, 200, "{body}");
    // The operator's command signs tokens the gateway accepts.
    let minted = command(&fresh_db())
        .env("TEST_MCP_SECRET", SECRET)
        .args(["agent-token", "--config"])
        .arg(&config)
        .args(["--agent", "clerk", "--user", "bob"])
        .output()
        .unwrap();
    assert!(minted.status.success(), "{minted:?}");
    let minted = String::from_utf8(minted.stdout).unwrap();
    let (ok, body) = initialize(&gw.url, Some(&format!("Bearer {}", minted.trim()))).await;
    assert_eq!(ok, 200, "{body}");
    let _ = std::fs::remove_file(&config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_in_both_modes_a_walk_is_cut_read_back_and_cached() {
    let shop = shop().await;
    let config = config("acme", shop.base_url());
    let gw = gateway(&config, &fresh_db());
    for mode in ["legacy", "2026-07-28"] {
        let ada = bearer(&token("acme", &format!("ada-{mode}"), "analyst"));
        let query = |rid: &str| {
            json!({"call": "queryToolResult", "args": {
                "resultId": rid, "filter": [{"field": "total", "op": "gt", "value": 900}],
                "fields": ["id", "total"], "limit": 5}})
        };
        // A first connection learns the result id; the rest of the plan
        // uses it (a legacy session keeps the thread for the connection,
        // so the plan reads it in the same one).
        let seen = plan(
            &gw.url,
            ada.clone(),
            mode,
            json!([
                {"list": true},
                walk_orders_afresh(),
                {"call": "getOrder", "args": {"order_id": 1}}
            ]),
        );
        let tools = &seen[0]["tools"];
        assert!(tools["listOrders"]
            .as_array()
            .unwrap()
            .contains(&json!("_all_pages")));
        assert!(!tools["listOrders"]
            .as_array()
            .unwrap()
            .contains(&json!("_filter")));
        assert!(tools.get("queryToolResult").is_some());
        if mode == "legacy" {
            assert!(seen[0]["instructions"]
                .as_str()
                .unwrap()
                .contains("_all_pages"));
        }
        let walk = &seen[1]["json"];
        assert_eq!(walk["_pagingComplete"], true, "{walk}");
        assert!(walk["_truncated"].is_object(), "{walk}");
        let rid = walk["_resultId"].as_str().unwrap().to_string();
        let progress = seen[1]["progress"].as_array().unwrap();
        assert!(!progress.is_empty(), "no progress in {mode}");
        assert!(progress[0]["message"].get("requestsMax").is_some());
        assert_eq!(seen[2]["error"], true, "retrieval-only: {}", seen[2]);
        assert!(seen[2]["text"].as_str().unwrap().contains(&rid));

        // The same user, thread and cut, in one more connection: stateless
        // requests share the user's thread; a legacy session is a new one.
        let thread = json!({"Authorization": ada["Authorization"], "X-Dragnet-Thread": "t1"});
        let seen = plan(
            &gw.url,
            thread.clone(),
            mode,
            json!([walk_orders(), query("PLACEHOLDER"),]),
        );
        let rid1 = seen[0]["json"]["_resultId"].as_str().unwrap().to_string();
        assert_eq!(
            seen[0]["json"]["_cache"]["hit"], true,
            "the second walk is a hit: {}",
            seen[0]["json"]
        );
        assert!(
            seen[1]["error"].as_bool().unwrap(),
            "an unknown id is an error"
        );
        let seen = plan(
            &gw.url,
            thread.clone(),
            mode,
            json!([
                query(&rid1),
                {"call": "fetchToolResult", "args": {"resultId": rid1, "offset": 0, "length": 40}},
                {"call": "listOrders", "args": {"status": "cancelled", "per_page": 100,
                  "_all_pages": true, "_fields": ["id", "status"], "_refresh": true}},
            ]),
        );
        if mode == "2026-07-28" {
            // The thread is the presented id: the next connection reads it.
            assert_eq!(seen[0]["error"], false, "{}", seen[0]);
            let items = seen[0]["json"]["items"].as_array().unwrap();
            assert!(items.iter().all(|i| i["total"].as_f64().unwrap() > 900.0));
            assert_eq!(seen[1]["json"]["length"], 40, "{}", seen[1]);
        } else {
            // A legacy connection is a session of its own: the id made in
            // another session is not found.
            assert_eq!(seen[0]["error"], true, "{}", seen[0]);
        }
        let refreshed = &seen[2]["json"];
        assert!(
            refreshed.get("_cache").is_none() || refreshed["_cache"]["hit"] == false,
            "_refresh bypasses the cache: {refreshed}"
        );
        // The thread may be presented in `_meta` instead of the header.
        if mode == "2026-07-28" {
            let by_meta = plan(
                &gw.url,
                json!({"Authorization": ada["Authorization"]}),
                mode,
                json!([{"call": "fetchToolResult",
                        "args": {"resultId": rid1, "offset": 0, "length": 10},
                        "meta": {"dev.dragnet/thread": "t1"}}]),
            );
            assert_eq!(by_meta[0]["error"], false, "{}", by_meta[0]);
        }
        // Another thread of the same user cannot read the first thread's id.
        let other = json!({"Authorization": ada["Authorization"], "X-Dragnet-Thread": "t2"});
        let seen = plan(&gw.url, other, mode, json!([query(&rid1)]));
        assert_eq!(seen[0]["error"], true);
        assert!(seen[0]["text"]
            .as_str()
            .unwrap()
            .contains("no stored result"));
    }
    // Every reserved argument over HTTP: a fan-out over three ids,
    // and a filter (never advertised, still honoured).
    let seen = plan(
        &gw.url,
        bearer(&token("acme", "fay", "analyst")),
        "2026-07-28",
        json!([
            {"call": "getOrder", "args": {
                "_for_each": {"key": "order_id", "values": [1, 2, 3]}, "_fields": ["id"]}},
            {"call": "listOrders", "args": {
                "status": "cancelled", "per_page": 100, "_all_pages": true, "_refresh": true,
                "_filter": [{"field": "total", "op": "gt", "value": 990}],
                "_fields": ["id", "total"]}},
        ]),
    );
    assert_eq!(seen[0]["error"], false, "{}", seen[0]);
    assert_eq!(
        seen[0]["json"]["items"],
        json!([{"id": 1}, {"id": 2}, {"id": 3}]),
        "{}",
        seen[0]
    );
    assert_eq!(seen[1]["error"], false, "{}", seen[1]);
    let rows = seen[1]["json"]["data"]
        .as_array()
        .or_else(|| seen[1]["json"]["items"].as_array())
        .unwrap_or_else(|| panic!("{}", seen[1]));
    assert!(
        rows.iter().all(|r| r["total"].as_f64().unwrap() > 990.0),
        "{rows:?}"
    );
    // The clerk's token lists the clerk's tools: no loop layer, no retrieval.
    let clerk = plan(
        &gw.url,
        bearer(&token("acme", "bob", "clerk")),
        "2026-07-28",
        json!([{"list": true}]),
    );
    let tools = clerk[0]["tools"].as_object().unwrap();
    assert_eq!(tools.keys().collect::<Vec<_>>(), vec!["listOrders"]);
    assert!(!tools["listOrders"]
        .as_array()
        .unwrap()
        .contains(&json!("_all_pages")));
    // No reserved argument ever reached the shop.
    for r in shop.requests() {
        assert!(
            r.query.iter().all(|(k, _)| !k.starts_with('_')),
            "{:?}",
            r.query
        );
    }
    let _ = std::fs::remove_file(&config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organisations_are_apart_and_runtime_credentials_stay_with_their_user() {
    let shop = shop().await;
    let db = fresh_db();
    let acme = config("acme", shop.base_url());
    let bravo = config("bravo", shop.base_url());
    let gw_a = gateway(&acme, &db);
    let gw_b = gateway(&bravo, &db);
    let mode = "2026-07-28";
    let seen = plan(
        &gw_a.url,
        bearer(&token("acme", "ada", "analyst")),
        mode,
        json!([walk_orders()]),
    );
    let rid = seen[0]["json"]["_resultId"].as_str().unwrap().to_string();
    // Bravo, on the same store, with the same user name: A's id answers
    // exactly as an unknown id, and A's cached walk is not B's.
    let unknown = format!("res_{}", "0".repeat(32));
    let seen = plan(
        &gw_b.url,
        bearer(&token("bravo", "ada", "analyst")),
        mode,
        json!([
            {"call": "queryToolResult", "args": {"resultId": rid}},
            {"call": "queryToolResult", "args": {"resultId": unknown}},
            walk_orders(),
        ]),
    );
    assert_eq!(seen[0]["error"], true);
    assert_eq!(
        seen[0]["text"].as_str().unwrap().replace(&rid, "ID"),
        seen[1]["text"].as_str().unwrap().replace(&unknown, "ID"),
    );
    assert!(
        seen[2]["json"].get("_cache").is_none(),
        "{}",
        seen[2]["json"]
    );

    // Runtime credentials: each user's own goes upstream; a user's cached
    // walk is never another's.
    let with = |user: &str, secret: &str| {
        json!({"Authorization": format!("Bearer {}", token("acme", user, "mine")),
               "X-Shop-Token": secret})
    };
    let props = json!({"call": "listCustomers", "args": {
        "limit": 100, "_all_pages": true, "_fields": ["id"]}});
    // A plan that first reads `earlier`'s stored result, when it has one.
    let after = |earlier: &Value| {
        let mut steps = Vec::new();
        if let Some(id) = earlier["_resultId"].as_str() {
            steps.push(json!({"call": "queryToolResult", "args": {"resultId": id, "limit": 1}}));
        }
        steps.push(props.clone());
        Value::Array(steps)
    };
    shop.clear_requests();
    let first = plan(
        &gw_a.url,
        with("dee", "dee-secret-1234"),
        mode,
        json!([props]),
    );
    let dee = &first[0]["json"];
    assert_eq!(dee["_pagingComplete"], true, "{first:?}");
    assert!(dee.get("_cache").is_none(), "{dee}");
    let seen = plan(&gw_a.url, with("eve", "eve-secret-5678"), mode, after(dee));
    let eve = seen.last().unwrap();
    assert!(
        eve["json"].get("_cache").is_none(),
        "eve never gets dee's walk: {eve}"
    );
    if seen.len() == 2 {
        assert_eq!(seen[0]["error"], true, "eve cannot read dee's result");
    }
    // Dee (her thread's cut read first, when there was one) walks again:
    // her own walk, from the cache.
    let seen = plan(&gw_a.url, with("dee", "dee-secret-1234"), mode, after(dee));
    assert!(seen.iter().all(|s| s["error"] == false), "{seen:?}");
    assert_eq!(
        seen.last().unwrap()["json"]["_cache"]["hit"],
        true,
        "{seen:?}"
    );
    let sent: Vec<String> = shop
        .requests()
        .iter()
        .filter_map(|r| {
            r.headers
                .iter()
                .find(|(k, _)| k == "authorization")
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert!(
        sent.contains(&"Bearer dee-secret-1234".to_string()),
        "{sent:?}"
    );
    assert!(
        sent.contains(&"Bearer eve-secret-5678".to_string()),
        "{sent:?}"
    );
    assert!(
        shop.requests()
            .iter()
            .all(|r| r.headers.iter().all(|(k, _)| k != "x-shop-token")),
        "the credential header itself is not forwarded"
    );
    // Without the header: a tool error naming it.
    let seen = plan(
        &gw_a.url,
        bearer(&token("acme", "cyd", "mine")),
        mode,
        json!([props]),
    );
    assert_eq!(seen[0]["error"], true);
    assert!(seen[0]["text"].as_str().unwrap().contains("X-Shop-Token"));
    // Never logged (at debug level), never stored.
    let logs = [gw_a.log.clone(), gw_b.log.clone()];
    drop(gw_a);
    drop(gw_b);
    let file = db.trim_start_matches("sqlite://").to_string();
    let mut kept: Vec<u8> = Vec::new();
    for path in logs
        .iter()
        .map(|p| p.display().to_string())
        .chain([file.clone(), format!("{file}-wal")])
    {
        kept.extend(std::fs::read(&path).unwrap_or_default());
    }
    let kept = String::from_utf8_lossy(&kept);
    for secret in ["dee-secret-1234", "eve-secret-5678", SECRET] {
        assert!(!kept.contains(secret), "{secret} was logged or stored");
    }
    let _ = std::fs::remove_file(&acme);
    let _ = std::fs::remove_file(&bravo);
}
