//! dragnet-core holds what the other crates share and none of them owns:
//! the ports — traits a store implements and the crates above call
//! through — and the one error those ports report. It depends on no other
//! dragnet crate, so every crate may depend on it.
//!
//! Layout:
//! - [`ports`]: the ports and the types that cross them, with the boxed
//!   future their methods return ([`ports::StoreFuture`]).
//!   - [`ports::results`]: stored results of agent calls, kept for a
//!     [`ResultScope`] ([`ResultStore`], [`StoredResult`], [`Lookup`])
//!     under a [`ResultId`] ([`ports::result_id`]: fresh, unguessable ids,
//!     and the shape any other text is refused by).
//!   - [`ports::connections`]: connected-app credentials, kept sealed per
//!     [`ConnectionOwner`] and provider ([`ConnectionStore`]).
//! - [`error`]: [`Error`], what a port's implementation reports: its own
//!   error kept whole, and whether trying again may succeed.
//!
//! dragnet-store implements the ports on PostgreSQL and SQLite;
//! dragnet-gateway calls them.
#![forbid(unsafe_code)]

pub mod error;
pub mod ports;

pub use error::{BoxError, Error};
pub use ports::connections::{ConnectionOwner, ConnectionStore};
pub use ports::result_id::ResultId;
pub use ports::results::{Lookup, ResultScope, ResultStore, StoredResult};
pub use ports::StoreFuture;
