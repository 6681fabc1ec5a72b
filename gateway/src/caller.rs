//! Who a call is for, from its token: the scope of the cache entries its
//! walks read and write (SPEC §5), and the thread its stored results
//! belong to (SPEC §4).
//!
//! Organisation credentials share cached walks across the organisation
//! (24 h by default); a user's runtime credentials keep them to that user,
//! or to the tenant `cache_scope` the token asserts (1 h). A binding's
//! `dataset_ttl_hours` overrides either. The thread is the MCP session on
//! legacy connections, else the thread id the caller presents, else the
//! token's subject — always within the user, so one user presenting
//! another's thread id reaches nothing of theirs.

use std::collections::BTreeMap;
use std::time::Duration;

use dragnet_core::secret::Secret;
use dragnet_core::ResultScope;
use dragnet_walk::cache::CacheScope;

use crate::token::Claims;

/// Everything a call is made for: who (the verified claims), the thread
/// its stored results belong to, and the credentials the caller presented
/// for providers that take a user's own.
#[derive(Debug, Clone)]
pub struct Caller {
    pub claims: Claims,
    pub scope: ResultScope,
    pub runtime: RuntimeCredentials,
    /// A legacy MCP session (stdio, or HTTP with a session id): its tool
    /// list may grow with the tools it loads. Stateless requests' never does.
    pub session: bool,
}

/// A caller's own credentials, by provider, as presented with the request.
/// Held for the request only: never stored, never logged (`Secret`).
#[derive(Debug, Clone, Default)]
pub struct RuntimeCredentials(BTreeMap<String, Secret>);

impl RuntimeCredentials {
    pub fn insert(&mut self, provider: &str, secret: Secret) {
        self.0.insert(provider.to_string(), secret);
    }

    pub fn get(&self, provider: &str) -> Option<&Secret> {
        self.0.get(provider)
    }

    /// Every credential presented, whatever provider it is for.
    pub fn values(&self) -> impl Iterator<Item = &Secret> {
        self.0.values()
    }
}

/// Which credentials a provider's calls carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialKind {
    /// The provider's organisation credentials (from the server's config).
    Organisation,
    /// The user's own, presented with the request.
    Runtime,
}

/// The cache scope of a call made with `kind` credentials for `claims`.
pub fn cache_scope(claims: &Claims, kind: CredentialKind) -> CacheScope {
    match (kind, &claims.cache_scope) {
        (CredentialKind::Organisation, _) => CacheScope::Organisation {
            org: claims.org.clone(),
        },
        (CredentialKind::Runtime, Some(tenant)) if !tenant.trim().is_empty() => {
            CacheScope::Tenant {
                org: claims.org.clone(),
                tenant: tenant.clone(),
            }
        }
        (CredentialKind::Runtime, _) => CacheScope::User {
            org: claims.org.clone(),
            user: claims.sub.clone(),
        },
    }
}

/// How long a walk cached in `scope` is served: the binding's
/// `dataset_ttl_hours` when set, else the scope's default.
pub fn cache_ttl(scope: &CacheScope, dataset_ttl_hours: Option<u32>) -> Duration {
    match dataset_ttl_hours {
        Some(h) => Duration::from_secs(u64::from(h) * 3600),
        None => scope.default_ttl(),
    }
}

/// The thread a call's stored results belong to.
pub fn result_scope(
    claims: &Claims,
    session: Option<&str>,
    presented: Option<&str>,
) -> ResultScope {
    let user = escape(&claims.sub);
    let thread = match (session, presented) {
        (Some(s), _) if !s.is_empty() => format!("user:{user}/session:{}", escape(s)),
        (_, Some(t)) if !t.is_empty() => format!("user:{user}/thread:{}", escape(t)),
        _ => format!("user:{user}"),
    };
    ResultScope {
        org: claims.org.clone(),
        thread,
    }
}

fn escape(part: &str) -> String {
    part.replace('%', "%25")
        .replace('/', "%2F")
        .replace(':', "%3A")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(user: &str, tenant: Option<&str>) -> Claims {
        Claims {
            org: "acme".into(),
            sub: user.into(),
            agent: "support".into(),
            cache_scope: tenant.map(String::from),
            exp: 0,
        }
    }

    #[test]
    fn runtime_credentials_never_share_across_users_without_a_tenant() {
        let ada = cache_scope(&claims("ada", None), CredentialKind::Runtime);
        let bob = cache_scope(&claims("bob", None), CredentialKind::Runtime);
        assert_ne!(ada.key(), bob.key());
        let ada_t = cache_scope(&claims("ada", Some("eu")), CredentialKind::Runtime);
        let bob_t = cache_scope(&claims("bob", Some("eu")), CredentialKind::Runtime);
        assert_eq!(ada_t.key(), bob_t.key(), "a tenant shares");
        let org_a = cache_scope(&claims("ada", None), CredentialKind::Organisation);
        let org_b = cache_scope(&claims("bob", Some("eu")), CredentialKind::Organisation);
        assert_eq!(org_a.key(), org_b.key(), "organisation credentials share");
        assert_eq!(cache_ttl(&org_a, None), Duration::from_secs(86_400));
        assert_eq!(cache_ttl(&ada, None), Duration::from_secs(3_600));
        assert_eq!(cache_ttl(&ada, Some(6)), Duration::from_secs(6 * 3_600));
    }

    #[test]
    fn threads_are_the_session_the_presented_id_or_the_user_and_always_the_users() {
        let ada = claims("ada", None);
        let bob = claims("bob", None);
        let a = result_scope(&ada, Some("s1"), Some("t9"));
        assert!(a.thread.ends_with("session:s1"));
        assert!(result_scope(&ada, None, Some("t9"))
            .thread
            .ends_with("thread:t9"));
        assert_eq!(result_scope(&ada, None, None).thread, "user:ada");
        // Bob presenting Ada's thread id is in a thread of his own.
        assert_ne!(
            result_scope(&ada, None, Some("t9")),
            result_scope(&bob, None, Some("t9"))
        );
        // Separators in ids cannot forge another thread.
        let tricky = claims("ada/session:s1", None);
        assert_ne!(result_scope(&tricky, None, None).thread, a.thread);
    }
}
