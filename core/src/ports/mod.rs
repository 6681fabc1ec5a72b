//! The ports: traits a store implements (dragnet-store, on PostgreSQL and
//! SQLite) and the crates above call through, each with the types that
//! cross it. Their methods return a [`StoreFuture`], so a store can sit
//! behind `dyn`.

pub mod connections;
pub mod result_id;
pub mod results;

use std::future::Future;
use std::pin::Pin;

use crate::error::Error;

/// What a port's method returns: a boxed future of its answer or the
/// store's [`Error`].
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;
