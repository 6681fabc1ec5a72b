//! dragnet-steps owns one tool call, end to end: importing OpenAPI documents
//! into tools, building and sending HTTP requests with retries, and the loop
//! layer that walks every page, fans out over values, filters, projects and
//! states whether the result is complete. It knows nothing of workflows or
//! agents: callers hand it a `ToolCall` and get a `LoopResult` back, which
//! renders for workflows (`_loop`); the agent's rendering is dragnet-gateway's.
#![forbid(unsafe_code)]

pub mod args;
pub mod cache;
pub mod call;
pub mod clock;
pub mod document;
pub mod error;
mod error_kind;
pub mod http;
pub mod items;
pub mod journal;
pub mod json;
pub mod json_rows;
pub mod json_scan;
pub mod looping;
pub mod openapi;
pub mod progress;
pub mod result;
#[doc(hidden)]
pub mod testing;
pub mod tool;
mod verdict_note;

pub use call::{execute, Runtime, ToolCall};
pub use document::Document;
pub use error::{Error, UpstreamError};
pub use looping::budget::{Limits, RetryPolicy};
pub use looping::options::LoopOptions;
pub use looping::verdict::{StopReason, Verdict};
pub use result::{LoopResult, Payload};
pub use tool::{Tool, Toolkit};
