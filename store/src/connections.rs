//! Connected-app credentials at rest, behind dragnet-core's
//! `ConnectionStore` port: sealed bytes only — the gateway seals and
//! opens them — one row per organisation, owner and provider.

use dragnet_core::{ConnectionOwner, ConnectionStore, StoreFuture};

use crate::db::{handle, with_pool, OnDb};
use crate::error::{Error, Result};

handle! {
    /// Connected-app credentials at rest (`Db::connections`): dragnet-core's
    /// `ConnectionStore`.
    Connections
}

const PUT: &str = "INSERT INTO connections (org, owner, provider, sealed) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (org, owner, provider) DO UPDATE SET sealed = excluded.sealed";
const GET: &str = "SELECT sealed FROM connections WHERE org = $1 AND owner = $2 AND provider = $3";

impl Connections {
    async fn put_connection(
        &self,
        owner: &ConnectionOwner,
        provider: &str,
        sealed: &[u8],
    ) -> Result<()> {
        let op = || Error::query(self.backend(), "connections.put");
        with_pool!(self, |pool, T| {
            sqlx::query(PUT)
                .bind(&owner.org)
                .bind(&owner.owner)
                .bind(provider)
                .bind(sealed)
                .execute(pool)
                .await
                .map_err(op())?;
        });
        Ok(())
    }

    async fn get_connection(
        &self,
        owner: &ConnectionOwner,
        provider: &str,
    ) -> Result<Option<Vec<u8>>> {
        let op = || Error::query(self.backend(), "connections.get");
        let sealed: Option<Vec<u8>> = with_pool!(self, |pool, T| {
            sqlx::query_scalar(GET)
                .bind(&owner.org)
                .bind(&owner.owner)
                .bind(provider)
                .fetch_optional(pool)
                .await
                .map_err(op())?
        });
        Ok(sealed)
    }
}

impl ConnectionStore for Connections {
    fn put_sealed<'a>(
        &'a self,
        owner: &'a ConnectionOwner,
        provider: &'a str,
        sealed: &'a [u8],
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.put_connection(owner, provider, sealed)
                .await
                .map_err(dragnet_core::ports::Error::from)
        })
    }

    fn get_sealed<'a>(
        &'a self,
        owner: &'a ConnectionOwner,
        provider: &'a str,
    ) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            self.get_connection(owner, provider)
                .await
                .map_err(dragnet_core::ports::Error::from)
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Connected-app credentials (dragnet-core's `ConnectionStore`).
    pub fn connections(&self) -> Connections {
        Connections(self.clone())
    }
}
