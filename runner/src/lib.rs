//! dragnet-runner runs workflows outside the API (SPEC §8, §9): it submits
//! runs, launches them as tracked tasks behind the concurrency gate, claims
//! the runs nobody holds and takes over those whose lease expired, fires
//! cron schedules, and stops in order. `dragnet serve` uses it beside the
//! HTTP API (`dragnet-api`), `dragnet worker` alone. It speaks no HTTP.
//!
//! Layout, vocabulary first:
//! - [`config`]: [`RunnerConfig`], the scheduler's settings and its
//!   [`TickClock`].
//! - [`error`]: the one [`Error`].
//! - [`task`]: tracked tasks that keep their name; their ends and panics
//!   are logged with it ([`task::spawn`], [`task::TaskOutcome`]).
//! - [`gate`]: concurrency slots (the process's, each workflow's).
//! - [`live`]: the runs this process is running and their streams' events
//!   ([`live::LiveRuns`], [`live::StreamObserver`]).
//! - [`metrics`]: what runs are counted by ([`metrics::MetricsObserver`]).
//! - [`secrets`]: the team secrets a run opens.
//! - [`compile`]: stored workflow text compiled with its documents
//!   confined.
//! - [`launcher`]: [`Launcher`], the handle runs start through.
//! - [`launch`]: one run as a tracked task ([`launch::spawn_run`]): slots,
//!   lease renewals while queued, the engine, fenced writes, hand-back.
//! - [`submit`]: run submission, built once ([`Launcher::submit`]).
//! - [`requests`]: a team's start, rerun and cancel.
//! - [`claimer`]: claim passes (queued runs nobody holds, expired leases).
//! - [`scheduler`]: cron passes; [`backfill`]: backfills of a window's
//!   ticks, advanced by the same passes.
//! - [`shutdown`]: [`work`], the scheduler and claim passes until stopped,
//!   then the drain.
//!
//! Background tasks get what they use: the scheduler and the claimer each
//! a [`Launcher`], their own settings, a stop token and the tracker.
#![forbid(unsafe_code)]

pub mod backfill;
pub mod claimer;
pub mod compile;
pub mod config;
pub mod error;
pub mod gate;
pub mod launch;
pub mod launcher;
pub mod live;
pub mod metrics;
pub mod requests;
pub mod scheduler;
pub mod secrets;
pub mod shutdown;
pub mod submit;
pub mod task;

pub use config::{RunnerConfig, SchedulerConfig, TickClock};
pub use error::{Error, Result};
pub use launch::RunRequest;
pub use launcher::Launcher;
pub use requests::{Asker, Started};
pub use shutdown::work;
