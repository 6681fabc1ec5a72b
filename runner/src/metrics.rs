//! What this process's runs are counted by for `GET /metrics`: finished
//! runs by workflow and status, step durations by kind, walks' requests,
//! items and partial ends, upstream pages, errors and 429s by host, and
//! cache lookups. Counters count since the process started; the API reads
//! them with [`Metrics::snapshot`] when scraped.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dragnet_engine::run::{RunObserver, RunRecord, StepRecord};

/// Upper bounds of the step duration buckets, in seconds.
pub const BUCKETS: [f64; 10] = [0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0];

/// A histogram of step durations: per bucket of [`BUCKETS`], the steps
/// that took at most its bound.
#[derive(Default, Clone, Debug)]
pub struct Histogram {
    pub counts: [u64; BUCKETS.len()],
    pub count: u64,
    pub sum: f64,
}

/// The counters as read at one moment.
#[derive(Default, Clone, Debug)]
pub struct Snapshot {
    /// Finished runs by (workflow, status).
    pub runs: BTreeMap<(String, String), u64>,
    /// Finished steps' durations by step kind.
    pub steps: BTreeMap<String, Histogram>,
    pub walk_requests: u64,
    pub walk_items: u64,
    pub walks_partial: u64,
    /// By upstream host: pages, failed attempts, 429s.
    pub hosts: BTreeMap<String, [u64; 3]>,
    pub cache_hits: u64,
    pub cache_misses: u64,
}

/// What this process's runs have counted.
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
    /// Every counter as it is now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            runs: self.runs.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            steps: self.steps.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            walk_requests: self.walk_requests.load(Ordering::Relaxed),
            walk_items: self.walk_items.load(Ordering::Relaxed),
            walks_partial: self.walks_partial.load(Ordering::Relaxed),
            hosts: self.hosts.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            cache_misses: self.cache_misses.load(Ordering::Relaxed),
        }
    }

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
    /// For a run of `wf`: each tool step's host, from its provider's base
    /// URL or MCP server (`mcp:<name>` for a child process).
    pub fn new(metrics: Arc<Metrics>, wf: &dragnet_engine::workflow::model::Workflow) -> Self {
        use dragnet_engine::workflow::model::{McpServer, McpSource, ProviderKind, StepKind};
        let hosts = wf
            .steps
            .iter()
            .filter_map(|s| match &s.kind {
                StepKind::Tool(t) => {
                    let provider = wf.providers.get(&t.provider)?;
                    let host = match &provider.kind {
                        ProviderKind::OpenApi(p) => host_of(&p.base_url),
                        ProviderKind::Mcp(McpSource::Own(McpServer::Url { url, .. })) => {
                            host_of(url)
                        }
                        ProviderKind::Mcp(McpSource::Own(McpServer::Command { .. })) => {
                            format!("mcp:{}", provider.name)
                        }
                        ProviderKind::Mcp(McpSource::Declared(name)) => format!("mcp:{name}"),
                    };
                    Some((s.id.as_str().to_string(), host))
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
