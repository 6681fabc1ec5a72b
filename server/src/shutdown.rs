//! Serving (the API, the cron scheduler and the claim passes) until told
//! to stop, then stopping in order (SPEC §9): no new connections, runs or
//! claims (`stopping`); queued runs handed back at once; running runs given
//! the grace period to finish; the rest stopped and handed back (their
//! lease released, their attempt, finished steps and kept pages kept), so
//! another process — or this server started again — resumes them; then
//! every background task halted and awaited (bounded).

use std::time::Duration;

use tokio::net::TcpListener;

use crate::launch::hand_back_all;
use crate::routes::router;
use crate::state::AppState;

/// How long runs handed back get to stop and release their leases.
const RECORD_GRACE: Duration = Duration::from_secs(10);

/// Serves the API on `listener` until `state.stopping()` is cancelled, then
/// drains as above. Cancelling `state.halt()` stops everything at once.
pub async fn serve(listener: TcpListener, state: AppState) -> std::io::Result<()> {
    let app = router(state.clone());
    let stopping = state.stopping().clone();
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(async move { stopping.cancelled().await });
    let (served, ()) = tokio::join!(async { server.await }, work(state.clone()));
    served
}

/// Does a server's work without its API (`dragnet worker`, and `serve`
/// beside its API): the cron scheduler and the claim passes run until
/// `state.stopping()` is cancelled; then runs get their grace, the rest
/// are handed back, and every background task is halted and awaited
/// (bounded).
pub async fn work(state: AppState) {
    if let Some(config) = state.config().scheduler.clone() {
        state
            .tracker()
            .spawn(crate::scheduler::run(state.clone(), config));
    }
    crate::claimer::spawn(&state);
    state.stopping().cancelled().await;
    drain_runs(&state).await;
    // Streams still open and idle writers end now.
    state.halt().cancel();
    state.tracker().close();
    if tokio::time::timeout(RECORD_GRACE, state.tracker().wait())
        .await
        .is_err()
    {
        tracing::warn!("background tasks did not finish within {RECORD_GRACE:?}");
    }
}

/// Waits for running runs up to the grace period, then hands the rest back
/// and waits for them to stop.
async fn drain_runs(state: &AppState) {
    let grace = state.config().shutdown_grace;
    if !state.live().is_empty() {
        tracing::info!(
            runs = state.live().all().len(),
            ?grace,
            "waiting for running runs"
        );
    }
    if tokio::time::timeout(grace, until_no_runs(state))
        .await
        .is_ok()
    {
        return;
    }
    tracing::warn!(
        runs = state.live().all().len(),
        "grace period over: handing the runs still running back for another process to resume"
    );
    hand_back_all(state);
    let _ = tokio::time::timeout(RECORD_GRACE, until_no_runs(state)).await;
}

async fn until_no_runs(state: &AppState) {
    while !state.live().is_empty() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
