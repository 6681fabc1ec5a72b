//! Workflows submitted to a server, per team: every version of a file's
//! text (with the documents uploaded beside it) under a content hash, so
//! pushing unchanged content makes no new version. Deleting a workflow
//! hides it and keeps its versions, for the runs that name them.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::{col, handle, with_pool, BeginWrite, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// Submitted workflows and their versions (`Db::workflows`).
    Workflows
}

/// What a push is made of.
#[derive(Debug, Clone)]
pub struct NewVersion<'a> {
    pub team_id: &'a str,
    pub name: &'a str,
    pub file_name: &'a str,
    pub source: &'a str,
    pub documents: &'a BTreeMap<String, String>,
    pub content_hash: &'a str,
}

/// What a push did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pushed {
    pub version: i64,
    /// False when the content equals the current version's.
    pub created: bool,
}

/// A workflow as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkflowSummary {
    pub name: String,
    pub current_version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One version as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionInfo {
    pub version: i64,
    pub content_hash: String,
    pub file_name: String,
    pub created_at: DateTime<Utc>,
}

/// One version with its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowVersion {
    pub info: VersionInfo,
    pub source: String,
    pub documents: BTreeMap<String, String>,
}

const CURRENT: &str = "SELECT w.current_version, v.content_hash FROM workflows w \
     JOIN workflow_versions v ON v.team_id = w.team_id AND v.name = w.name \
     AND v.version = w.current_version \
     WHERE w.team_id = $1 AND w.name = $2 AND w.deleted_at IS NULL";

const UPSERT: &str = "INSERT INTO workflows (team_id, name, current_version, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $4) ON CONFLICT (team_id, name) DO UPDATE SET \
     current_version = excluded.current_version, updated_at = excluded.updated_at, deleted_at = NULL";

const LIST: &str = "SELECT name, current_version, created_at, updated_at FROM workflows \
     WHERE team_id = $1 AND deleted_at IS NULL ORDER BY name";

const ONE: &str = "SELECT name, current_version, created_at, updated_at FROM workflows \
     WHERE team_id = $1 AND name = $2 AND deleted_at IS NULL";

const VERSIONS: &str =
    "SELECT version, content_hash, file_name, created_at FROM workflow_versions \
     WHERE team_id = $1 AND name = $2 ORDER BY version DESC";

const VERSION: &str = "SELECT version, content_hash, file_name, created_at, source, documents \
     FROM workflow_versions WHERE team_id = $1 AND name = $2 AND version = $3";

