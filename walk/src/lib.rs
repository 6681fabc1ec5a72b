//! dragnet-walk is the loop layer of one tool call: it walks every page,
//! fans out over values, filters, projects and states whether the result is
//! complete. It knows nothing of workflows or agents: callers hand
//! [`execute`] a [`ToolCall`] and get a [`LoopResult`] back, which renders
//! for workflows (`_loop`); the agent's rendering is dragnet-gateway's. The
//! tool model, limits and verdict are dragnet-core's; requests go out
//! through dragnet-http's `Upstream`.
//!
//! Layout:
//!
//! - [`call`]: one call end to end ([`execute`]): arguments checked, the
//!   cache asked, the walk or fan-out run, the result shaped;
//! - [`options`]: the reserved arguments (`_fields`, `_all_pages`,
//!   `_for_each`, `_filter`, `_refresh`) as [`LoopOptions`];
//! - [`walk`]: the page walk ([`walk::Walker`]), with its `page_step` (one
//!   page fetched, read, kept and reported, shared by both walks), its
//!   `cursor_walk` for cursors and next-page links, [`walk::streamed`] for
//!   a caller that reads only shaped rows (pages shaped as they are kept,
//!   split while they arrive), [`page_plan`] for page numbers and offsets,
//!   and [`end_signal`] for the answers that say no more follow;
//! - [`fan_out`] and [`for_each`]: one walk per `_for_each` value;
//! - [`collection`]: finding the collection in an answer, with its `split`
//!   (and `split::threads`), [`collection::stream`] (a page split while it
//!   arrives) and [`top_scan`] cutting large pages into raw items;
//! - [`fields`], [`filter`] and [`shape`]: projection and filtering of the
//!   raw items;
//! - [`overrides`]: paging roles a provider names by hand;
//! - [`cache`]: keys, scopes and the policy of one call around the
//!   cache port; [`journal`]: the page journal's keys;
//! - [`result`]: [`LoopResult`] and its workflow rendering, with
//!   `verdict_note` composing the verdict's note.
#![forbid(unsafe_code)]

pub mod cache;
pub mod call;
pub mod collection;
pub mod end_signal;
pub mod fan_out;
pub mod fields;
pub mod filter;
pub mod for_each;
pub mod journal;
pub mod options;
pub mod overrides;
pub mod page_plan;
pub mod result;
pub mod shape;
pub mod top_scan;
mod verdict_note;
pub mod walk;

pub use call::{execute, Runtime, ToolCall, Unshaped};
pub use options::LoopOptions;
pub use result::LoopResult;
