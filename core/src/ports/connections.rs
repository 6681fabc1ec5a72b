//! The connection store: connected-app credentials (SPEC §7) at rest,
//! one sealed value per owner and provider. The store keeps sealed bytes
//! only; the gateway seals and opens them, with the owner and provider
//! bound in, so a value copied to another owner's row does not open.

use super::StoreFuture;

/// Whose a connection is: the organisation, and `user:<sub>` or
/// `tenant:<cache_scope>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionOwner {
    pub org: String,
    pub owner: String,
}

/// Keeps sealed connections.
pub trait ConnectionStore: Send + Sync {
    /// Stores (or replaces) `owner`'s sealed credentials for `provider`.
    fn put_sealed<'a>(
        &'a self,
        owner: &'a ConnectionOwner,
        provider: &'a str,
        sealed: &'a [u8],
    ) -> StoreFuture<'a, ()>;

    /// `owner`'s sealed credentials for `provider`, if any.
    fn get_sealed<'a>(
        &'a self,
        owner: &'a ConnectionOwner,
        provider: &'a str,
    ) -> StoreFuture<'a, Option<Vec<u8>>>;
}
