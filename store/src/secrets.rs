//! Team secrets at rest: the values a team's workflows name as credentials
//! on a server (`credentials: {env: NAME}`), one row per team and name,
//! sealed bytes only. `seal_secret` and `open_secret` bind the team and
//! the name in (AES-256-GCM associated data), so a sealed value copied
//! into another team's row, or under another name, does not open. A
//! listing gives names and update times, never values.

use chrono::{DateTime, Utc};
use dragnet_core::secret::Secret;
use dragnet_http::{SealError, Sealer};
use serde::Serialize;

use crate::db::{col, handle, with_pool, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// Teams' secrets, sealed at rest (`Db::secrets`).
    Secrets
}

/// A secret as listed: never its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretInfo {
    pub name: String,
    pub updated_at: DateTime<Utc>,
}

const PUT: &str = "INSERT INTO team_secrets (team_id, name, sealed, updated_at) \
     VALUES ($1, $2, $3, $4) \
     ON CONFLICT (team_id, name) DO UPDATE SET sealed = excluded.sealed, \
     updated_at = excluded.updated_at";
const LIST: &str = "SELECT name, updated_at FROM team_secrets WHERE team_id = $1 ORDER BY name";
const GET: &str = "SELECT sealed FROM team_secrets WHERE team_id = $1 AND name = $2";
const ALL_SEALED: &str = "SELECT name, sealed FROM team_secrets WHERE team_id = $1";
const DELETE: &str = "DELETE FROM team_secrets WHERE team_id = $1 AND name = $2";

/// What a team's secret `name` is sealed with: both bound in.
fn context(team_id: &str, name: &str) -> Vec<u8> {
    format!("dragnet-team-secret\0{team_id}\0{name}").into_bytes()
}

/// `value` sealed as team `team_id`'s secret `name`.
pub fn seal_secret(
    sealer: &Sealer,
    team_id: &str,
    name: &str,
    value: &Secret,
) -> std::result::Result<Vec<u8>, SealError> {
    sealer.seal(&context(team_id, name), value)
}

/// The value `sealed` holds as team `team_id`'s secret `name`; `None`
/// when it was sealed for another team or name, under another key, or
/// altered.
pub fn open_secret(sealer: &Sealer, team_id: &str, name: &str, sealed: &[u8]) -> Option<Secret> {
    sealer.open(&context(team_id, name), sealed)
}

impl Secrets {
    /// Stores (or replaces) team `team_id`'s sealed secret `name`.
    pub async fn put_secret(
        &self,
        team_id: &str,
        name: &str,
        sealed: &[u8],
        now: DateTime<Utc>,
    ) -> Result<()> {
        with_pool!(self, |pool, T| {
            sqlx::query(PUT)
                .bind(team_id)
                .bind(name)
                .bind(sealed)
                .bind(T::enc(now))
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "secrets.put"))?;
        });
        Ok(())
    }

    /// Team `team_id`'s secrets by name: names and update times only.
    pub async fn list_secrets(&self, team_id: &str) -> Result<Vec<SecretInfo>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(LIST)
                .bind(team_id)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "secrets.list"))?;
            rows.iter()
                .map(|row| {
                    Ok(SecretInfo {
                        name: col(row, "name")?,
                        updated_at: T::dec(col(row, "updated_at")?)?,
                    })
                })
                .collect()
        })
    }

    /// Team `team_id`'s sealed secret `name`, if it is set.
    pub async fn get_sealed_secret(&self, team_id: &str, name: &str) -> Result<Option<Vec<u8>>> {
        let sealed: Option<Vec<u8>> = with_pool!(self, |pool, T| {
            sqlx::query_scalar(GET)
                .bind(team_id)
                .bind(name)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "secrets.get"))?
        });
        Ok(sealed)
    }

    /// Every sealed secret of team `team_id`, by name (a run opens the
    /// ones its workflow names).
    pub async fn sealed_secrets(&self, team_id: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let rows: Vec<(String, Vec<u8>)> = with_pool!(self, |pool, T| {
            sqlx::query_as(ALL_SEALED)
                .bind(team_id)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "secrets.all"))?
        });
        Ok(rows)
    }

    /// Deletes team `team_id`'s secret `name`; false when it was not set.
    pub async fn delete_secret(&self, team_id: &str, name: &str) -> Result<bool> {
        let deleted = with_pool!(self, |pool, T| {
            sqlx::query(DELETE)
                .bind(team_id)
                .bind(name)
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "secrets.delete"))?
                .rows_affected()
        });
        Ok(deleted > 0)
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Teams' secrets, sealed at rest.
    pub fn secrets(&self) -> Secrets {
        Secrets(self.clone())
    }
}
