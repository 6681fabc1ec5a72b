//! `GET /metrics` in the Prometheus text format (0.0.4), behind the
//! metrics token (`Authorization: Bearer <metrics token>`; without a
//! configured token the endpoint is off and answers 404). Counters count
//! since this process started; gauges are read when scraped: runs running
//! and queued here, and each active schedule's lateness from the store.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use dragnet_engine::schedule::CronTrigger;
use dragnet_runner::metrics::BUCKETS;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

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
    let m = state.metrics().snapshot();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP dragnet_runs_total Runs that ended, by workflow and status."
    );
    let _ = writeln!(out, "# TYPE dragnet_runs_total counter");
    for ((workflow, status), n) in m.runs.iter() {
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
    for (kind, h) in m.steps.iter() {
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
            m.walk_requests,
        ),
        (
            "dragnet_walk_items_total",
            "Items tool steps returned.",
            m.walk_items,
        ),
        (
            "dragnet_walks_partial_total",
            "Tool steps whose walk was not complete.",
            m.walks_partial,
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
        m.cache_hits, m.cache_misses
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
        for (host, counts) in m.hosts.iter() {
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
    let paused = state.db().schedules().paused_count().await?;
    let _ = writeln!(
        out,
        "# HELP dragnet_schedules_paused Active schedules that are paused."
    );
    let _ = writeln!(
        out,
        "# TYPE dragnet_schedules_paused gauge\ndragnet_schedules_paused {paused}"
    );
    let now = state.tick_clock().now(&state.db().schedules()).await?;
    let _ = writeln!(
        out,
        "# HELP dragnet_schedule_lateness_seconds How long each active schedule's oldest due tick has waited."
    );
    let _ = writeln!(out, "# TYPE dragnet_schedule_lateness_seconds gauge");
    for s in state.db().schedules().active_schedules().await? {
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
