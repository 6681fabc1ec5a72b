//! Whose data a cached walk is: organisation credentials share across the
//! organisation; per-user runtime credentials are private to the user, or
//! to a tenant-wide `cache_scope` asserted when the caller's token was
//! minted. Each scope has its default TTL.

use std::time::Duration;

/// The scope of the credentials that fetched a walk.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CacheScope {
    /// The provider's organisation credentials.
    Organisation { org: String },
    /// Per-user runtime credentials.
    User { org: String, user: String },
    /// Runtime credentials with a tenant-wide `cache_scope`.
    Tenant { org: String, tenant: String },
}

impl CacheScope {
    /// The stored form; parts are escaped so no two scopes collide.
    pub fn key(&self) -> String {
        match self {
            CacheScope::Organisation { org } => format!("org:{}", escape(org)),
            CacheScope::User { org, user } => format!("user:{}:{}", escape(org), escape(user)),
            CacheScope::Tenant { org, tenant } => {
                format!("tenant:{}:{}", escape(org), escape(tenant))
            }
        }
    }

    /// 24 h for organisation credentials, 1 h for runtime credentials.
    pub fn default_ttl(&self) -> Duration {
        match self {
            CacheScope::Organisation { .. } => Duration::from_secs(24 * 3600),
            CacheScope::User { .. } | CacheScope::Tenant { .. } => Duration::from_secs(3600),
        }
    }
}

fn escape(part: &str) -> String {
    part.replace('%', "%25").replace(':', "%3A")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_never_collide() {
        let a = CacheScope::User {
            org: "a:b".into(),
            user: "c".into(),
        };
        let b = CacheScope::User {
            org: "a".into(),
            user: "b:c".into(),
        };
        assert_ne!(a.key(), b.key());
        let t = CacheScope::Tenant {
            org: "a".into(),
            tenant: "b".into(),
        };
        let u = CacheScope::User {
            org: "a".into(),
            user: "b".into(),
        };
        assert_ne!(t.key(), u.key());
        assert_eq!(
            CacheScope::Organisation { org: "acme".into() }
                .default_ttl()
                .as_secs(),
            86_400
        );
        assert_eq!(u.default_ttl().as_secs(), 3_600);
    }
}
