//! The state one shop server shares between requests: request log, "once" faults, writes,
//! the tickets.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::faults::OnceSet;
use crate::log::RequestLog;
use crate::tickets::{self, Outage, Ticket};

/// Shared by every handler of one server (the dataset itself is global and read-only).
#[derive(Debug)]
pub(crate) struct Shared {
    pub log: RequestLog,
    pub once: OnceSet,
    pub reports: Mutex<Vec<Value>>,
    pub alerts: Mutex<Vec<Value>>,
    /// The tickets, as `PUT /tickets/{id}` left them.
    pub tickets: Mutex<Vec<Ticket>>,
    pub ticket_outage: Mutex<Option<Outage>>,
}

impl Shared {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Shared {
            log: RequestLog::default(),
            once: OnceSet::default(),
            reports: Mutex::default(),
            alerts: Mutex::default(),
            tickets: Mutex::new(tickets::seeded()),
            ticket_outage: Mutex::default(),
        })
    }
}

/// Locks a mutex, recovering the data if a holder panicked.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
