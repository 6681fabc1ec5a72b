//! The ports: traits a store implements (dragnet-store, on PostgreSQL and
//! SQLite) and the crates above call through, each with the types that
//! cross it. Their methods return a boxed future, so a store can sit behind
//! `dyn`.
//!
//! - [`results`]: stored results of agent calls, under a
//!   [`result_id::ResultId`];
//! - [`connections`]: connected-app credentials, kept sealed;
//! - [`cache`]: complete walks ([`cache::CacheStore`]);
//! - [`journal`]: the pages a walk fetched ([`journal::PageJournal`]);
//! - [`error`]: [`Error`], what a port's implementation reports (the
//!   result and connection stores; the cache and the journal keep to their
//!   own quieter contracts).

pub mod cache;
pub mod connections;
pub mod error;
pub mod journal;
pub mod result_id;
pub mod results;

use std::future::Future;
use std::pin::Pin;

pub use error::{BoxError, Error};

/// What a port's method returns: a boxed future of its answer or the
/// store's [`Error`].
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// A boxed future, so stores can sit behind `dyn` ports.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
