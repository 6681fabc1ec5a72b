//! `GET /v1/runs/{id}/events`: a run's stream as server-sent events —
//! `run`, `step` status changes, `data-tool-loop-progress` (at most one per
//! 750 ms per step, as the walk throttles them) and a final `end` with the
//! run's status, each with its number as the event id. `Last-Event-ID` (or
//! `?after=`) resumes after that event without loss; a run that has ended
//! replays its stored events and the stream closes. A run another process
//! runs (SPEC §9) is followed from the store: its record is read every
//! half second and each step's change of status is sent, then the end —
//! page progress only the running process streams, and ids number this
//! stream's own events.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use dragnet_engine::run::{RunRecord, RunStatus, StepStatus};
use dragnet_store::RunEvent;
use futures::Stream;
use serde::Deserialize;
use serde_json::json;

use crate::auth::Caller;
use crate::bodies::{ErrorBody, StreamEvent};
use crate::error::{ApiError, ApiResult};
use crate::extract::Query;
use crate::runs::check_owner;
use crate::state::AppState;
use dragnet_runner::live::{end_json, step_json, EVENT_END, EVENT_RUN, EVENT_STEP};

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventParams {
    /// Resume after this event id (as `Last-Event-ID` does).
    pub after: Option<u64>,
}

#[utoipa::path(get, path = "/v1/runs/{id}/events", tag = "runs", security(("bearer" = [])),
    params(
        ("id" = String, Path),
        EventParams,
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this event id."),
    ),
    responses(
        (status = 200, description = "Server-sent events: run, step, data-tool-loop-progress, end.",
            content_type = "text/event-stream", body = StreamEvent),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    Path(run_id): Path<String>,
    Query(params): Query<EventParams>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    check_owner(&state, &caller, &run_id).await?;
    let last = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| ApiError::bad_request("Last-Event-ID", "give an event id"))?,
        ),
    };
    let after = last.or(params.after).unwrap_or(0);
    let stream = stream(state, run_id, after);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// How often a run another process runs is read back from the store.
const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// Where a stream stands.
struct Reader {
    state: AppState,
    run_id: String,
    /// The id of the last event sent.
    after: u64,
    queue: VecDeque<RunEvent>,
    done: bool,
    /// Following a run from the store: each step's status last told, and
    /// how many events were made so far.
    followed: Option<Followed>,
}

#[derive(Default)]
struct Followed {
    told: HashMap<String, StepStatus>,
    made: u64,
}

pub(crate) fn stream(
    state: AppState,
    run_id: String,
    after: u64,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let reader = Reader {
        state,
        run_id,
        after,
        queue: VecDeque::new(),
        done: false,
        followed: None,
    };
    futures::stream::unfold(reader, |mut r| async move {
        let event = r.next().await?;
        let sse = Event::default()
            .id(event.seq.to_string())
            .event(event.event.as_str())
            .data(event.data.as_str());
        Some((Ok(sse), r))
    })
}

impl Reader {
    async fn next(&mut self) -> Option<RunEvent> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                self.after = e.seq;
                return Some(e);
            }
            if self.done {
                return None;
            }
            match self.state.live().get(&self.run_id) {
                Some(live) => {
                    // Subscribed before reading, so no event slips between.
                    let mut news = live.watch();
                    let (events, ended) = live.events_after(self.after);
                    if !events.is_empty() {
                        self.queue.extend(events);
                        continue;
                    }
                    if ended {
                        self.done = true;
                        continue;
                    }
                    tokio::select! {
                        changed = news.changed() => if changed.is_err() { self.done = true },
                        _ = self.state.halt().cancelled() => self.done = true,
                    }
                }
                None => {
                    let record = match self
                        .state
                        .db()
                        .runs()
                        .get_run_with(&self.run_id, false)
                        .await
                    {
                        Ok(record) => record,
                        Err(error) => {
                            tracing::error!(run_id = %self.run_id, %error, "reading a run to stream");
                            None
                        }
                    };
                    match record {
                        Some(r) if matches!(r.status, RunStatus::Queued | RunStatus::Running) => {
                            // Another process runs it (or none yet).
                            let news = self.follow(&r);
                            self.queue.extend(news);
                            if self.queue.is_empty() {
                                tokio::select! {
                                    () = tokio::time::sleep(FOLLOW_EVERY) => {}
                                    () = self.state.halt().cancelled() => self.done = true,
                                }
                            }
                        }
                        Some(r) if self.followed.is_some() => {
                            // Followed to its end.
                            self.done = true;
                            let news = self.follow(&r);
                            self.queue.extend(news);
                        }
                        _ => {
                            // The run has ended: its events are stored.
                            self.done = true;
                            self.queue.extend(self.stored().await);
                        }
                    }
                }
            }
        }
    }

    /// The stored events after the last one sent. A run that ended with
    /// none stored (it ran in another process, or storing them failed) is
    /// told from its record: each finished step, then its end.
    async fn stored(&self) -> Vec<RunEvent> {
        let db = self.state.db();
        match db.runs().run_events(&self.run_id, self.after).await {
            Ok(events) if !events.is_empty() => return events,
            Ok(_) => {}
            Err(error) => {
                tracing::error!(run_id = %self.run_id, %error, "reading a run's events");
                return Vec::new();
            }
        }
        match db.runs().run_events(&self.run_id, 0).await {
            Ok(all) if all.is_empty() => {}
            // Stored, and every one of them sent already.
            _ => return Vec::new(),
        }
        match db.runs().get_run_with(&self.run_id, false).await {
            Ok(Some(record)) => told_from(&record)
                .into_iter()
                .filter(|e| e.seq > self.after)
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl Reader {
    /// The events of a followed run since it was last read: its `run`
    /// event first, each step whose status changed, and its end once it
    /// has ended. Those numbered up to `after` were sent already.
    fn follow(&mut self, record: &RunRecord) -> Vec<RunEvent> {
        let followed = self.followed.get_or_insert_with(Followed::default);
        let mut made = Vec::new();
        if followed.made == 0 {
            made.push((
                EVENT_RUN,
                json!({"runId": record.run_id, "workflow": record.workflow, "status": record.status}),
            ));
        }
        for step in &record.steps {
            if step.status == StepStatus::Pending
                || followed.told.get(&step.id) == Some(&step.status)
            {
                continue;
            }
            followed.told.insert(step.id.clone(), step.status);
            made.push((EVENT_STEP, step_json(step)));
        }
        if !matches!(record.status, RunStatus::Queued | RunStatus::Running) {
            made.push((EVENT_END, end_json(record)));
        }
        let mut events = Vec::new();
        for (event, data) in made {
            followed.made += 1;
            if followed.made > self.after {
                events.push(RunEvent {
                    seq: followed.made,
                    event: event.to_string(),
                    data: data.to_string(),
                });
            }
        }
        events
    }
}

/// A finished run's events rebuilt from its record.
fn told_from(record: &RunRecord) -> Vec<RunEvent> {
    record
        .steps
        .iter()
        .filter(|s| s.is_finished())
        .map(|s| (EVENT_STEP, step_json(s).to_string()))
        .chain(std::iter::once((EVENT_END, end_json(record).to_string())))
        .enumerate()
        .map(|(i, (event, data))| RunEvent {
            seq: i as u64 + 1,
            event: event.to_string(),
            data,
        })
        .collect()
}
