//! Watermarks of incremental walks (issue 25 §1), one row per team (the
//! empty string in a local store), workflow and step: the highest value of
//! the step's field a complete walk read, on its
//! [`Scale`](dragnet_engine::watermark::Scale), with the keys of the rows
//! read at that value and the run that moved it. A watermark only moves
//! forward: a walk that started from an older one and ends after a newer
//! one was stored leaves the newer one (a walk that reaches the same value
//! adds its keys). A run reads them through [`TeamWatermarks`] (a
//! `WatermarkSource`), and its store writer moves them once the step
//! record that carries the move has landed.

use std::cmp::Ordering;

use dragnet_core::ports::{BoxFuture, Error as PortError};
pub use dragnet_engine::watermark::StoredWatermark;
use dragnet_engine::watermark::{Scale, Watermark, WatermarkMove, WatermarkSource};

use crate::db::{col, handle, with_pool, BeginWrite, OnDb, Stamp};
use crate::error::{Error, Result};

handle! {
    /// Incremental walks' watermarks (`Db::watermarks`).
    Watermarks
}

/// Whose watermark: a team's (empty locally), a workflow's, a step's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatermarkKey<'a> {
    pub team_id: &'a str,
    pub workflow: &'a str,
    pub step: &'a str,
}

const GET: &str = "SELECT workflow, step, value, scale, row_keys, run_id, updated_at \
     FROM watermarks WHERE team_id = $1 AND workflow = $2 AND step = $3";

const LIST: &str = "SELECT workflow, step, value, scale, row_keys, run_id, updated_at \
     FROM watermarks WHERE team_id = $1 ORDER BY workflow, step";

const PUT: &str = "INSERT INTO watermarks \
     (team_id, workflow, step, value, scale, row_keys, run_id, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
     ON CONFLICT (team_id, workflow, step) DO UPDATE SET value = excluded.value, \
     scale = excluded.scale, row_keys = excluded.row_keys, run_id = excluded.run_id, \
     updated_at = excluded.updated_at";

const DELETE: &str = "DELETE FROM watermarks WHERE team_id = $1 AND workflow = $2 AND step = $3";

macro_rules! watermark_row {
    ($row:expr, $T:ident) => {{
        let scale: String = col($row, "scale")?;
        let value: String = col($row, "value")?;
        let keys: Option<String> = col($row, "row_keys")?;
        let bad = || Error::BadValue {
            what: "stored watermark",
        };
        StoredWatermark {
            value: serde_json::from_str(&value).map_err(|_| bad())?,
            scale: Scale::named(&scale).ok_or_else(bad)?,
            row_keys: match keys {
                Some(k) => serde_json::from_str(&k).map_err(|_| bad())?,
                None => Vec::new(),
            },
            run_id: col($row, "run_id")?,
            updated_at: $T::dec(col($row, "updated_at")?)?,
        }
    }};
}

impl Watermarks {
    /// The watermark of `key`, if a walk set one.
    pub async fn watermark(&self, key: WatermarkKey<'_>) -> Result<Option<StoredWatermark>> {
        with_pool!(self, |pool, T| {
            let row = sqlx::query(GET)
                .bind(key.team_id)
                .bind(key.workflow)
                .bind(key.step)
                .fetch_optional(pool)
                .await
                .map_err(Error::query(self.backend(), "watermarks.get"))?;
            row.map(|row| Ok(watermark_row!(&row, T))).transpose()
        })
    }

    /// Team `team_id`'s watermarks: workflow, step and watermark.
    pub async fn team_watermarks(
        &self,
        team_id: &str,
    ) -> Result<Vec<(String, String, StoredWatermark)>> {
        with_pool!(self, |pool, T| {
            let rows = sqlx::query(LIST)
                .bind(team_id)
                .fetch_all(pool)
                .await
                .map_err(Error::query(self.backend(), "watermarks.list"))?;
            rows.iter()
                .map(|row| {
                    Ok((
                        col(row, "workflow")?,
                        col(row, "step")?,
                        watermark_row!(row, T),
                    ))
                })
                .collect()
        })
    }

