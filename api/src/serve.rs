//! Serving: the API on its listener and, beside it, the runner's work
//! (the cron scheduler and the claim passes) until told to stop; then the
//! runner's ordered stop (SPEC §9, [`dragnet_runner::shutdown`]).

use tokio::net::TcpListener;

use crate::routes::router;
use crate::state::AppState;

/// Serves the API on `listener` until `state.stopping()` is cancelled,
/// then drains as [`dragnet_runner::work`] does. Cancelling
/// `state.halt()` stops everything at once.
pub async fn serve(listener: TcpListener, state: AppState) -> std::io::Result<()> {
    let app = router(state.clone());
    let stopping = state.stopping().clone();
    let server = axum::serve(dragnet_http::listen::sending_at_once(listener), app)
        .with_graceful_shutdown(async move { stopping.cancelled().await });
    let launcher = state.launcher().clone();
    let (served, ()) = tokio::join!(async { server.await }, dragnet_runner::work(launcher));
    served
}
