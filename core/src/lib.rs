//! dragnet-core is the vocabulary every other dragnet crate shares and the
//! ports a store implements, with no logic that needs a network, a file or
//! a database. It depends on no other dragnet crate, so every crate may
//! depend on it. It owns:
//!
//! - the tool model: [`tool::Tool`] and [`tool::Toolkit`], how a tool pages
//!   ([`paging`]) and the checking of a call's arguments ([`args`]);
//! - the bounds and outcome of a call: [`budget::Limits`],
//!   [`budget::Budget`], [`verdict::StopReason`] and [`verdict::Verdict`];
//! - raw JSON kept as text: [`json`], [`json_scan`], [`json_rows`],
//!   [`items::Items`], [`document::Document`] and [`payload::Payload`]
//!   (what an upstream answered, as the cache and result store keep it);
//! - [`error::Error`] and [`error::UpstreamError`], a tool call's failure,
//!   with a stable `kind` for each variant;
//! - the one [`clock::Clock`] (a test clock behind the `test-util`
//!   feature), [`progress`] events and [`secret::Secret`];
//! - [`ports`]: the traits a store implements and the types that cross
//!   them — stored results ([`ResultStore`], kept for a [`ResultScope`]
//!   under a [`ResultId`]), connected-app credentials
//!   ([`ConnectionStore`], per [`ConnectionOwner`]), complete walks
//!   ([`ports::cache::CacheStore`]) and fetched pages
//!   ([`ports::journal::PageJournal`]) — with [`ports::Error`], what a
//!   port's implementation reports: its own error kept whole, and whether
//!   trying again may succeed.
//!
//! Above it, dragnet-openapi imports documents into tools, dragnet-http
//! sends a tool's requests, and dragnet-walk walks them into a
//! `LoopResult`; dragnet-store implements the ports on PostgreSQL and
//! SQLite.
#![forbid(unsafe_code)]

pub mod args;
pub mod budget;
pub mod clock;
pub mod document;
pub mod error;
mod error_kind;
pub mod hex;
pub mod items;
pub mod json;
pub mod json_rows;
pub mod json_scan;
pub mod paging;
pub mod payload;
pub mod ports;
pub mod progress;
pub mod secret;
pub mod tool;
pub mod verdict;

pub use budget::{Limits, RetryPolicy};
pub use document::Document;
pub use error::{Error, UpstreamError};
pub use payload::Payload;
pub use ports::connections::{ConnectionOwner, ConnectionStore};
pub use ports::result_id::ResultId;
pub use ports::results::{Form, Lookup, ResultScope, ResultStore, StoredResult};
pub use ports::StoreFuture;
pub use tool::{Tool, Toolkit};
pub use verdict::{StopReason, Verdict};
