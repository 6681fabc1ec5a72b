//! dragnet-gateway is the agent side of dragnet: the bindings of agents to
//! tools of providers (OpenAPI documents, upstream MCP servers), each call
//! through the loop layer with the binding's looping and the caller's
//! cache scope and credentials, the agent's rendering of a result, the
//! size guard that cuts an answer to a budget and stores the whole under an
//! opaque id scoped to organisation and thread, the retrieval tools that
//! read it (`queryToolResult`, `fetchToolResult`), and the rule that a cut
//! answer is read before anything else is called. `runtime` has no
//! transport; `mcp` is the one adapter over rmcp that serves it (stdio and
//! streamable HTTP). Stored results and connected-app credentials are kept
//! through dragnet-core's ports ([`dragnet_core::ResultStore`],
//! [`dragnet_core::ConnectionStore`]); dragnet-store implements them on
//! PostgreSQL and SQLite.
//!
//! Layout, vocabulary first: no module uses one listed after it.
//! - [`error`]: the crate's error; [`definition`]: a tool as an MCP client
//!   sees it; [`jws`]: a compact JWS taken apart (parts, `alg`, the bytes
//!   signed); [`token`]: HS256 caller tokens; [`oauth`]: OAuth access
//!   tokens from configured issuers (keys, checks, the metadata document).
//! - [`results`]: stored results (the id, its time to live);
//!   [`stored_hits`]: complete walks served again from the cache, stored once;
//!   [`caller`]: the Caller (claims, thread, runtime credentials, its cache
//!   scope and TTL); [`connections`]: the sealer of connected-app
//!   credentials.
//! - [`restriction`]: after a cut, only retrieval of it; [`render`]: the
//!   agent's rendering of a walk; [`guard`]: the size guard;
//!   [`retrieval`]: `queryToolResult` and `fetchToolResult`.
//! - [`discovery`]: the split, the search and an agent's pool;
//!   [`listing`]: an agent's tool definitions; [`apps`]: the connected-app
//!   tools; [`config`]: `agent.yaml` compiled.
//! - [`runtime`]: the [`runtime::Gateway`], which lists and calls an
//!   agent's tools and answers the discovery and connected-app tools.
//! - [`mcp`]: the adapter over rmcp (HTTP admission by operator or OAuth
//!   token; one rising progress series per call).
#![forbid(unsafe_code)]

pub mod apps;
pub mod caller;
pub mod config;
pub mod connections;
pub mod definition;
pub mod discovery;
pub mod error;
pub mod guard;
pub mod jws;
pub mod listing;
pub mod mcp;
mod memory;
pub mod oauth;
pub mod render;
pub mod restriction;
pub mod results;
pub mod retrieval;
pub mod runtime;
#[cfg(test)]
mod secrets_tests;
pub mod stored_hits;
#[cfg(test)]
mod testing;
pub mod token;
#[cfg(test)]
mod walks_tests;

pub use error::Error;
pub use results::{Lookup, StoredResult, RESULT_TTL};
