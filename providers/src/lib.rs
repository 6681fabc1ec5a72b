//! dragnet-providers owns what a provider is, for workflows and agents
//! alike: the format a provider is written in (the same in workflow files
//! and `agent.yaml`), where its calls go, and the one place its
//! credentials are read.
//!
//! - [`file`](mod@file): the serde types of a provider's parts as written (`mcp`,
//!   `credentials`), from which both JSON Schemas are generated.
//! - [`server`]: an upstream MCP server as compiled ([`McpServer`],
//!   [`ChildEnv`]), where a provider's comes from ([`McpSource`]: its own,
//!   or one the operator declared, [`DeclaredServer`]).
//! - [`compile`]: which kind a provider block is ([`compile::source`],
//!   the same rules for both [`compile::Place`]s) and its `mcp:` block
//!   compiled, each problem located in the file.
//! - [`credentials`]: the [`Resolver`] that reads the secrets a provider
//!   names, from the process environment or a team's secrets.
//! - [`mcp_client`]: an upstream MCP server connected and supervised
//!   ([`McpUpstream`]): a child process started with only the default
//!   environment ([`mcp_client::DEFAULT_CHILD_ENV`]) and its `env`, or a
//!   streamable HTTP server; progress routed to each call.
//! - [`mcp_tools`]: its tools as loop-layer tools ([`mcp_tools::tool_of`]),
//!   its answers as pages ([`mcp_tools::page_of`]).
//! - [`child`]: a server run as a child process, spoken to a line at a
//!   time ([`lines`]), its answers to `tools/call` read as their one kind.
//! - [`upstream`]: one provider's connection ([`ProviderUpstream`]).
//! - [`error`]: the crate's [`Error`].
#![forbid(unsafe_code)]

pub mod child;
pub mod compile;
pub mod credentials;
pub mod error;
pub mod file;
pub mod lines;
pub mod mcp_client;
pub mod mcp_tools;
pub mod server;
pub mod upstream;

pub use credentials::{EnvLookup, Resolver};
pub use error::Error;
pub use mcp_client::{McpCall, McpUpstream, UpstreamProgress, UpstreamProgressSink};
pub use server::{ChildEnv, DeclaredServer, McpServer, McpSource};
pub use upstream::ProviderUpstream;
