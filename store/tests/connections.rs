//! Connected-app credentials at rest on both backends, through
//! dragnet-core's `ConnectionStore` port: one sealed value per
//! organisation, owner and provider, replaced by a later put, and nothing
//! for any other owner or provider.

use anyhow::{ensure, Result};
use dragnet_core::{ConnectionOwner, ConnectionStore};
use dragnet_store::{on_both_backends, Db};

on_both_backends!(a_connection_is_its_owners_and_providers_alone);

fn owner(org: &str, owner: &str) -> ConnectionOwner {
    ConnectionOwner {
        org: org.into(),
        owner: owner.into(),
    }
}

async fn a_connection_is_its_owners_and_providers_alone(db: Db) -> Result<()> {
    let ann = owner("acme", "user:ann");
    ensure!(db.connections().get_sealed(&ann, "mail").await?.is_none());
    db.connections()
        .put_sealed(&ann, "mail", b"sealed-1")
        .await?;
    ensure!(db.connections().get_sealed(&ann, "mail").await?.as_deref() == Some(&b"sealed-1"[..]));
    db.connections()
        .put_sealed(&ann, "mail", b"sealed-2")
        .await?;
    ensure!(db.connections().get_sealed(&ann, "mail").await?.as_deref() == Some(&b"sealed-2"[..]));
    for (who, provider) in [
        (owner("acme", "user:bob"), "mail"),
        (owner("bravo", "user:ann"), "mail"),
        (owner("acme", "tenant:ann"), "mail"),
        (ann.clone(), "drive"),
    ] {
        ensure!(
            db.connections().get_sealed(&who, provider).await?.is_none(),
            "{who:?} {provider}"
        );
    }
    Ok(())
}