    /// Moves `key`'s watermark to `to` when none is stored, the stored one
    /// is on another scale, or `to` is higher; at the same value the keys
    /// are joined. False when it stayed.
    pub async fn advance(&self, key: WatermarkKey<'_>, to: &StoredWatermark) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let op = |name| Error::query(self.backend(), name);
            let mut tx = pool.begin_write().await.map_err(op("watermarks.advance"))?;
            let row = sqlx::query(GET)
                .bind(key.team_id)
                .bind(key.workflow)
                .bind(key.step)
                .fetch_optional(&mut *tx)
                .await
                .map_err(op("watermarks.advance"))?;
            let stored = row
                .map(|row| Ok::<_, Error>(watermark_row!(&row, T)))
                .transpose()?;
            let mut next = to.clone();
            match stored.as_ref().map(|s| order(s, to)) {
                Some(Some(Ordering::Greater)) => return Ok(false),
                Some(Some(Ordering::Equal)) => {
                    let Some(s) = &stored else { return Ok(false) };
                    next.row_keys.extend(s.row_keys.iter().cloned());
                    next.row_keys.sort();
                    next.row_keys.dedup();
                    if next.row_keys == s.row_keys {
                        return Ok(false);
                    }
                }
                _ => {}
            }
            let keys =
                match next.row_keys.is_empty() {
                    true => None,
                    false => Some(serde_json::to_string(&next.row_keys).map_err(|_| {
                        Error::BadValue {
                            what: "watermark keys",
                        }
                    })?),
                };
            sqlx::query(PUT)
                .bind(key.team_id)
                .bind(key.workflow)
                .bind(key.step)
                .bind(next.value.to_string())
                .bind(next.scale.name())
                .bind(keys)
                .bind(&next.run_id)
                .bind(T::enc(next.updated_at))
                .execute(&mut *tx)
                .await
                .map_err(op("watermarks.advance"))?;
            tx.commit().await.map_err(op("watermarks.advance"))?;
            Ok(true)
        })
    }

    /// Forgets `key`'s watermark (the next walk starts from `initial`);
    /// false when there was none.
    pub async fn reset(&self, key: WatermarkKey<'_>) -> Result<bool> {
        with_pool!(self, |pool, T| {
            let done = sqlx::query(DELETE)
                .bind(key.team_id)
                .bind(key.workflow)
                .bind(key.step)
                .execute(pool)
                .await
                .map_err(Error::query(self.backend(), "watermarks.reset"))?;
            Ok(done.rows_affected() > 0)
        })
    }
}

/// How `stored` compares with `to`: `None` when they are on different
/// scales or either value is not on its scale (then `to` replaces it).
fn order(stored: &StoredWatermark, to: &StoredWatermark) -> Option<Ordering> {
    if stored.scale != to.scale {
        return None;
    }
    let old = Watermark::read(&stored.value, stored.scale).ok()?;
    let new = Watermark::read(&to.value, to.scale).ok()?;
    Some(old.mark.compare(&new.mark))
}

/// One team's watermarks (the empty team locally), as a run reads and
/// its writer moves them.
#[derive(Debug, Clone)]
pub struct TeamWatermarks {
    pub watermarks: Watermarks,
    pub team_id: String,
}

impl TeamWatermarks {
    /// Stores `to` as its step's watermark (if it is ahead); false when the
    /// stored one stayed.
    pub async fn apply(&self, to: &WatermarkMove) -> Result<bool> {
        let key = WatermarkKey {
            team_id: &self.team_id,
            workflow: &to.workflow,
            step: &to.step,
        };
        self.watermarks.advance(key, &to.to).await
    }
}

impl WatermarkSource for TeamWatermarks {
    fn watermark<'a>(
        &'a self,
        workflow: &'a str,
        step: &'a str,
    ) -> BoxFuture<'a, std::result::Result<Option<StoredWatermark>, PortError>> {
        Box::pin(async move {
            let key = WatermarkKey {
                team_id: &self.team_id,
                workflow,
                step,
            };
            self.watermarks.watermark(key).await.map_err(|e| {
                let transient = e.is_transient();
                PortError::store(e, transient)
            })
        })
    }
}

/// The handle on this area (the store's areas each own their tables).
impl crate::db::Db {
    /// Incremental walks' watermarks.
    pub fn watermarks(&self) -> Watermarks {
        Watermarks(self.clone())
    }
}
