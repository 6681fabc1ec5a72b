//! `Error::is_transient` on errors the two backends really return: a
//! broken constraint (a team id taken twice), a value that cannot be read
//! as asked and a row that is not there fail the same way every time; a
//! pool with no connection free in time is worth another try, as are, on
//! PostgreSQL, a serialization failure, a deadlock and a connection the
//! server terminated, and on SQLite a file another connection holds busy.
//! The run writer asks it: a final write refused for good (a trigger
//! refusing the final status) is tried once and reported, not retried.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{ensure, Context, Result};
use chrono::Utc;
use dragnet_core::clock::SystemClock;
use dragnet_engine::run::{RunObserver, RunRecord, RunStatus, StepRecord, StepStatus, StepType};
use dragnet_store::{on_both_backends, Db, Error, ObserverOptions, RunOwner, StoreObserver};
use serde_json::json;
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::SqlitePoolOptions;
use sqlx::{Connection, Executor};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

on_both_backends!(
    a_broken_constraint_is_not_transient,
    unreadable_values_and_missing_rows_are_not_transient,
    a_pool_without_a_free_connection_in_time_is_transient,
    conflicts_and_lost_connections_are_transient,
    a_final_write_refused_for_good_is_tried_once,
);

/// A statement's error as the store reports it.
fn query_error(db: &Db, source: sqlx::Error) -> Error {
    Error::Query {
        backend: db.backend(),
        op: "test",
        source,
    }
}

/// The sqlx error `result` failed with.
fn failure<T>(result: sqlx::Result<T>, what: &str) -> Result<sqlx::Error> {
    match result {
        Ok(_) => anyhow::bail!("{what} succeeded"),
        Err(e) => Ok(e),
    }
}

async fn a_broken_constraint_is_not_transient(db: Db) -> Result<()> {
    let now = Utc::now();
    db.teams().create_team("t1", "team one", now).await?;
    let taken = db
        .teams()
        .create_team("t1", "another name", now)
        .await
        .err()
        .context("a team id taken twice is refused")?;
    let unique = match &taken {
        Error::Query {
            source: sqlx::Error::Database(e),
            ..
        } => e.is_unique_violation(),
        _ => false,
    };
    ensure!(unique, "a unique violation from the database: {taken:?}");
    ensure!(!taken.is_transient(), "{taken}");
    Ok(())
}

async fn unreadable_values_and_missing_rows_are_not_transient(db: Db) -> Result<()> {
    let (unreadable, missing) = match &db {
        Db::Postgres(pool) => (
            failure(
                sqlx::query_scalar::<_, i64>("SELECT 'text'::text")
                    .fetch_one(pool)
                    .await,
                "reading text as a number",
            )?,
            failure(
                sqlx::query("SELECT 1 WHERE false").fetch_one(pool).await,
                "fetching a row of none",
            )?,
        ),
        Db::Sqlite(pool) => (
            failure(
                sqlx::query_scalar::<_, i64>("SELECT 'text'")
                    .fetch_one(pool)
                    .await,
                "reading text as a number",
            )?,
            failure(
                sqlx::query("SELECT 1 WHERE 0").fetch_one(pool).await,
                "fetching a row of none",
            )?,
        ),
    };
    ensure!(
        matches!(unreadable, sqlx::Error::ColumnDecode { .. }),
        "{unreadable:?}"
    );
    ensure!(matches!(missing, sqlx::Error::RowNotFound), "{missing:?}");
    for e in [unreadable, missing] {
        let e = query_error(&db, e);
        ensure!(!e.is_transient(), "{e}");
    }
    Ok(())
}

async fn a_pool_without_a_free_connection_in_time_is_transient(db: Db) -> Result<()> {
    let wait = Duration::from_millis(100);
    let timed_out = match &db {
        Db::Postgres(pool) => {
            let small = PgPoolOptions::new()
                .max_connections(1)
                .acquire_timeout(wait)
                .connect_with(pool.connect_options().as_ref().clone())
                .await?;
            let _held = small.acquire().await?;
            failure(
                sqlx::query("SELECT 1").execute(&small).await,
                "a statement on a pool with none free",
            )?
        }
        Db::Sqlite(pool) => {
            let small = SqlitePoolOptions::new()
                .max_connections(1)
                .acquire_timeout(wait)
                .connect_with(pool.connect_options().as_ref().clone())
                .await?;
            let _held = small.acquire().await?;
            failure(
                sqlx::query("SELECT 1").execute(&small).await,
                "a statement on a pool with none free",
            )?
        }
    };
    ensure!(
        matches!(timed_out, sqlx::Error::PoolTimedOut),
        "{timed_out:?}"
    );
    let e = query_error(&db, timed_out);
    ensure!(e.is_transient(), "{e}");
    Ok(())
}

