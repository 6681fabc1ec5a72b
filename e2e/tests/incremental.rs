//! Incremental walks (issue 25 §1) against the demo shop's `/tickets`,
//! which change while it runs, on PostgreSQL and SQLite: the watermark
//! moves only on a complete walk, a cut or failed walk leaves it where it
//! was, rows committed late inside the lag are read, rows read again at
//! the watermark are dropped with `dedupe_by`, and a reset starts over.
//! The property: after any sequence of adds, late updates, bounded and
//! failing runs (1,000 random sequences on SQLite, 100 on PostgreSQL),
//! ended by one run that is let through, the union of the rows the runs
//! read holds every row the shop holds, none missing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use dragnet_core::Limits;
use dragnet_engine::run::{self, Fanout, RunOptions, RunRecord, RunStatus};
use dragnet_engine::workflow::{self, model::Workflow};
use dragnet_shop::ShopHandle;
use dragnet_store::{
    on_both_backends, Db, ObserverOptions, StoreObserver, TeamWatermarks, WatermarkKey,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

const WORKFLOW: &str = "name: changed-tickets
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:9
steps:
  - id: changed
    tool: shop.listTickets
    input: {per_page: 10}
    loop:
      all_pages: true
      fields: [id, updated_at]
      incremental:
        field: updated_at
        param: updated_since
        initial: \"2025-12-01T00:00:00Z\"
        lag: 1h
        dedupe_by: id
";

/// The team the runs belong to.
const TEAM: &str = "team_incremental";

fn workflow() -> Arc<Workflow> {
    let source = dragnet_shop::openapi_path()
        .parent()
        .unwrap()
        .join("changed.workflow.yaml");
    Arc::new(workflow::load_str(&source, WORKFLOW).expect("the workflow compiles"))
}

fn watermarks(db: &Db) -> TeamWatermarks {
    TeamWatermarks {
        watermarks: db.watermarks(),
        team_id: TEAM.into(),
    }
}

/// How one run is let through.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cut {
    /// Every page.
    None,
    /// At most `n` pages: partial when there are more.
    Pages(u32),
    /// Pages from `n` on answer 500.
    FailFrom(u64),
}

struct Harness {
    db: Db,
    shop: ShopHandle,
    http: reqwest::Client,
    wf: Arc<Workflow>,
}

impl Harness {
    async fn start(db: Db) -> anyhow::Result<Harness> {
        let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        Ok(Harness {
            db,
            shop,
            http: reqwest::Client::new(),
            wf: workflow(),
        })
    }

    async fn run(&self, cut: Cut) -> anyhow::Result<RunRecord> {
        let outage = format!("{}/_admin/tickets/outage", self.shop.base_url());
        if let Cut::FailFrom(page) = cut {
            let body = json!({"from_page": page, "status": 500});
            let answer = self.http.post(&outage).json(&body).send().await?;
            assert_eq!(answer.status(), 204);
        }
        let mut limits = Limits::default();
        limits.retry.max_retries = 0;
        if let Cut::Pages(n) = cut {
            limits.max_pages = n;
        }
        let tracker = TaskTracker::new();
        let clock: Arc<dyn dragnet_core::clock::Clock> = Arc::new(dragnet_core::clock::SystemClock);
        let store = Arc::new(StoreObserver::start(
            self.db.runs(),
            clock.clone(),
            ObserverOptions {
                watermarks: Some(watermarks(&self.db)),
                ..ObserverOptions::default()
            },
            &tracker,
            CancellationToken::new(),
        ));
        let options = RunOptions {
            base_urls: HashMap::from([("shop".to_string(), self.shop.base_url().to_string())]),
            limits,
            clock,
            watermarks: Some(Arc::new(watermarks(&self.db))),
            ..RunOptions::default()
        };
        let record = run::run(
            self.wf.clone(),
            options,
            Arc::new(Fanout(vec![store.clone()])),
        )
        .await;
        store.close().await;
        if let Cut::FailFrom(_) = cut {
            self.http.delete(&outage).send().await?;
        }
        Ok(record?)
    }

    async fn put(&self, id: u64, at: DateTime<Utc>) -> anyhow::Result<()> {
        let url = format!("{}/tickets/{id}", self.shop.base_url());
        let body = json!({"updated_at": stamp(at)});
        let answer = self.http.put(url).json(&body).send().await?;
        anyhow::ensure!(
            answer.status().is_success(),
            "PUT ticket {id}: {}",
            answer.status()
        );
        Ok(())
    }

