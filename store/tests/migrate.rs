//! `Db::migrate` on a store that is already current reads the applied
//! migrations once and changes nothing; anything else still goes through
//! the migrator, which refuses a migration changed after it was applied.

use anyhow::ensure;
use dragnet_store::{on_both_backends, Db};

on_both_backends!(
    a_current_store_is_left_as_it_is,
    a_changed_migration_is_still_refused,
    a_failed_migration_is_still_refused,
);

async fn applied(db: &Db) -> anyhow::Result<Vec<(i64, Vec<u8>, bool)>> {
    const Q: &str = "SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version";
    Ok(match db {
        Db::Postgres(pool) => sqlx::query_as(Q).fetch_all(pool).await?,
        Db::Sqlite(pool) => sqlx::query_as(Q).fetch_all(pool).await?,
    })
}

async fn execute(db: &Db, sql: &str) -> anyhow::Result<()> {
    match db {
        Db::Postgres(pool) => sqlx::query(sql).execute(pool).await.map(drop)?,
        Db::Sqlite(pool) => sqlx::query(sql).execute(pool).await.map(drop)?,
    }
    Ok(())
}

/// Sets the last applied migration's checksum to `checksum`.
async fn set_last_checksum(db: &Db, checksum: Vec<u8>) -> anyhow::Result<()> {
    const Q: &str = "UPDATE _sqlx_migrations SET checksum = $1 \
                     WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)";
    match db {
        Db::Postgres(pool) => sqlx::query(Q)
            .bind(checksum)
            .execute(pool)
            .await
            .map(drop)?,
        Db::Sqlite(pool) => sqlx::query(Q)
            .bind(checksum)
            .execute(pool)
            .await
            .map(drop)?,
    }
    Ok(())
}

async fn a_current_store_is_left_as_it_is(db: Db) -> anyhow::Result<()> {
    let before = applied(&db).await?;
    ensure!(!before.is_empty(), "the harness migrated the store");
    db.migrate().await?;
    db.migrate().await?;
    ensure!(applied(&db).await? == before);
    Ok(())
}

async fn a_changed_migration_is_still_refused(db: Db) -> anyhow::Result<()> {
    // The last migration's checksum no longer matches the one embedded: the
    // quick check must not take the store for current.
    set_last_checksum(&db, vec![0; 48]).await?;
    let refused = db.migrate().await;
    ensure!(refused.is_err(), "a changed migration was accepted");
    Ok(())
}

async fn a_failed_migration_is_still_refused(db: Db) -> anyhow::Result<()> {
    execute(
        &db,
        "UPDATE _sqlx_migrations SET success = false \
         WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)",
    )
    .await?;
    let refused = db.migrate().await;
    ensure!(refused.is_err(), "a store left dirty was taken for current");
    Ok(())
}