async fn conflicts_and_lost_connections_are_transient(db: Db) -> Result<()> {
    let errors = match &db {
        Db::Postgres(pool) => postgres_conflicts(pool).await?,
        Db::Sqlite(pool) => vec![sqlite_busy(pool).await?],
    };
    for (what, e) in errors {
        let e = query_error(&db, e);
        ensure!(e.is_transient(), "{what}: {e}");
    }
    Ok(())
}

/// A serialization failure, a deadlock and a terminated connection, each
/// as PostgreSQL reports it.
async fn postgres_conflicts(pool: &sqlx::PgPool) -> Result<Vec<(&'static str, sqlx::Error)>> {
    pool.execute("CREATE TABLE scratch (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
        .await?;
    pool.execute("INSERT INTO scratch VALUES (1, 0), (2, 0)")
        .await?;
    let mut found = Vec::new();

    // Repeatable read: a row changed by another transaction since this
    // one's snapshot cannot be updated (40001).
    let mut a = pool.acquire().await?;
    let mut b = pool.acquire().await?;
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ").await?;
    a.execute("SELECT n FROM scratch WHERE id = 1").await?;
    b.execute("UPDATE scratch SET n = n + 1 WHERE id = 1")
        .await?;
    let serialization = failure(
        a.execute("UPDATE scratch SET n = n + 1 WHERE id = 1").await,
        "an update of a row changed since the snapshot",
    )?;
    a.execute("ROLLBACK").await?;
    ensure!(
        sqlstate(&serialization) == Some("40001".into()),
        "{serialization:?}"
    );
    found.push(("a serialization failure", serialization));

    // Two transactions each waiting for the other's row (40P01).
    a.execute("SET deadlock_timeout = '50ms'").await?;
    b.execute("SET deadlock_timeout = '50ms'").await?;
    a.execute("BEGIN").await?;
    b.execute("BEGIN").await?;
    a.execute("UPDATE scratch SET n = n + 1 WHERE id = 1")
        .await?;
    b.execute("UPDATE scratch SET n = n + 1 WHERE id = 2")
        .await?;
    let (first, second) = tokio::join!(
        a.execute("UPDATE scratch SET n = n + 1 WHERE id = 2"),
        b.execute("UPDATE scratch SET n = n + 1 WHERE id = 1"),
    );
    let (first, second) = (first.map(|_| ()), second.map(|_| ()));
    a.execute("ROLLBACK").await?;
    b.execute("ROLLBACK").await?;
    let deadlock = match (first, second) {
        (Err(e), Ok(())) | (Ok(()), Err(e)) => e,
        other => anyhow::bail!("one of the two is chosen as the deadlock's victim: {other:?}"),
    };
    ensure!(sqlstate(&deadlock) == Some("40P01".into()), "{deadlock:?}");
    found.push(("a deadlock", deadlock));

    // A connection the server ends under a statement (57P01, or the
    // socket's end when the server's goodbye is not read first).
    let mut doomed = sqlx::PgConnection::connect_with(pool.connect_options().as_ref()).await?;
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut doomed)
        .await?;
    dragnet_store::testing::end_backend(pool, pid).await?;
    for _ in 0..250 {
        let alive: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = $1")
            .bind(pid)
            .fetch_one(pool)
            .await?;
        if alive == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lost = failure(
        doomed.execute("SELECT 1").await,
        "a statement on a terminated connection",
    )?;
    ensure!(
        matches!(lost, sqlx::Error::Io(_)) || sqlstate(&lost) == Some("57P01".into()),
        "{lost:?}"
    );
    found.push(("a terminated connection", lost));
    Ok(found)
}

/// SQLITE_BUSY: a write begun while another connection holds the file's
/// write lock, with no busy timeout to wait it out.
async fn sqlite_busy(pool: &sqlx::SqlitePool) -> Result<(&'static str, sqlx::Error)> {
    let impatient = pool
        .connect_options()
        .as_ref()
        .clone()
        .busy_timeout(Duration::ZERO);
    let mut holder = sqlx::SqliteConnection::connect_with(&impatient).await?;
    let mut other = sqlx::SqliteConnection::connect_with(&impatient).await?;
    holder.execute("BEGIN IMMEDIATE").await?;
    let busy = failure(
        other.execute("BEGIN IMMEDIATE").await,
        "a second writer on a locked file",
    )?;
    holder.execute("ROLLBACK").await?;
    ensure!(sqlstate(&busy) == Some("5".into()), "{busy:?}");
    Ok(("a busy file", busy))
}

/// The database's own error code: a SQLSTATE, or SQLite's extended code.
fn sqlstate(e: &sqlx::Error) -> Option<String> {
    match e {
        sqlx::Error::Database(db) => db.code().map(|c| c.into_owned()),
        _ => None,
    }
}

/// The writer's log lines, per run: (message, level).
type Lines = Mutex<HashMap<String, Vec<(String, tracing::Level)>>>;

/// Collects the run writer's log lines of every run, in this test binary.
fn writer_lines() -> &'static Lines {
    static LINES: OnceLock<&'static Lines> = OnceLock::new();
    LINES.get_or_init(|| {
        let lines: &'static Lines = Box::leak(Box::default());
        tracing::subscriber::set_global_default(WriterLines(lines)).expect("one subscriber");
        lines
    })
}

