//! Upstreams that misbehave on purpose, over real HTTP: a page one that
//! contradicts its schema or total, bodies far larger than the byte bound
//! (finite and endless), secrets echoed back in bodies and errors, and
//! redirects to other origins, to non-HTTP schemes and in loops.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use axum::{Json, Router};
use dragnet_core::secret::Secret;
use dragnet_core::{Error, Limits, StopReason, UpstreamError};
use dragnet_e2e::{serve, test_limits, tool_from_doc, walk_with, Harness};
use dragnet_http::{Credentials, HttpUpstream};
use serde_json::{json, Value};

const LIST_DOC: &str = r#"{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
  "/items":{"get":{"operationId":"items","parameters":[
    {"name":"page","in":"query","schema":{"type":"integer","minimum":1}},
    {"name":"per_page","in":"query","schema":{"type":"integer","maximum":10}}],
    "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
      "type":"object","properties":{"data":{"type":"array","items":{"type":"object"}},
      "total":{"type":"integer"}}}}}}}}},
  "/fail":{"get":{"operationId":"fail","responses":{"200":{"description":"ok"}}}},
  "/hop":{"get":{"operationId":"hop","responses":{"200":{"description":"ok"}}}},
  "/loop":{"get":{"operationId":"loop","responses":{"200":{"description":"ok"}}}},
  "/ftp":{"get":{"operationId":"ftp","responses":{"200":{"description":"ok"}}}},
  "/same":{"get":{"operationId":"same","responses":{"200":{"description":"ok"}}}}
}}"#;

// ---- page one contradicting its schema or its total ------------------------

#[tokio::test]
async fn page_one_without_its_declared_collection_is_an_error_not_complete() {
    let h = Harness::start().await;
    let err = h
        .call(
            "listOrders",
            json!({"status": "open", "_all_pages": true}),
            "missing-collection=1",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Upstream(UpstreamError::MalformedPage { page: 1, .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("`data`"), "{err}");
    // One page, not walked: the same.
    let err = h
        .call(
            "listOrders",
            json!({"status": "open"}),
            "missing-collection=1",
        )
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        Error::Upstream(UpstreamError::MalformedPage { .. })
    ));
}

#[tokio::test]
async fn a_collection_that_is_an_object_or_missing_under_a_total_is_malformed() {
    let tool = tool_from_doc(LIST_DOC, "items");
    for body in [
        json!({"data": {"id": 1}, "total": 5}),
        json!({"total": 5}),
        json!({"data": null, "total": 5}),
    ] {
        let app = Router::new().route("/items", get(move || async move { Json(body) }));
        let up = HttpUpstream::new(&serve(app).await, Credentials::None).unwrap();
        let err = walk_with(&tool, &up, test_limits()).await.unwrap_err();
        assert!(
            matches!(err, Error::Upstream(UpstreamError::MalformedPage { .. })),
            "{err}"
        );
    }
    // Without a declared schema, a list with a total but no rows is malformed too.
    let undeclared = r#"{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/items":{"get":{
      "operationId":"items","parameters":[
      {"name":"page","in":"query","schema":{"type":"integer"}},
      {"name":"limit","in":"query","schema":{"type":"integer"}}],
      "responses":{"200":{"description":"ok"}}}}}}"#;
    let tool = tool_from_doc(undeclared, "items");
    let app = Router::new().route(
        "/items",
        get(|| async { Json(json!({"meta": {"total": 12}})) }),
    );
    let up = HttpUpstream::new(&serve(app).await, Credentials::None).unwrap();
    let err = walk_with(&tool, &up, test_limits()).await.unwrap_err();
    assert!(err.to_string().contains("total of 12"), "{err}");
}

// ---- the byte bound inside one response ------------------------------------

/// A chunked body of `{"data":[…` that goes on for `limit` bytes (or for
/// ever), counting what the server produced.
fn flood(produced: Arc<AtomicU64>, limit: Option<u64>) -> Router {
    Router::new().route(
        "/items",
        get(move || {
            let produced = produced.clone();
            async move {
                let chunk = format!("{{\"id\":1,\"pad\":\"{}\"}},", "x".repeat(64 * 1024));
                let head = futures::stream::once(async {
                    Ok::<_, std::io::Error>("{\"data\":[".to_string())
                });
                let rows = futures::stream::unfold(0u64, move |sent| {
                    let chunk = chunk.clone();
                    let produced = produced.clone();
                    async move {
                        if limit.is_some_and(|l| sent >= l) {
                            return None;
                        }
                        produced.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                        Some((Ok(chunk.clone()), sent + chunk.len() as u64))
                    }
                });
                let tail = futures::stream::once(async { Ok("{\"id\":2}]}".to_string()) });
                use futures::StreamExt;
                Body::from_stream(head.chain(rows).chain(tail))
            }
        }),
    )
}

#[tokio::test]
async fn a_body_past_the_byte_bound_is_not_read_further() {
    let tool = tool_from_doc(LIST_DOC, "items");
    let limits = Limits {
        max_bytes: 1_000_000,
        ..test_limits()
    };
    for limit in [Some(200_000_000), None] {
        let produced = Arc::new(AtomicU64::new(0));
        let base = serve(flood(produced.clone(), limit)).await;
        let up = HttpUpstream::new(&base, Credentials::None).unwrap();
        let r = walk_with(&tool, &up, limits.clone()).await.unwrap();
        assert!(!r.verdict.complete);
        assert_eq!(r.verdict.stopped_by, Some(StopReason::Bytes), "{limit:?}");
        // Give the server a moment to notice the dropped connection.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let sent = produced.load(Ordering::Relaxed);
        assert!(
            sent < 32_000_000,
            "{limit:?}: the server produced {sent} bytes for a 1 MB bound"
        );
    }
}

