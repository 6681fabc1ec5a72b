//! Test harness (feature `testing`), shared by this crate's suites and the
//! end-to-end tests: `on_both_backends!` runs each test body once on
//! PostgreSQL, in a schema of its own created for the test and dropped after
//! it, and once on SQLite, in a file of its own. PostgreSQL is
//! `DATABASE_URL` (when it is a postgres URL) or the local default; when it
//! cannot be reached the PostgreSQL tests fail and say what to start. They
//! never skip.

use std::future::Future;
use std::path::PathBuf;

use chrono::{Duration as Span, Utc};

use crate::Db;

pub const POSTGRES_DEFAULT: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// Defines `mod <name> { fn postgres(); fn sqlite() }` for each test body
/// `async fn <name>(db: Db) -> anyhow::Result<()>` in the calling file.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                $crate::testing::on_postgres(super::$name).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                $crate::testing::on_sqlite(super::$name).await
            }
        }
    )+};
}

/// The PostgreSQL server the tests use.
pub fn postgres_url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|url| url.starts_with("postgres://") || url.starts_with("postgresql://"))
        .unwrap_or_else(|| POSTGRES_DEFAULT.to_string())
}

/// Runs `body` on a fresh, migrated schema of the test PostgreSQL.
pub async fn on_postgres<F, Fut>(body: F)
where
    F: FnOnce(Db) -> Fut,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let base = postgres_url();
    let admin = match Db::connect(&base).await {
        Ok(db) => db,
        Err(e) => {
            panic!("the PostgreSQL suites need a running server and do not skip without one: {e}")
        }
    };
    let pool = admin.as_postgres().cloned().expect("a PostgreSQL pool");
    let schema = format!("dragnet_test_{:016x}", rand::random::<u64>());
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&pool)
        .await
        .expect("creating the test schema");
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}options[search_path]={schema}");
    let db = Db::connect(&url)
        .await
        .expect("connecting into the test schema");
    db.migrate().await.expect("migrating the test schema");
    let outcome = tokio::spawn(body(db.clone())).await;
    db.close().await;
    let dropped = sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&pool)
        .await;
    admin.close().await;
    finish(outcome);
    dropped.expect("dropping the test schema");
}

/// Runs `body` on a fresh, migrated SQLite file in a folder of its own.
pub async fn on_sqlite<F, Fut>(body: F)
where
    F: FnOnce(Db) -> Fut,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let dir = temp_dir("sqlite");
    let url = format!("sqlite://{}", dir.join("nested/dragnet.db").display());
    let db = Db::connect(&url)
        .await
        .expect("opening the test SQLite file");
    db.migrate().await.expect("migrating the test SQLite file");
    let outcome = tokio::spawn(body(db.clone())).await;
    db.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    finish(outcome);
}

pub fn finish(outcome: Result<anyhow::Result<()>, tokio::task::JoinError>) {
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("{e:#}"),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("the test task ended abnormally: {e}"),
    }
}

/// A fresh folder under the system's temp dir (not created).
pub fn temp_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "dragnet-store-{tag}-{:016x}",
        rand::random::<u64>()
    ))
}

/// The test clock and its start instant are dragnet-core's (feature
/// `test-util`), re-exported for the suites that reach them here.
pub use dragnet_core::clock::{t0, TestClock};

/// Ends PostgreSQL backend `pid` through `pool`, as an administrator or a
/// restart would (tests of connections the server closed).
pub async fn end_backend(pool: &sqlx::PgPool, pid: i32) -> anyhow::Result<()> {
    let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(pool)
        .await?;
    anyhow::ensure!(ended, "the backend {pid} was not ended");
    Ok(())
}

/// Makes run `run_id`'s lease expired now, as if its process had stopped
/// renewing it long ago (tests of takeover).
pub async fn expire_lease(db: &Db, run_id: &str) -> crate::Result<()> {
    const SQL: &str = "UPDATE runs SET lease_expires_at = $2 WHERE run_id = $1";
    let past = Utc::now() - Span::hours(1);
    match db {
        Db::Postgres(pool) => sqlx::query(SQL)
            .bind(run_id)
            .bind(past)
            .execute(pool)
            .await
            .map_err(crate::Error::query("postgres", "testing.expire_lease"))?
            .rows_affected(),
        Db::Sqlite(pool) => sqlx::query(SQL)
            .bind(run_id)
            .bind(past.timestamp_millis())
            .execute(pool)
            .await
            .map_err(crate::Error::query("sqlite", "testing.expire_lease"))?
            .rows_affected(),
    };
    Ok(())
}

/// Gives run `run_id` to `owner` with the next attempt at once, whatever
/// its lease, as a takeover would once it expired (tests of fencing).
pub async fn steal_lease(db: &Db, run_id: &str, owner: &str) -> crate::Result<()> {
    const SQL: &str = "UPDATE runs SET attempt = attempt + 1, lease_owner = $2 WHERE run_id = $1";
    let op = |backend| crate::Error::query(backend, "testing.steal_lease");
    match db {
        Db::Postgres(pool) => sqlx::query(SQL)
            .bind(run_id)
            .bind(owner)
            .execute(pool)
            .await
            .map_err(op("postgres"))?
            .rows_affected(),
        Db::Sqlite(pool) => sqlx::query(SQL)
            .bind(run_id)
            .bind(owner)
            .execute(pool)
            .await
            .map_err(op("sqlite"))?
            .rows_affected(),
    };
    Ok(())
}

/// Ends every queued or running run as succeeded and unheld, as if each
/// had run to its end (tests that need a history of ended runs).
pub async fn end_every_run(db: &Db) -> crate::Result<()> {
    const SQL: &str = "UPDATE runs SET status = 'succeeded', lease_owner = NULL, \
         lease_expires_at = NULL WHERE status IN ('queued', 'running')";
    let op = |backend| crate::Error::query(backend, "testing.end_every_run");
    match db {
        Db::Postgres(pool) => {
            sqlx::query(SQL)
                .execute(pool)
                .await
                .map_err(op("postgres"))?;
        }
        Db::Sqlite(pool) => {
            sqlx::query(SQL).execute(pool).await.map_err(op("sqlite"))?;
        }
    }
    Ok(())
}

/// Refreshes the planner's statistics of the runs table, as autovacuum
/// (PostgreSQL) or `ANALYZE` (SQLite) would at that moment.
pub async fn analyze_runs(db: &Db) -> crate::Result<()> {
    let op = |backend| crate::Error::query(backend, "testing.analyze_runs");
    match db {
        Db::Postgres(pool) => {
            sqlx::query("ANALYZE runs")
                .execute(pool)
                .await
                .map_err(op("postgres"))?;
        }
        Db::Sqlite(pool) => {
            sqlx::query("ANALYZE runs")
                .execute(pool)
                .await
                .map_err(op("sqlite"))?;
        }
    }
    Ok(())
}
