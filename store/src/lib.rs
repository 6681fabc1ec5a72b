//! dragnet-store owns persistence, on PostgreSQL (production, any number of
//! workers) or SQLite (the embedded default), through sqlx with embedded
//! migrations: the cache of complete walks behind dragnet-core's
//! `CacheStore` seam (compressed at rest, scoped, swept when expired), and
//! run records written as runs progress (`StoreObserver`, batched, outputs
//! compressed once and cleared after a retention period), read back as the
//! engine's typed records through its `RunLog` port, with runs whose process
//! died marked `interrupted`; and what a server keeps: teams and hashed
//! API tokens, submitted workflows with their versions, runs' owners and
//! idempotency keys, and the events of each run's stream; and stored
//! results of agent calls and connected-app credentials behind
//! dragnet-core's [`dragnet_core::ResultStore`] and
//! [`dragnet_core::ConnectionStore`] ports (a store error crosses them
//! whole, `ports`).
#![forbid(unsafe_code)]

mod cache;
mod codec;
mod connect;
mod connections;
pub use connect::PoolSize;
mod db;
mod error;
mod observer;
mod ports;
mod process;
mod results;
mod runs;
mod schedules;
mod secrets;
pub use secrets::{open_secret, seal_secret, SecretInfo};
mod serving_lock;
mod setup_lock;
mod sweeper;
mod teams;
mod wakeups;
pub use wakeups::Wakeups;
mod workflows;
mod writer;

#[cfg(feature = "testing")]
pub mod testing;

pub use db::{default_url, Db};
pub use error::{Error, Result};
pub use observer::{Fencing, ObserverOptions, StoreObserver};
pub use process::{hostname, pid_alive};
pub use results::EXPIRED_KEPT;
pub use runs::{
    ClaimedRun, Lease, LeaseLength, NewRun, Renewal, RunEvent, RunFilter, RunOwner, RunPages,
    Submitted, IDEMPOTENCY_WINDOW,
};
pub use schedules::{ScheduleRow, ScheduleRun, ScheduleSpec, TickRow, TickStatus, TickWrite};
pub use serving_lock::ServingLock;
pub use sweeper::{spawn_store_sweeper, spawn_sweeper};
pub use teams::{Team, TokenInfo};
pub use workflows::{NewVersion, Pushed, VersionInfo, WorkflowSummary, WorkflowVersion};
