//! dragnet-api is dragnet's HTTP API (SPEC §6, §8): teams holding bearer
//! tokens submit workflow files as versions, validate them with located
//! diagnostics, start runs (inputs typed, idempotency keys honoured), list
//! and read them, cancel them, and follow each as server-sent events. The
//! runs themselves — submitted, launched, claimed under leases, fired by
//! the scheduler and drained at shutdown — are [`dragnet_runner`]'s; the
//! API holds a [`dragnet_runner::Launcher`] in its [`AppState`] and serves
//! beside the runner's work ([`serve()`]).
//!
//! Layout, vocabulary first:
//! - `error`: [`ApiError`], every failure as a status code and a JSON body
//!   (the one place errors become answers); `bodies`: the response types;
//!   `extract`: JSON bodies and queries as [`ApiError`]s.
//! - `state`: [`AppState`] and [`ServerConfig`] (the runner's settings,
//!   the body limit, the metrics token).
//! - [`auth`]: bearer tokens → the calling team.
//! - `upload`, `provider_rules`, [`secrets`]: what a push is checked
//!   against (documents, where providers may point, the team's secrets).
//! - `launch`: the API's side of starting, rerunning and cancelling runs.
//! - `workflows`, `runs`, `events`, `schedules`, `backfills`, `watermarks` (`/v1/state`),
//!   `metrics`: the handlers.
//! - `routes`: the one route table and the OpenAPI document
//!   ([`router`], [`openapi`]); [`ui`]: the web UI beside it.
//! - `serve`: [`serve()`], the API and the runner's work until stopped.
#![forbid(unsafe_code)]

pub mod auth;
mod backfills;
mod bodies;
mod error;
mod events;
mod extract;
mod launch;
mod metrics;
mod provider_rules;
mod routes;
mod runs;
mod schedules;
pub mod secrets;
mod serve;
mod state;
pub mod ui;
mod upload;
mod watermarks;
mod workflows;

pub use auth::{create_token, new_team_id, token_hash, NewToken, TOKEN_PREFIX};
pub use error::{ApiError, ApiResult};
pub use routes::{openapi, router};
pub use serve::serve;
pub use state::{AppState, ServerConfig};
