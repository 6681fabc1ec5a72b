//! The state one shop server shares between requests: request log, "once" faults, writes.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::faults::OnceSet;
use crate::log::RequestLog;

/// Shared by every handler of one server (the dataset itself is global and read-only).
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub log: RequestLog,
    pub once: OnceSet,
    pub reports: Mutex<Vec<Value>>,
    pub alerts: Mutex<Vec<Value>>,
}

impl Shared {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
}

/// Locks a mutex, recovering the data if a holder panicked.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
