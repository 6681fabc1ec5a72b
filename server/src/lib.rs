//! dragnet-server is dragnet's HTTP API (SPEC §6, §8): teams holding bearer
//! tokens submit workflow files as versions, validate them with located
//! diagnostics, start runs (inputs typed, idempotency keys honoured), list
//! and read them, cancel them, and follow each as server-sent events. Runs
//! execute in this process through the engine, recorded in the store as
//! they go, or in any process sharing its PostgreSQL store (leases, SPEC
//! §9). Errors become status codes in one place (`error`); shutdown stops
//! taking work, lets running runs finish within a grace period and hands
//! the rest back. `ui` serves the first pages of the web UI beside the API.
#![forbid(unsafe_code)]

pub mod auth;
mod bodies;
pub mod claimer;
mod error;
mod events;
mod extract;
mod gate;
mod launch;
mod live;
mod metrics;
mod routes;
mod runs;
pub mod scheduler;
mod schedules;
pub mod secrets;
mod shutdown;
mod state;
pub mod ui;
mod upload;
mod upstream_hosts;
mod workflows;

pub use auth::{create_token, new_team_id, token_hash, NewToken, TOKEN_PREFIX};
pub use error::{ApiError, ApiResult};
pub use routes::{openapi, router};
pub use shutdown::{serve, work};
pub use state::{AppState, ServerConfig};
