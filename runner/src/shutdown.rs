//! A process's work outside the API (`dragnet worker`, and `serve`
//! beside its API) until told to stop, then stopping in order (SPEC §9):
//! no new runs or claims (`stopping`); queued runs handed back at once;
//! running runs given the grace period to finish; the rest stopped and
//! handed back (their lease released, their attempt, finished steps and
//! kept pages kept), so another process — or this one started again —
//! resumes them; then every background task halted and awaited (bounded).

use std::time::Duration;

use crate::launch::hand_back_all;
use crate::launcher::Launcher;

/// How long runs handed back get to stop and release their leases.
const RECORD_GRACE: Duration = Duration::from_secs(10);

/// Does a process's work without its API (`dragnet worker`, and `serve`
/// beside its API): the cron scheduler and the claim passes — each with
/// the launcher, its own settings, the stop token and the tracker — run
/// until `launcher.stopping()` is cancelled; then runs get their grace,
/// the rest are handed back, and every background task is halted and
/// awaited (bounded).
pub async fn work(launcher: Launcher) {
    if let Some(config) = launcher.config().scheduler.clone() {
        crate::scheduler::spawn(
            launcher.clone(),
            config,
            launcher.stopping().clone(),
            launcher.tracker(),
        );
    }
    if let Some(every) = launcher.config().claim_every {
        crate::claimer::spawn(
            launcher.clone(),
            every,
            launcher.stopping().clone(),
            launcher.tracker(),
        );
    }
    launcher.stopping().cancelled().await;
    drain_runs(&launcher).await;
    // Streams still open and idle writers end now.
    launcher.halt().cancel();
    launcher.tracker().close();
    if tokio::time::timeout(RECORD_GRACE, launcher.tracker().wait())
        .await
        .is_err()
    {
        tracing::warn!("background tasks did not finish within {RECORD_GRACE:?}");
    }
}

/// Waits for running runs up to the grace period, then hands the rest back
/// and waits for them to stop.
async fn drain_runs(launcher: &Launcher) {
    let grace = launcher.config().shutdown_grace;
    if !launcher.live().is_empty() {
        tracing::info!(
            runs = launcher.live().all().len(),
            ?grace,
            "waiting for running runs"
        );
    }
    if tokio::time::timeout(grace, until_no_runs(launcher))
        .await
        .is_ok()
    {
        return;
    }
    tracing::warn!(
        runs = launcher.live().all().len(),
        "grace period over: handing the runs still running back for another process to resume"
    );
    hand_back_all(launcher);
    let _ = tokio::time::timeout(RECORD_GRACE, until_no_runs(launcher)).await;
}

async fn until_no_runs(launcher: &Launcher) {
    while !launcher.live().is_empty() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