impl Workflows {
    /// Stores `new` as the workflow's next version, unless it equals the
    /// current one. Two pushes racing for one version number: the second
    /// is refused as `Exists` and may be sent again.
    pub async fn push_workflow(&self, new: NewVersion<'_>, now: DateTime<Utc>) -> Result<Pushed> {
        let documents = serde_json::to_string(new.documents).map_err(|source| Error::Json {
            what: "workflow documents",
            source,
        })?;
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let mut tx = pool.begin_write().await.map_err(op("workflows.push"))?;
            let current = sqlx::query(CURRENT)
                .bind(new.team_id)
                .bind(new.name)
                .fetch_optional(&mut *tx)
                .await
                .map_err(op("workflows.current"))?;
            if let Some(row) = &current {
                let hash: String = col(row, "content_hash")?;
                if hash == new.content_hash {
                    return Ok(Pushed {
                        version: col(row, "current_version")?,
                        created: false,
                    });
                }
            }
            let last: Option<i64> = sqlx::query_scalar(
                "SELECT MAX(version) FROM workflow_versions WHERE team_id = $1 AND name = $2",
            )
            .bind(new.team_id)
            .bind(new.name)
            .fetch_one(&mut *tx)
            .await
            .map_err(op("workflows.last_version"))?;
            let version = last.unwrap_or(0) + 1;
            sqlx::query(UPSERT)
                .bind(new.team_id)
                .bind(new.name)
                .bind(version)
                .bind(T::enc(now))
                .execute(&mut *tx)
                .await
                .map_err(op("workflows.upsert"))?;
            let inserted = sqlx::query(
                "INSERT INTO workflow_versions \
                 (team_id, name, version, content_hash, file_name, source, documents, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
            )
            .bind(new.team_id)
            .bind(new.name)
            .bind(version)
            .bind(new.content_hash)
            .bind(new.file_name)
            .bind(new.source)
            .bind(&documents)
            .bind(T::enc(now))
            .execute(&mut *tx)
            .await
            .map_err(op("workflows.version"))?;
            if inserted.rows_affected() == 0 {
                return Err(Error::Exists {
                    what: "workflow version",
                    name: format!("{}@{version}", new.name),
                });
            }
            tx.commit().await.map_err(op("workflows.push"))?;
            Ok(Pushed {
                version,
                created: true,
            })
        })
    }

    /// The team's workflows, by name (deleted ones left out).
    pub async fn list_workflows(&self, team_id: &str) -> Result<Vec<WorkflowSummary>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(LIST)
                .bind(team_id)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "workflows.list"))?;
            rows.iter()
                .map(|row| {
                    Ok(WorkflowSummary {
                        name: col(row, "name")?,
                        current_version: col(row, "current_version")?,
                        created_at: T::dec(col(row, "created_at")?)?,
                        updated_at: T::dec(col(row, "updated_at")?)?,
                    })
                })
                .collect()
        })
    }

    /// Workflow `name` of the team with its versions (newest first), or
    /// `None` when there is none or it was deleted.
    pub async fn get_workflow(
        &self,
        team_id: &str,
        name: &str,
    ) -> Result<Option<(WorkflowSummary, Vec<VersionInfo>)>> {
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let Some(row) = sqlx::query(ONE)
                .bind(team_id)
                .bind(name)
                .fetch_optional(pool)
                .await
                .map_err(op("workflows.get"))?
            else {
                return Ok(None);
            };
            let summary = WorkflowSummary {
                name: col(&row, "name")?,
                current_version: col(&row, "current_version")?,
                created_at: T::dec(col(&row, "created_at")?)?,
                updated_at: T::dec(col(&row, "updated_at")?)?,
            };
            let rows = sqlx::query(VERSIONS)
                .bind(team_id)
                .bind(name)
                .fetch_all(pool)
                .await
                .map_err(op("workflows.versions"))?;
            let versions = rows
                .iter()
                .map(|row| {
                    Ok(VersionInfo {
                        version: col(row, "version")?,
                        content_hash: col(row, "content_hash")?,
                        file_name: col(row, "file_name")?,
                        created_at: T::dec(col(row, "created_at")?)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Some((summary, versions)))
        })
    }

    /// The current version of the team's workflow `name` (not deleted).
    pub async fn current_version(&self, team_id: &str, name: &str) -> Result<Option<i64>> {
        with_pool!(self, |pool, T| {
            sqlx::query_scalar(
                "SELECT current_version FROM workflows \
                 WHERE team_id = $1 AND name = $2 AND deleted_at IS NULL",
            )
            .bind(team_id)
            .bind(name)
            .fetch_optional(pool)
            .await
            .map_err(Error::query(self.backend(), "workflows.current_version"))
        })
    }

    /// Version `version` of the team's workflow `name`, with its text.
    pub async fn workflow_version(
        &self,
        team_id: &str,
        name: &str,
        version: i64,
    ) -> Result<Option<WorkflowVersion>> {
        with_pool!(self, |pool, T| {
            let Some(row) = sqlx::query(VERSION)
                .bind(team_id)
                .bind(name)
                .bind(version)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "workflows.version_text"))?
            else {
                return Ok(None);
            };
            let documents: String = col(&row, "documents")?;
            Ok(Some(WorkflowVersion {
                info: VersionInfo {
                    version: col(&row, "version")?,
                    content_hash: col(&row, "content_hash")?,
                    file_name: col(&row, "file_name")?,
                    created_at: T::dec(col(&row, "created_at")?)?,
                },
                source: col(&row, "source")?,
                documents: serde_json::from_str(&documents).map_err(|_| Error::BadValue {
                    what: "workflow documents",
                })?,
            }))
        })
    }

    /// Hides the team's workflow `name`; false when there was none.
    pub async fn delete_workflow(
        &self,
        team_id: &str,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let done = sqlx::query(
                "UPDATE workflows SET deleted_at = $3, updated_at = $3 \
                 WHERE team_id = $1 AND name = $2 AND deleted_at IS NULL",
            )
            .bind(team_id)
            .bind(name)
            .bind(T::enc(now))
            .execute(pool)
            .await
            .map_err(Error::query(self.backend(), "workflows.delete"))?;
            Ok(done.rows_affected() > 0)
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Submitted workflows and their versions.
    pub fn workflows(&self) -> Workflows {
        Workflows(self.clone())
    }
}
