//! Teams and their API tokens. A token is stored only as the SHA-256 of
//! its text (the caller hashes it), so a stolen database yields no token;
//! a revoked token stays in the table, refused, with the time it was
//! revoked.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::{col, handle, with_pool, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// Teams and their API tokens (`Db::teams`).
    Teams
}

/// A team: whose workflows, runs, schedules and cache entries they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Team {
    pub team_id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// A token as listed: never its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenInfo {
    pub token_id: String,
    pub team: String,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

const TEAM_BY_NAME: &str = "SELECT team_id, name, created_at FROM teams WHERE name = $1";

const TEAM_OF_TOKEN: &str = "SELECT t.team_id, t.name, t.created_at, k.token_id FROM api_tokens k \
     JOIN teams t ON t.team_id = k.team_id WHERE k.token_hash = $1 AND k.revoked_at IS NULL";

const TOKENS: &str = "SELECT k.token_id, t.name, k.created_at, k.revoked_at FROM api_tokens k \
     JOIN teams t ON t.team_id = k.team_id WHERE (CAST($1 AS TEXT) IS NULL OR t.name = $1) \
     ORDER BY k.created_at, k.token_id";

impl Teams {
    /// Creates team `name`; a second team of the same name is refused.
    pub async fn create_team(&self, team_id: &str, name: &str, now: DateTime<Utc>) -> Result<Team> {
        if self.team_by_name(name).await?.is_some() {
            return Err(Error::Exists {
                what: "team",
                name: name.to_string(),
            });
        }
        with_pool!(self, |pool, T| {
            sqlx::query("INSERT INTO teams (team_id, name, created_at) VALUES ($1, $2, $3)")
                .bind(team_id)
                .bind(name)
                .bind(T::enc(now))
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "teams.create"))?;
            Ok(())
        })?;
        Ok(Team {
            team_id: team_id.to_string(),
            name: name.to_string(),
            created_at: now,
        })
    }

    /// Every team, by name.
    pub async fn list_teams(&self) -> Result<Vec<Team>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query("SELECT team_id, name, created_at FROM teams ORDER BY name")
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "teams.list"))?;
            rows.iter()
                .map(|row| {
                    Ok(Team {
                        team_id: col(row, "team_id")?,
                        name: col(row, "name")?,
                        created_at: T::dec(col(row, "created_at")?)?,
                    })
                })
                .collect()
        })
    }

    /// Team `name`, or `None`.
    pub async fn team_by_name(&self, name: &str) -> Result<Option<Team>> {
        self.one_team(TEAM_BY_NAME, name, "teams.by_name").await
    }

    /// The team holding the live (not revoked) token whose hash is `hash`.
    pub async fn team_of_token(&self, hash: &str) -> Result<Option<Team>> {
        self.one_team(TEAM_OF_TOKEN, hash, "tokens.team").await
    }

    /// The same with the token's id (what a run it starts records as
    /// having started it; never the token).
    pub async fn caller_of_token(&self, hash: &str) -> Result<Option<(Team, String)>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query(TEAM_OF_TOKEN)
                .bind(hash)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "tokens.team"))?;
            row.map(|row| {
                let team = Team {
                    team_id: col(&row, "team_id")?,
                    name: col(&row, "name")?,
                    created_at: T::dec(col(&row, "created_at")?)?,
                };
                Ok((team, col(&row, "token_id")?))
            })
            .transpose()
        })
    }

    async fn one_team(&self, sql: &str, arg: &str, op: &'static str) -> Result<Option<Team>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query(sql)
                .bind(arg)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), op))?;
            row.map(|row| {
                Ok(Team {
                    team_id: col(&row, "team_id")?,
                    name: col(&row, "name")?,
                    created_at: T::dec(col(&row, "created_at")?)?,
                })
            })
            .transpose()
        })
    }

    /// Stores a token of team `team` by the hash of its text.
    pub async fn create_token(
        &self,
        token_id: &str,
        team: &str,
        hash: &str,
        now: DateTime<Utc>,
    ) -> Result<TokenInfo> {
        let Some(found) = self.team_by_name(team).await? else {
            return Err(Error::Missing {
                what: "team",
                name: team.to_string(),
            });
        };
        with_pool!(self, |pool, T| {
            sqlx::query(
                "INSERT INTO api_tokens (token_id, team_id, token_hash, created_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(token_id)
            .bind(&found.team_id)
            .bind(hash)
            .bind(T::enc(now))
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "tokens.create"))?;
            Ok(())
        })?;
        Ok(TokenInfo {
            token_id: token_id.to_string(),
            team: found.name,
            created_at: now,
            revoked_at: None,
        })
    }

    /// Revokes token `token_id`; a token revoked already keeps its time.
    pub async fn revoke_token(&self, token_id: &str, now: DateTime<Utc>) -> Result<()> {
        let found = with_pool!(self, |pool, T| {
            sqlx::query(
                "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE token_id = $1",
            )
            .bind(token_id)
            .bind(T::enc(now))
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "tokens.revoke"))?
            .rows_affected()
        });
        match found {
            0 => Err(Error::Missing {
                what: "token",
                name: token_id.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Tokens of team `team` (every team's when `None`), oldest first.
    pub async fn list_tokens(&self, team: Option<&str>) -> Result<Vec<TokenInfo>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(TOKENS)
                .bind(team)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "tokens.list"))?;
            rows.iter()
                .map(|row| {
                    Ok(TokenInfo {
                        token_id: col(row, "token_id")?,
                        team: col(row, "name")?,
                        created_at: T::dec(col(row, "created_at")?)?,
                        revoked_at: T::dec_opt(col(row, "revoked_at")?)?,
                    })
                })
                .collect()
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Teams and their API tokens.
    pub fn teams(&self) -> Teams {
        Teams(self.clone())
    }
}
