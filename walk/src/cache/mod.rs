//! The cache of complete walks (SPEC §5), as the loop layer sees it: keys,
//! scopes and the policy of one call around the `CacheStore` port
//! (dragnet-core). Only complete walks are stored; the stored set is
//! unprojected and unfiltered, so a new `_fields` or `_filter` is still a
//! hit. A hit never crosses scopes: the scope is part of every lookup.

pub mod around;
pub mod key;
pub mod scope;
pub mod stored;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use dragnet_core::clock::Clock;
use dragnet_core::ports::cache::{CacheMode, CacheStore};

pub use key::cache_key;
pub use scope::CacheScope;

/// How one call uses the cache.
#[derive(Clone)]
pub struct CachePolicy {
    pub store: Arc<dyn CacheStore>,
    pub mode: CacheMode,
    pub scope: CacheScope,
    pub ttl: Duration,
    /// Names the tool in keys and listings, e.g. `shop.listOrders`.
    pub tool_id: String,
    /// False for experiment runs, which never read the cache.
    pub read: bool,
    pub clock: Arc<dyn Clock>,
}

impl fmt::Debug for CachePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachePolicy")
            .field("mode", &self.mode)
            .field("scope", &self.scope)
            .field("ttl", &self.ttl)
            .field("tool_id", &self.tool_id)
            .field("read", &self.read)
            .finish()
    }
}