// ---- secrets echoed back ---------------------------------------------------

const TOKEN: &str = "tok-SECRET-8f3a2c";
const API_KEY: &str = "key-SECRET-51d0e9";
const HEADER_VALUE: &str = "hdr-SECRET-77b1aa";

/// Every request header, echoed: as rows on `/items`, in a 500 on `/fail`.
fn echo() -> Router {
    fn seen(headers: &HeaderMap) -> Value {
        headers
            .iter()
            .map(|(k, v)| (k.to_string(), json!(String::from_utf8_lossy(v.as_bytes()))))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
    Router::new()
        .route(
            "/items",
            get(|headers: HeaderMap| async move {
                Json(json!({"data": [{"id": 1, "seen": seen(&headers)}], "total": 1}))
            }),
        )
        .route(
            "/fail",
            get(|headers: HeaderMap| async move {
                let text = format!("denied for {:?}", headers);
                (StatusCode::INTERNAL_SERVER_ERROR, text)
            }),
        )
}

fn assert_clean(text: &str, what: &str) {
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("ada:{TOKEN}"));
    for secret in [TOKEN, API_KEY, HEADER_VALUE, basic.as_str()] {
        assert!(!text.contains(secret), "{what} carries a secret: {text}");
    }
}

#[tokio::test]
async fn echoed_secrets_never_reach_results_or_errors() {
    let base = serve(echo()).await;
    let items = tool_from_doc(LIST_DOC, "items");
    let fail = tool_from_doc(LIST_DOC, "fail");
    for credentials in [
        Credentials::Bearer(Secret::new(TOKEN)),
        Credentials::ApiKeyHeader {
            header: "X-Api-Key".into(),
            key: Secret::new(API_KEY),
        },
        Credentials::Basic {
            user: "ada".into(),
            password: Secret::new(TOKEN),
        },
    ] {
        let up = HttpUpstream::new(&base, credentials)
            .unwrap()
            .with_header("X-Extra", Secret::new(HEADER_VALUE));
        let r = walk_with(&items, &up, test_limits()).await.unwrap();
        let rendered = dragnet_gateway::render::render(&r);
        assert!(rendered.contains("[redacted]"), "{rendered}");
        assert_clean(&rendered, "the agent rendering");
        assert_clean(&r.render_workflow(), "the workflow rendering");
        let err = walk_with(&fail, &up, test_limits()).await.unwrap_err();
        assert_clean(&err.to_string(), "the error");
        assert_clean(&format!("{err:?}"), "the error's debug form");
    }
}

// ---- redirects -------------------------------------------------------------

type Seen = Arc<Mutex<Vec<(String, HeaderMap)>>>;

fn recording(seen: Seen, other: Option<String>) -> Router {
    let record = move |path: &'static str| {
        let seen = seen.clone();
        move |headers: HeaderMap| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push((path.to_string(), headers));
                Json(json!({"ok": path}))
            }
        }
    };
    let mut app = Router::new()
        .route("/items", get(record("/items")))
        .route("/landing", get(record("/landing")))
        .route("/same", get(|| async { Redirect::temporary("/landing") }))
        .route("/loop", get(|| async { Redirect::temporary("/loop") }))
        .route(
            "/ftp",
            get(|| async {
                (StatusCode::FOUND, [("location", "ftp://127.0.0.1/secret")]).into_response()
            }),
        );
    if let Some(other) = other {
        app = app.route(
            "/hop",
            get(move || {
                let to = format!("{other}/landing");
                async move { Redirect::temporary(&to).into_response() }
            }),
        );
    }
    app
}

#[tokio::test]
async fn nothing_secret_follows_a_redirect_to_another_origin() {
    let seen_b: Seen = Arc::default();
    let b = serve(recording(seen_b.clone(), None)).await;
    let seen_a: Seen = Arc::default();
    let a = serve(recording(seen_a.clone(), Some(b.clone()))).await;
    let up = HttpUpstream::new(&a, Credentials::Bearer(Secret::new(TOKEN)))
        .unwrap()
        .with_header("X-Extra", Secret::new(HEADER_VALUE));
    let key_up = HttpUpstream::new(
        &a,
        Credentials::ApiKeyHeader {
            header: "X-Api-Key".into(),
            key: Secret::new(API_KEY),
        },
    )
    .unwrap();
    let call = |name: &str| tool_from_doc(LIST_DOC, name);
    // Another origin (another port): followed, with nothing secret.
    for upstream in [&up, &key_up] {
        let r = walk_with(&call("hop"), upstream, test_limits())
            .await
            .unwrap();
        assert!(r.verdict.complete);
    }
    let at_b = seen_b.lock().unwrap().clone();
    assert_eq!(at_b.len(), 2);
    for (_, headers) in &at_b {
        for name in ["authorization", "x-api-key", "x-extra"] {
            assert!(headers.get(name).is_none(), "{name} followed to {b}");
        }
    }
    // The same origin: credentials and headers are kept.
    walk_with(&call("same"), &up, test_limits()).await.unwrap();
    let landing = seen_a.lock().unwrap().last().cloned().unwrap();
    assert_eq!(landing.0, "/landing");
    assert_eq!(
        landing.1.get("authorization").unwrap(),
        &format!("Bearer {TOKEN}")
    );
    assert_eq!(landing.1.get("x-extra").unwrap(), HEADER_VALUE);
    // A loop stops after a few hops; a non-HTTP target is refused.
    let err = walk_with(&call("loop"), &up, test_limits())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("redirects"), "{err}");
    let err = walk_with(&call("ftp"), &up, test_limits())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ftp"), "{err}");
}