    /// Every ticket the shop holds: id → updated_at.
    async fn tickets(&self) -> anyhow::Result<BTreeMap<u64, String>> {
        let mut all = BTreeMap::new();
        for page in 1.. {
            let url = format!("{}/tickets?per_page=100&page={page}", self.shop.base_url());
            let body: Value = self.http.get(url).send().await?.json().await?;
            let rows = body["data"].as_array().cloned().unwrap_or_default();
            if rows.is_empty() {
                break;
            }
            for row in rows {
                let at = row["updated_at"].as_str().unwrap_or_default().to_string();
                all.insert(row["id"].as_u64().unwrap_or_default(), at);
            }
        }
        Ok(all)
    }

    async fn watermark(&self) -> anyhow::Result<Option<String>> {
        let key = WatermarkKey {
            team_id: TEAM,
            workflow: "changed-tickets",
            step: "changed",
        };
        let stored = self.db.watermarks().watermark(key).await?;
        Ok(stored.and_then(|w| w.value.as_str().map(String::from)))
    }
}

fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

/// The step's output, parsed.
fn output(record: &RunRecord) -> Option<Value> {
    let step = record.step("changed")?;
    serde_json::from_str(step.output.as_ref()?.get()).ok()
}

/// The rows a run read: (id, updated_at).
fn rows_read(record: &RunRecord) -> Vec<(u64, String)> {
    let Some(out) = output(record) else {
        return Vec::new();
    };
    out["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let id = r["id"].as_u64().unwrap_or_default();
            (id, r["updated_at"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

fn incremental(record: &RunRecord) -> Value {
    output(record).map_or(Value::Null, |o| o["_loop"]["incremental"].clone())
}

/// The seeded tickets change every three hours from 2026-01-01: ticket 40
/// last, at 2026-01-05T21:00:00Z.
const LAST_SEEDED: &str = "2026-01-05T21:00:00Z";

async fn the_watermark_moves_only_on_a_complete_walk(db: Db) -> anyhow::Result<()> {
    let h = Harness::start(db).await?;
    // The first walk starts at `initial` (less the lag) and reads all 40.
    let first = h.run(Cut::None).await?;
    assert_eq!(first.status, RunStatus::Succeeded, "{first:?}");
    assert_eq!(rows_read(&first).len(), 40);
    let report = incremental(&first);
    assert_eq!(report["from"], "2025-12-01T00:00:00Z");
    assert_eq!(report["asked"], "2025-11-30T23:00:00Z");
    assert_eq!(report["to"], LAST_SEEDED);
    assert_eq!(report["advanced"], true);
    assert_eq!(h.watermark().await?.as_deref(), Some(LAST_SEEDED));
    let verdict = first.step("changed").unwrap().verdict.clone().unwrap();
    assert_eq!(verdict.incremental.unwrap().to, json!(LAST_SEEDED));

    // Nothing changed: the lag window holds ticket 40 alone, read at the
    // watermark before, so `dedupe_by` drops it.
    let quiet = h.run(Cut::None).await?;
    assert_eq!(rows_read(&quiet), Vec::new());
    let report = incremental(&quiet);
    assert_eq!(report["asked"], "2026-01-05T20:00:00Z");
    assert_eq!(report["advanced"], false);
    assert_eq!(report["deduped"], 1);

    // 25 new tickets, one every minute: three pages of ten from the window.
    let base = at(LAST_SEEDED) + chrono::Duration::hours(2);
    for i in 0..25 {
        h.put(100 + i, base + chrono::Duration::minutes(i as i64))
            .await?;
    }
    // A walk cut by a bound is partial and leaves the watermark.
    let cut = h.run(Cut::Pages(1)).await?;
    assert_eq!(cut.status, RunStatus::Partial, "{cut:?}");
    assert_eq!(incremental(&cut)["advanced"], false);
    assert_eq!(h.watermark().await?.as_deref(), Some(LAST_SEEDED));
    // A walk whose second page fails leaves it too.
    let failed = h.run(Cut::FailFrom(2)).await?;
    assert_ne!(failed.status, RunStatus::Succeeded, "{failed:?}");
    assert_eq!(h.watermark().await?.as_deref(), Some(LAST_SEEDED));
    // The next complete walk reads the same window again, whole.
    let whole = h.run(Cut::None).await?;
    let read: Vec<u64> = rows_read(&whole).into_iter().map(|(id, _)| id).collect();
    assert_eq!(read, (100..125).collect::<Vec<_>>());
    let newest = stamp(base + chrono::Duration::minutes(24));
    assert_eq!(incremental(&whole)["to"], newest.as_str());
    assert_eq!(h.watermark().await?, Some(newest.clone()));

    // A ticket committed late, 30 minutes before the watermark: inside the
    // lag, so the next walk reads it; one committed 2 hours before is not.
    let late = at(&newest) - chrono::Duration::minutes(30);
    h.put(7, late).await?;
    h.put(8, at(&newest) - chrono::Duration::hours(2)).await?;
    let after = h.run(Cut::None).await?;
    let ids: Vec<u64> = rows_read(&after).into_iter().map(|(id, _)| id).collect();
    assert!(ids.contains(&7), "{ids:?}");
    assert!(!ids.contains(&8), "{ids:?}");
    assert_eq!(incremental(&after)["advanced"], false);

    // Reset: the next walk starts from `initial` again and reads all.
    let key = WatermarkKey {
        team_id: TEAM,
        workflow: "changed-tickets",
        step: "changed",
    };
    assert!(h.db.watermarks().reset(key).await?);
    let again = h.run(Cut::None).await?;
    assert_eq!(rows_read(&again).len(), 40 + 25);
    assert_eq!(incremental(&again)["from"], "2025-12-01T00:00:00Z");
    h.shop.shutdown().await;
    Ok(())
}

/// One random sequence: adds, late updates inside the lag, runs cut or
/// failing, then a run let through; every row the shop holds was read.
async fn sequence(db: &Db, seed: u64) -> anyhow::Result<()> {
    let h = Harness::start(db.clone()).await?;
    let key = WatermarkKey {
        team_id: TEAM,
        workflow: "changed-tickets",
        step: "changed",
    };
    h.db.watermarks().reset(key).await?;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut clock = at(LAST_SEEDED);
    let mut next_id = 1_000;
    let mut read: HashSet<(u64, String)> = HashSet::new();
    let mut ops = Vec::new();
    for _ in 0..rng.random_range(2..7) {
        match rng.random_range(0..4) {
            0 => {
                let n = rng.random_range(1..25);
                ops.push(format!("add {n}"));
                for _ in 0..n {
                    // Often the same second: rows tie at the watermark.
                    clock += chrono::Duration::seconds(rng.random_range(0..3) * 600);
                    h.put(next_id, clock).await?;
                    next_id += 1;
                }
            }
            1 => {
                let Some(mark) = h.watermark().await? else {
                    continue;
                };
                let back = rng.random_range(0..=60);
                let id = rng.random_range(1..next_id.min(40));
                ops.push(format!("late {id} -{back}m"));
                h.put(id, at(&mark) - chrono::Duration::minutes(back))
                    .await?;
            }
            _ => {
                let cut = match rng.random_range(0..3) {
                    0 => Cut::None,
                    1 => Cut::Pages(rng.random_range(1..4)),
                    _ => Cut::FailFrom(rng.random_range(1..4)),
                };
                ops.push(format!("run {cut:?}"));
                let before = h.watermark().await?;
                let record = h.run(cut).await?;
                let complete = record.status == RunStatus::Succeeded;
                if !complete {
                    let after = h.watermark().await?;
                    anyhow::ensure!(
                        after == before,
                        "seed {seed}: a run that was not complete moved the watermark \
                         from {before:?} to {after:?} ({ops:?})"
                    );
                }
                read.extend(rows_read(&record));
            }
        }
    }
    ops.push("run None".into());
    let last = h.run(Cut::None).await?;
    anyhow::ensure!(
        last.status == RunStatus::Succeeded,
        "seed {seed}: the last run was {:?} ({ops:?})",
        last.status
    );
    read.extend(rows_read(&last));
    let upstream = h.tickets().await?;
    let missing: Vec<_> = upstream
        .iter()
        .filter(|(id, at)| !read.contains(&(**id, (*at).clone())))
        .collect();
    anyhow::ensure!(
        missing.is_empty(),
        "seed {seed}: rows never read: {missing:?} after {ops:?}"
    );
    let mark = h.watermark().await?;
    let highest = upstream.values().max().cloned();
    anyhow::ensure!(
        mark == highest,
        "seed {seed}: the watermark is {mark:?}, the highest row {highest:?} ({ops:?})"
    );
    h.shop.shutdown().await;
    Ok(())
}

async fn sequences(db: Db, count: u64) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    for seed in 0..count {
        sequence(&db, seed).await?;
    }
    eprintln!("{count} sequences in {:?}", started.elapsed());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_row_is_missed_after_1000_random_sequences_on_sqlite() {
    dragnet_store::testing::on_sqlite(|db| sequences(db, 1_000)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_row_is_missed_after_100_random_sequences_on_postgres() {
    dragnet_store::testing::on_postgres(|db| sequences(db, 100)).await
}

on_both_backends!(the_watermark_moves_only_on_a_complete_walk);
