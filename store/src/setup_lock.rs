//! One process at a time sets a SQLite file up. Two steps cannot be left to
//! SQLite's busy timeout: switching a new file to WAL takes an exclusive
//! lock that the busy handler does not wait for ("database is locked"), and
//! sqlx's SQLite migrator takes no lock of its own, so two processes
//! migrating a fresh file both apply the first migration (`UNIQUE
//! constraint failed: _sqlx_migrations.version`). Both steps run holding an
//! exclusive OS file lock (flock) on a sibling file, `<db>.dragnet-lock`:
//! a sibling, because SQLite's own POSIX locks live on the database file
//! itself, and an OS lock, because it goes away with a process that dies
//! holding it. The file is left in place (removing it would race).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use fs4::TryLockError;
use tokio::time::Instant;

use crate::error::{Error, Result};

/// How often a waiting process tries the lock again.
const POLL: Duration = Duration::from_millis(20);

/// Held while a SQLite file is being set up; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct SetupLock {
    _file: File,
}

/// The lock file beside `db`.
pub(crate) fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".dragnet-lock");
    db.with_file_name(name)
}

/// Waits (up to `timeout`) for the setup lock of the SQLite file `db`.
pub(crate) async fn acquire(db: &Path, timeout: Duration) -> Result<SetupLock> {
    let path = lock_path(db);
    let failed = |reason: String| Error::SetupLock {
        path: path.clone(),
        reason,
    };
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| failed(e.to_string()))?;
    let deadline = Instant::now() + timeout;
    loop {
        // Called through the trait: std's `File::try_lock` is newer than
        // the workspace's minimum Rust.
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => return Ok(SetupLock { _file: file }),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                tokio::time::sleep(POLL).await;
            }
            Err(TryLockError::WouldBlock) => {
                return Err(failed(format!(
                    "another process held it for more than {} s",
                    timeout.as_secs()
                )))
            }
            Err(TryLockError::Error(e)) => return Err(failed(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_file_sits_beside_the_database() {
        assert_eq!(
            lock_path(Path::new("/tmp/x/dragnet.db")),
            PathBuf::from("/tmp/x/dragnet.db.dragnet-lock")
        );
        assert_eq!(
            lock_path(Path::new("x.db")),
            PathBuf::from("x.db.dragnet-lock")
        );
    }

    #[tokio::test]
    async fn a_held_lock_makes_the_next_one_wait_until_it_is_released() {
        let dir = std::env::temp_dir().join(format!("dragnet-setup-lock-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let db = dir.join("x.db");
        let held = acquire(&db, Duration::from_secs(5)).await;
        assert!(held.is_ok());
        // flock locks belong to the open file: a second open in this process
        // contends like another process would.
        let waited = acquire(&db, Duration::from_millis(100)).await;
        let text = waited.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("another process held it"), "{text}");
        drop(held);
        assert!(acquire(&db, Duration::from_millis(100)).await.is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
