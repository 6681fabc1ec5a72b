//! The engine alone, for the engine suite: a `ToolRunner` that answers each
//! `shop.getOrder` call at once with the result the shop gave for that order
//! (recorded once through `dragnet_walk::execute` before measuring). A run
//! through it does everything a real run does — plan, scheduling, refs,
//! records, rendering each output with its `_loop` — except HTTP and the
//! loop layer, so its time divided by the steps is the engine's own cost
//! per step without the noise of a round trip.
//!
//! `profile` is the same run alone on a current-thread runtime, repeated,
//! for `valgrind --tool=callgrind` (target `engine_alone`): instruction
//! counts, unlike times, stay stable on a shared machine.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context, Result};
use dragnet_core::json::RawItem;
use dragnet_core::{Payload, Verdict};
use dragnet_engine::run::{
    self, CallFuture, CallTarget, Quiet, RunOptions, StepStatus, ToolRunner,
};
use dragnet_engine::workflow;
use dragnet_http::{Credentials, HttpUpstream};
use dragnet_walk::{execute, LoopResult, Runtime, ToolCall};
use serde_json::{json, Map, Value};

/// Recorded answers by order id.
pub struct Canned {
    answers: HashMap<u64, (RawItem, Verdict)>,
}

impl Canned {
    /// Records `results[i]` as the answer for `order_ids[i]`.
    pub fn record(order_ids: &[u64], results: &[LoopResult]) -> Result<Canned> {
        ensure!(order_ids.len() == results.len(), "one result per order");
        let mut answers = HashMap::new();
        for (id, r) in order_ids.iter().zip(results) {
            let Payload::Single(raw) = &r.payload else {
                anyhow::bail!("getOrder answered a collection");
            };
            answers.insert(*id, (raw.clone(), r.verdict.clone()));
        }
        Ok(Canned { answers })
    }
}

impl ToolRunner for Canned {
    fn call<'a>(
        &'a self,
        call: ToolCall<'a>,
        _upstream: CallTarget<'a>,
        _runtime: &'a Runtime<'a>,
    ) -> CallFuture<'a> {
        let answer = call
            .arguments
            .get("order_id")
            .and_then(Value::as_u64)
            .and_then(|id| self.answers.get(&id));
        Box::pin(async move {
            let (raw, verdict) = answer.ok_or_else(|| dragnet_core::Error::UnknownTool {
                name: "getOrder with an order id that was not recorded".into(),
                suggestions: Vec::new(),
            })?;
            Ok(LoopResult {
                payload: Payload::Single(raw.clone()),
                shaped: None,
                verdict: verdict.clone(),
                unmatched_fields: None,
                for_each_errors: Vec::new(),
                cache: None,
                stats: Default::default(),
            })
        })
    }
}

/// Runs the `n`-step engine workflow `runs` times with canned answers on a
/// current-thread runtime (the answers are recorded first from the demo
/// shop, once); returns the time of each run.
pub fn profile(n: usize, runs: usize) -> Result<Vec<Duration>> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(profile_runs(n, runs))
}

async fn profile_runs(n: usize, runs: usize) -> Result<Vec<Duration>> {
    let shop = dragnet_shop::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let base = shop.base_url().to_string();
    let generated = crate::engine::generate(n)?;
    let source = dragnet_shop::openapi_path()
        .parent()
        .context("the shop's folder")?
        .join("engine-overhead.workflow.yaml");
    let workflow = Arc::new(
        workflow::load_str(&source, &generated.text)
            .map_err(|d| anyhow!("the workflow does not load:\n{d}"))?,
    );
    let toolkit = dragnet_openapi::import_file(&dragnet_shop::openapi_path())?;
    let tool = toolkit.tool("getOrder").context("no getOrder")?;
    let upstream = HttpUpstream::new(&base, Credentials::None)?;
    let runtime = Runtime::quiet();
    let mut results = Vec::with_capacity(n);
    let order_ids: Vec<u64> = generated.steps.iter().map(|s| s.order_id).collect();
    for id in &order_ids {
        let Value::Object(arguments) = json!({ "order_id": id }) else {
            return Err(anyhow!("arguments must be an object"));
        };
        let arguments: Map<String, Value> = arguments;
        let call = ToolCall {
            tool,
            arguments,
            options: Default::default(),
            limits: Default::default(),
            cache: None,
        };
        results.push(execute(call, &upstream, &runtime).await?);
    }
    shop.shutdown().await;
    let canned = Arc::new(Canned::record(&order_ids, &results)?);
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let options = RunOptions {
            base_urls: HashMap::from([("shop".to_string(), base.clone())]),
            concurrency: 1,
            tools: canned.clone(),
            ..RunOptions::default()
        };
        let started = Instant::now();
        let record = run::run(workflow.clone(), options, Arc::new(Quiet)).await?;
        times.push(started.elapsed());
        ensure!(
            record
                .steps
                .iter()
                .all(|s| s.status == StepStatus::Succeeded && s.output.is_some()),
            "a canned run did not answer every step"
        );
    }
    Ok(times)
}
