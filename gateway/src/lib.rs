//! dragnet-gateway is the agent side of dragnet, without a transport (the
//! MCP adapter comes with it later): results stored under opaque,
//! unguessable ids for a while, scoped to an organisation and a thread, and
//! the two retrieval tools that read them — `queryToolResult` (filter on
//! the whole stored set, then project, then page) and `fetchToolResult`
//! (raw character slices). Storage is behind the `ResultStore` port it
//! owns; dragnet-store implements it on PostgreSQL and SQLite.
#![forbid(unsafe_code)]

pub mod error;
pub mod result_id;
pub mod results;
pub mod retrieval;

pub use error::Error;
pub use result_id::ResultId;
pub use results::{Lookup, ResultScope, ResultStore, StoredResult, RESULT_TTL};
