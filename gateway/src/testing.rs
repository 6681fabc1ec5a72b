//! What the crate's in-process tests share: a gateway over the demo shop
//! (`base_url: embedded` pointed at a shop on a free port, stored results
//! in memory) and a caller of an agent.

use std::path::Path;
use std::sync::Arc;

use dragnet_core::clock::SystemClock;
use dragnet_shop::ShopHandle;

use crate::caller::{result_scope, Caller, RuntimeCredentials};
use crate::config;
use crate::memory::Memory;
use crate::runtime::{Gateway, Services};
use crate::token::Claims;

/// A shop on a free port and a gateway compiled from `yaml` that calls it.
pub(crate) async fn gateway_over_shop(yaml: &str) -> (Gateway, ShopHandle) {
    let shop = dragnet_shop::start("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("agent.yaml");
    let cfg = config::load_str(&source, yaml).expect("the configuration compiles");
    let g = Gateway::start(
        cfg,
        Services {
            env: Arc::new(|_| None),
            embedded: Some(shop.base_url().to_string()),
            results: Arc::new(Memory::default()),
            cache: None,
            clock: Arc::new(SystemClock),
            connections: None,
        },
    )
    .await
    .unwrap();
    (g, shop)
}

/// User `u1` of organisation `demo`, calling as `agent` in `thread` (its
/// session when `session`).
pub(crate) fn caller(agent: &str, thread: &str, session: bool) -> Caller {
    let claims = Claims {
        org: "demo".into(),
        sub: "u1".into(),
        agent: agent.into(),
        cache_scope: None,
        exp: i64::MAX,
    };
    Caller {
        scope: result_scope(&claims, session.then_some(thread), Some(thread)),
        claims,
        runtime: RuntimeCredentials::default(),
        session,
    }
}
