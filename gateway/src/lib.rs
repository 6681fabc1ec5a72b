//! dragnet-gateway is the agent side of dragnet, without a transport (the
//! MCP adapter comes with it later): results stored under opaque,
//! unguessable ids for a while, scoped to an organisation and a thread, and
//! the two retrieval tools that read them — `queryToolResult` (filter on
//! the whole stored set, then project, then page) and `fetchToolResult`
//! (raw character slices) — with the size guard that cuts an answer to a
//! budget and stores the whole, and the rule that a cut answer is read
//! before anything else is called. Storage is behind the `ResultStore` port it
//! owns; dragnet-store implements it on PostgreSQL and SQLite.
#![forbid(unsafe_code)]

pub mod caller;
pub mod config;
pub mod error;
pub mod guard;
pub mod listing;
pub mod mcp;
mod memory;
pub mod restriction;
pub mod result_id;
pub mod results;
pub mod retrieval;
pub mod runtime;
pub mod token;
pub mod upstream;

pub use error::Error;
pub use result_id::ResultId;
pub use results::{Lookup, ResultScope, ResultStore, StoredResult, RESULT_TTL};
