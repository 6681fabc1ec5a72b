//! Opening stores: an unreachable PostgreSQL is a clear error that says what
//! to start and never shows the password; SQLite files and their folders
//! are created and opened in WAL mode; a pooled PostgreSQL connection the
//! server ended while it was idle is replaced.

mod common;

use anyhow::{ensure, Context};
use dragnet_store::{Db, Error};

#[tokio::test]
async fn an_unreachable_postgres_says_what_to_start_and_hides_the_password() -> anyhow::Result<()> {
    let err = Db::connect("postgres://postgres:s3cr3t-pw@127.0.0.1:1/postgres")
        .await
        .err()
        .context("nothing listens on port 1")?;
    let text = err.to_string();
    ensure!(matches!(err, Error::PostgresUnreachable { .. }), "{text}");
    ensure!(
        text.contains("PostgreSQL at 127.0.0.1:1/postgres"),
        "{text}"
    );
    ensure!(
        text.contains("pg_ctlcluster") && text.contains("DATABASE_URL"),
        "{text}"
    );
    ensure!(
        !text.contains("s3cr3t-pw") && !format!("{err:?}").contains("s3cr3t-pw"),
        "{text}"
    );
    Ok(())
}

#[tokio::test]
async fn bad_urls_are_errors() -> anyhow::Result<()> {
    let err = Db::connect("postgres://u:pw@host:notaport/db")
        .await
        .err()
        .context("bad port")?;
    ensure!(matches!(err, Error::InvalidUrl { .. }), "{err}");
    ensure!(!err.to_string().contains("pw"), "{err}");
    let err = Db::connect("redis://localhost")
        .await
        .err()
        .context("unsupported")?;
    ensure!(err.to_string().contains("`redis`"), "{err}");
    let err = Db::connect("sqlite:///proc/no/such/dir/x.db")
        .await
        .err()
        .context("unwritable")?;
    ensure!(matches!(err, Error::SqliteOpen { .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn sqlite_files_and_folders_are_created_in_wal_mode() -> anyhow::Result<()> {
    let dir = common::temp_dir("connect");
    let path = dir.join("a/b/dragnet.db");
    let db = Db::connect(&format!("sqlite://{}", path.display())).await?;
    ensure!(db.backend() == "sqlite" && path.exists());
    let pool = db.as_sqlite().context("a SQLite pool")?;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(pool)
        .await?;
    ensure!(mode == "wal", "{mode}");
    db.migrate().await?;
    db.close().await;
    // Opening it again finds the same, migrated file.
    let again = Db::connect(&format!("sqlite://{}", path.display())).await?;
    again.migrate().await?;
    ensure!(again.runs().list_runs(5).await?.is_empty());
    again.close().await;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

#[tokio::test]
async fn the_test_postgres_is_reachable() {
    // Fails, never skips, when the server is down: the message says what to start.
    let url = common::postgres_url();
    match Db::connect(&url).await {
        Ok(db) => {
            assert_eq!(db.backend(), "postgres");
            db.close().await;
        }
        Err(e) => panic!("the PostgreSQL suites need a running server: {e}"),
    }
}

/// The pool does not ping a connection it hands out right after using it,
/// but one idle for a second or more is asked first: a connection the
/// server ended meanwhile (a restart, an administrator) is replaced, and
/// the next query works.
#[tokio::test]
async fn a_postgres_connection_ended_while_idle_is_replaced() -> anyhow::Result<()> {
    let url = common::postgres_url();
    let db = Db::connect_pooled(&url, dragnet_store::PoolSize::ONE).await?;
    let admin = Db::connect_pooled(&url, dragnet_store::PoolSize::ONE).await?;
    let (pool, admin_pool) = (
        db.as_postgres().context("a pool")?,
        admin.as_postgres().context("a pool")?,
    );
    let before: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(pool)
        .await?;
    dragnet_store::testing::end_backend(admin_pool, before).await?;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let after: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(pool)
        .await
        .context("the query after the server ended the idle connection")?;
    ensure!(
        after != before,
        "the ended connection {before} was used again"
    );
    db.close().await;
    admin.close().await;
    Ok(())
}
