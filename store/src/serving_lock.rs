//! One serving process per SQLite store (SPEC §9): `dragnet serve` (and the
//! coming `dragnet worker`) executes runs under leases, which on SQLite stay
//! the embedded, single-process default. A second serving process against
//! the same file is refused at start, with a message saying why and what
//! to use instead. The guard is an exclusive OS file lock (flock) on a
//! sibling file, `<db>.dragnet-serving`, held for the process's lifetime
//! and released by the OS when it dies. PostgreSQL needs no guard: any
//! number of processes share it.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;

use fs4::TryLockError;

use crate::db::Db;
use crate::error::{Error, Result};

/// Held while this process serves a SQLite store.
#[derive(Debug)]
pub struct ServingLock {
    _file: File,
}

impl Db {
    /// Takes the serving lock of a SQLite store (`None` on PostgreSQL);
    /// refused when another process holds it.
    pub fn serving_lock(&self) -> Result<Option<ServingLock>> {
        let Db::Sqlite(pool) = self else {
            return Ok(None);
        };
        let db = pool.connect_options().get_filename().to_path_buf();
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".dragnet-serving");
        let path: PathBuf = db.with_file_name(name);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::SetupLock {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => Ok(Some(ServingLock { _file: file })),
            Err(TryLockError::WouldBlock) => Err(Error::StoreServed { db }),
            Err(TryLockError::Error(e)) => Err(Error::SetupLock {
                path,
                reason: e.to_string(),
            }),
        }
    }
}
