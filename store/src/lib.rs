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
//!
//! Layout: [`Db`] is the connection only ([`Db::connect`],
//! [`Db::migrate`], [`Db::ping`], [`Db::serving_lock`]); the tables are
//! reached through one narrow handle per area, each a cheap clone of the
//! pool, so a task is handed the areas it uses and no others:
//! - [`Teams`] ([`Db::teams`]): teams and their hashed API tokens.
//! - [`Secrets`] ([`Db::secrets`]): team secrets, sealed at rest.
//! - [`Connections`] ([`Db::connections`]): connected-app credentials,
//!   dragnet-core's `ConnectionStore`.
//! - [`Workflows`] ([`Db::workflows`]): submitted workflows and versions.
//! - [`Schedules`] ([`Db::schedules`]): schedules, their ticks, and the
//!   database's clock they are timed by.
//! - [`Cache`] ([`Db::cache`]): the cache of complete walks,
//!   dragnet-core's `CacheStore`.
//! - [`Results`] ([`Db::results`]): stored results of agent calls,
//!   dragnet-core's `ResultStore`.
//! - [`Runs`] ([`Db::runs`]): run records, steps, events, retention,
//!   submission, interrupted runs and kept pages ([`RunPages`]); the
//!   engine's `RunLog`.
//! - [`Leases`] ([`Db::leases`]): claiming, renewing and handing back
//!   runs, cancel requests, and claimers' [`Wakeups`].
//! - [`Watermarks`] ([`Db::watermarks`]): incremental walks' watermarks,
//!   which only move forward, read by runs through [`TeamWatermarks`] and
//!   moved by the [`StoreObserver`]'s writer once a step's record landed.
//! - [`Backfills`] ([`Db::backfills`]): backfills of a workflow's ticks in
//!   a window and the state of each tick.
//!
//! Tasks built on them: [`StoreObserver`] (its writer holds [`Runs`], and
//! the [`Fencing`]'s [`Leases`] under a lease) and the sweepers
//! ([`spawn_sweeper`], [`spawn_store_sweeper`], [`sweep_store_once`]: [`Cache`], [`Results`],
//! [`Runs`]).
#![forbid(unsafe_code)]

mod cache;
pub use cache::Cache;
mod codec;
mod connect;
mod connections;
pub use connect::PoolSize;
pub use connections::Connections;
mod db;
mod error;
mod observer;
mod ports;
mod process;
mod results;
mod runs;
mod schedules;
mod secrets;
pub use secrets::{open_secret, seal_secret, SecretInfo, Secrets};
mod backfills;
mod serving_lock;
mod setup_lock;
mod sweeper;
mod teams;
mod wakeups;
mod watermarks;
pub use backfills::{BackfillRow, BackfillTick, Backfills, NewBackfill};
pub use wakeups::Wakeups;
pub use watermarks::{StoredWatermark, TeamWatermarks, WatermarkKey, Watermarks};
mod workflows;
mod writer;

#[cfg(feature = "testing")]
pub mod testing;

pub use db::{default_url, Db};
pub use error::{Error, Result};
pub use observer::{Fencing, ObserverOptions, StoreObserver};
pub use process::{hostname, pid_alive};
pub use results::{Results, EXPIRED_KEPT};
pub use runs::{
    ClaimedRun, Lease, LeaseLength, Leases, NewRun, Renewal, RunEvent, RunFilter, RunOwner,
    RunPages, Runs, Submitted, IDEMPOTENCY_WINDOW,
};
pub use schedules::{
    Pause, ScheduleRow, ScheduleRun, ScheduleSpec, Schedules, TickRow, TickStatus, TickWrite,
};
pub use serving_lock::ServingLock;
pub use sweeper::{spawn_store_sweeper, spawn_sweeper, sweep_store_once};
pub use teams::{Team, Teams, TokenInfo};
pub use workflows::{NewVersion, Pushed, VersionInfo, WorkflowSummary, WorkflowVersion, Workflows};
