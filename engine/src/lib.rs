//! dragnet-engine owns workflows: a YAML (or JSON) file is parsed, compiled
//! into validated types with every error located at file:line:col, planned
//! as a DAG from `needs`, refs and branch gates, and run with independent
//! steps in parallel. Tool steps go through `dragnet_walk::execute`, the
//! same loop layer agents use, and return the tool's own payload with the
//! verdict under `_loop`.
//!
//! Layout, file to run:
//! - [`step_id`]: a step's id, the vocabulary refs and the model share.
//! - [`workflow`]: the file as written (serde types, the JSON Schema) and
//!   its compilation into validated types, every problem located.
//! - [`refs`]: `{ref: "<JSONPath>"}` references and their bounded
//!   evaluation.
//! - [`plan`]: the DAG of steps from `needs`, refs and branch gates.
//! - [`schedule`]: cron triggers in time (DST gaps and repeats, catch-up).
//! - [`watermark`]: the values incremental walks compare and ask from
//!   (issue 25 §1: the value type is built; steps do not use it yet).
//! - [`run`]: the executor: steps in parallel, tool steps through the walk,
//!   branches, records read back through the [`run::RunLog`] port.
//! - [`error`]: the crate's [`Error`].
#![forbid(unsafe_code)]

pub mod error;
pub mod plan;
pub mod refs;
pub mod run;
pub mod schedule;
pub mod step_id;
pub mod watermark;
pub mod workflow;

pub use error::Error;
