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
    /// By upstream host: pages, failed attempts, 429s.
    hosts: Mutex<BTreeMap<String, [u64; 3]>>,
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
}

impl Metrics {
    fn finished_step(&self, step: &StepRecord, host: Option<&str>) {
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
            if let Some(host) = host {
                let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
                let counts = hosts.entry(host.to_string()).or_default();
                counts[0] += u64::from(v.pages);
                counts[1] += u64::from(v.upstream_errors);
                counts[2] += u64::from(v.throttled);
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

/// Counts a run as it goes; `hosts` names each tool step's upstream host.
pub struct MetricsObserver {
    pub metrics: Arc<Metrics>,
    pub hosts: std::collections::HashMap<String, String>,
}

impl MetricsObserver {
    /// For a run of `wf`: each tool step's host from its provider's base URL.
    pub fn new(metrics: Arc<Metrics>, wf: &dragnet_engine::workflow::model::Workflow) -> Self {
        use dragnet_engine::workflow::model::StepKind;
        let hosts = wf
            .steps
            .iter()
            .filter_map(|s| match &s.kind {
                StepKind::Tool(t) => {
                    let provider = wf.providers.get(&t.provider)?;
                    Some((s.id.as_str().to_string(), host_of(&provider.base_url)))
                }
                StepKind::Branch(_) => None,
            })
            .collect();
        MetricsObserver { metrics, hosts }
    }
}

/// `host[:port]` of a base URL.
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority
        .rsplit('@')
        .next()
        .unwrap_or(authority)
        .to_string()
}

impl RunObserver for MetricsObserver {
    fn run_finished(&self, record: &RunRecord) {
        self.metrics.finished_run(record);
    }
    fn step_finished(&self, record: &StepRecord) {
        let host = self.hosts.get(&record.id).map(String::as_str);
        self.metrics.finished_step(record, host);
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
    for (i, (name, help)) in [
        (
            "dragnet_upstream_pages_total",
            "Successful upstream answers (pages), by host.",
        ),
        (
            "dragnet_upstream_errors_total",
            "Upstream attempts that failed (a non-2xx status or no answer), by host.",
        ),
        (
            "dragnet_upstream_throttled_total",
            "Upstream 429 answers, by host.",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for (host, counts) in m.hosts.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let _ = writeln!(out, "{name}{{host=\"{}\"}} {}", label(host), counts[i]);
        }
    }
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