/// A subscriber keeping the writer's events (spans are not needed).
struct WriterLines(&'static Lines);

impl tracing::Subscriber for WriterLines {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == "dragnet_store::writer"
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if let (Some(run_id), Some(message)) = (fields.run_id, fields.message) {
            let mut lines = self.0.lock().expect("lines");
            let line = (message, *event.metadata().level());
            lines.entry(run_id).or_default().push(line);
        }
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

#[derive(Default)]
struct Fields {
    run_id: Option<String>,
    message: Option<String>,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "run_id" => self.run_id = Some(value.to_string()),
            "message" => self.message = Some(value.to_string()),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

/// Makes the database refuse, for good, every write that sets a run's
/// status to `succeeded`; on PostgreSQL each refusal also takes a number
/// from sequence `final_tries` (which no rollback gives back).
async fn refuse_final_status(db: &Db) -> Result<()> {
    match db {
        Db::Postgres(pool) => {
            pool.execute("CREATE SEQUENCE final_tries").await?;
            pool.execute(
                "CREATE FUNCTION refuse_final() RETURNS trigger LANGUAGE plpgsql AS $$ \
                 BEGIN PERFORM nextval('final_tries'); \
                 RAISE EXCEPTION 'final status refused' USING ERRCODE = 'check_violation'; \
                 END $$",
            )
            .await?;
            pool.execute(
                "CREATE TRIGGER refuse_final BEFORE UPDATE ON runs FOR EACH ROW \
                 WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION refuse_final()",
            )
            .await?;
        }
        Db::Sqlite(pool) => {
            pool.execute(
                "CREATE TRIGGER refuse_final BEFORE UPDATE ON runs \
                 WHEN NEW.status = 'succeeded' \
                 BEGIN SELECT RAISE(ABORT, 'final status refused'); END",
            )
            .await?;
        }
    }
    Ok(())
}

fn record(run_id: &str) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        workflow: "wf".into(),
        source: "wf.yaml".into(),
        status: RunStatus::Running,
        started_at: Utc::now(),
        finished_at: None,
        duration_ms: 0,
        inputs: json!({}),
        steps: vec![StepRecord::pending("only", StepType::Tool)],
        trigger: None,
    }
}

async fn a_final_write_refused_for_good_is_tried_once(db: Db) -> Result<()> {
    let lines = writer_lines();
    refuse_final_status(&db).await?;
    let run_id = format!("run_refused_{}", db.backend());
    let observer = StoreObserver::start(
        db.runs(),
        Arc::new(SystemClock),
        ObserverOptions {
            heartbeat: Duration::from_secs(600),
            grace: Duration::from_secs(5),
            owner: RunOwner::this_process(),
            fencing: None,
            watermarks: None,
        },
        &TaskTracker::new(),
        CancellationToken::new(),
    );
    let mut run = record(&run_id);
    observer.run_started(&run);
    observer.flush().await;
    let mut step = StepRecord::pending("only", StepType::Tool);
    step.status = StepStatus::Succeeded;
    step.started_at = Some(Utc::now());
    step.finished_at = Some(Utc::now());
    run.steps = vec![step];
    run.status = RunStatus::Succeeded;
    run.finished_at = Some(Utc::now());
    observer.run_finished(&run);
    observer.close().await;

    let stored = db.runs().get_run(&run_id).await?.context("stored")?;
    ensure!(
        stored.status == RunStatus::Running && stored.steps[0].status == StepStatus::Succeeded,
        "the step landed, the refused final status did not: {stored:?}"
    );
    let said = lines
        .lock()
        .expect("lines")
        .get(&run_id)
        .cloned()
        .unwrap_or_default();
    let retries = said
        .iter()
        .filter(|(m, _)| m == "retrying the run's final write")
        .count();
    let failed: Vec<_> = said
        .iter()
        .filter(|(m, level)| m == "writing the run record failed" && *level == tracing::Level::WARN)
        .collect();
    ensure!(retries == 0, "a permanent failure is not retried: {said:?}");
    ensure!(failed.len() == 1, "the failure is reported once: {said:?}");
    if let Db::Postgres(pool) = &db {
        let tries: i64 = sqlx::query_scalar(
            "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM final_tries",
        )
        .fetch_one(pool)
        .await?;
        ensure!(tries == 1, "the final write was tried {tries} times");
    }
    Ok(())
}
