//! `GET /metrics` in the Prometheus text format (0.0.4), behind the
//! metrics token (`Authorization: Bearer <metrics token>`; without a
//! configured token the endpoint is off and answers 404). Counters count
//! since this process started; gauges are read when scraped: runs running
//! and queued here, and each active schedule's lateness from the store.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use dragnet_engine::run::{RunObserver, RunRecord, StepRecord};
use dragnet_engine::schedule::CronTrigger;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// Upper bounds of the step duration buckets, in seconds.
const BUCKETS: [f64; 10] = [0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0];

/// A histogram of step durations.
#[derive(Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// What the server has counted.
#[derive(Default)]
pub struct Metrics {
    /// Finished runs by (workflow, status).
    runs: Mutex<BTreeMap<(String, String), u64>>,
    /// Finished steps' durations by step kind.
    steps: Mutex<BTreeMap<String, Histogram>>,
    walk_requests: AtomicU64,
    walk_items: AtomicU64,
    walks_partial: AtomicU64,
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
}

impl Metrics {
    fn finished_step(&self, step: &StepRecord) {
        let secs = step.duration_ms as f64 / 1000.0;
        {
            let mut steps = self.steps.lock().unwrap_or_else(|p| p.into_inner());
            let h = steps.entry(step.kind.as_str().to_string()).or_default();
            for (i, bound) in BUCKETS.iter().enumerate() {
                if secs <= *bound {
                    h.counts[i] += 1;
                }
            }
            h.count += 1;
            h.sum += secs;
        }
        if let Some(v) = &step.verdict {
            self.walk_requests
                .fetch_add(u64::from(v.requests), Ordering::Relaxed);
            self.walk_items
                .fetch_add(v.item_count as u64, Ordering::Relaxed);
            if !v.complete {
                self.walks_partial.fetch_add(1, Ordering::Relaxed);
            }
            match v.cache_hit {
                Some(true) => self.cache_hits.fetch_add(1, Ordering::Relaxed),
                Some(false) => self.cache_misses.fetch_add(1, Ordering::Relaxed),
                None => 0,
            };
        }
    }

    fn finished_run(&self, run: &RunRecord) {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        *runs
            .entry((run.workflow.clone(), run.status.as_str().to_string()))
            .or_default() += 1;
    }
}

/// Counts a run as it goes.
pub struct MetricsObserver(pub Arc<Metrics>);

impl RunObserver for MetricsObserver {
    fn run_finished(&self, record: &RunRecord) {
        self.0.finished_run(record);
    }
    fn step_finished(&self, record: &StepRecord) {
        self.0.finished_step(record);
    }
}

/// A label value escaped as the text format asks.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    let Some(token) = state.config().metrics_token.as_ref() else {
        return Err(ApiError::NoRoute {
            method: "GET".into(),
            path: "/metrics".into(),
        });
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        None => return Err(ApiError::MissingToken),
        Some(g) if crate::auth::token_hash(g) != crate::auth::token_hash(token.expose()) => {
            return Err(ApiError::BadToken)
        }
        Some(_) => {}
    }
    let text = render(&state).await?;
    Ok((
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

async fn render(state: &AppState) -> ApiResult<String> {
    let m = state.metrics();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP dragnet_runs_total Runs that ended, by workflow and status."
    );
    let _ = writeln!(out, "# TYPE dragnet_runs_total counter");
    for ((workflow, status), n) in m.runs.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        let _ = writeln!(
            out,
            "dragnet_runs_total{{workflow=\"{}\",status=\"{}\"}} {n}",
            label(workflow),
            label(status)
        );
    }
    let _ = writeln!(
        out,
        "# HELP dragnet_step_duration_seconds Durations of finished steps."
    );
    let _ = writeln!(out, "# TYPE dragnet_step_duration_seconds histogram");
    for (kind, h) in m.steps.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        for (i, bound) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "dragnet_step_duration_seconds_bucket{{kind=\"{kind}\",le=\"{bound}\"}} {}",
                h.counts[i]
            );
        }
        let _ = writeln!(
            out,
            "dragnet_step_duration_seconds_bucket{{kind=\"{kind}\",le=\"+Inf\"}} {}",
            h.count
        );
        let _ = writeln!(
            out,
            "dragnet_step_duration_seconds_sum{{kind=\"{kind}\"}} {}",
            h.sum
        );
        let _ = writeln!(
            out,
            "dragnet_step_duration_seconds_count{{kind=\"{kind}\"}} {}",
            h.count
        );
    }
    for (name, help, value) in [
        (
            "dragnet_walk_requests_total",
            "Upstream requests made by tool steps, retries included.",
            m.walk_requests.load(Ordering::Relaxed),
        ),
        (
            "dragnet_walk_items_total",
            "Items tool steps returned.",
            m.walk_items.load(Ordering::Relaxed),
        ),
        (
            "dragnet_walks_partial_total",
            "Tool steps whose walk was not complete.",
            m.walks_partial.load(Ordering::Relaxed),
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP dragnet_cache_lookups_total Tool steps that looked in the cache, by result.\n\
         # TYPE dragnet_cache_lookups_total counter\n\
         dragnet_cache_lookups_total{{result=\"hit\"}} {}\n\
         dragnet_cache_lookups_total{{result=\"miss\"}} {}",
        m.cache_hits.load(Ordering::Relaxed),
        m.cache_misses.load(Ordering::Relaxed)
    );
    let (running, queued) = state.live().counts();
    let _ = writeln!(
        out,
        "# HELP dragnet_runs_running Runs running in this process."
    );
    let _ = writeln!(
        out,
        "# TYPE dragnet_runs_running gauge\ndragnet_runs_running {running}"
    );
    let _ = writeln!(
        out,
        "# HELP dragnet_runs_queued Runs waiting for a slot in this process."
    );
    let _ = writeln!(
        out,
        "# TYPE dragnet_runs_queued gauge\ndragnet_runs_queued {queued}"
    );
    let now = crate::scheduler::now(state, &state.tick_clock()).await?;
    let _ = writeln!(
        out,
        "# HELP dragnet_schedule_lateness_seconds How long each active schedule's oldest due tick has waited."
    );
    let _ = writeln!(out, "# TYPE dragnet_schedule_lateness_seconds gauge");
    for s in state.db().active_schedules().await? {
        let Ok(t) = CronTrigger::from_parts(&s.cron, &s.timezone, &s.catch_up, &s.overlap) else {
            continue;
        };
        let late = t
            .ticks_between(s.last_tick_at, now)
            .first()
            .map_or(0.0, |d| {
                (now - *d).num_milliseconds().max(0) as f64 / 1000.0
            });
        let _ = writeln!(
            out,
            "dragnet_schedule_lateness_seconds{{schedule_id=\"{}\",workflow=\"{}\"}} {late}",
            label(&s.schedule_id),
            label(&s.workflow)
        );
    }
    Ok(out)
}
