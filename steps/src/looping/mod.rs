//! The loop layer (SPEC §3): detection, collection finding, the walk, the
//! fan-out, filtering, projection and the verdict.

pub mod budget;
pub mod collection;
pub mod cursor;
mod cursor_walk;
pub mod detect;
pub mod end_signal;
pub mod fan_out;
pub mod fields;
pub mod filter;
pub mod for_each;
pub mod options;
pub mod overrides;
pub mod page_plan;
pub mod shape;
mod split;
mod split_threads;
pub mod top_scan;
pub mod verdict;
pub mod walk;
