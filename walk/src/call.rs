//! One tool call end to end: `ToolCall` → `LoopResult`. Validates the
//! arguments, walks (or fetches once), fans out under one shared budget,
//! filters, projects and states the verdict. Workflows and the gateway both
//! come through here.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::cache::key::KeyMaterial;
use crate::cache::{around, cache_key, CachePolicy};
use crate::fan_out::{fan_out, Fanned};
use crate::for_each::ForEach;
use crate::journal::Journal;
use crate::options::LoopOptions;
use crate::result::LoopResult;
use crate::shape::shape;
use crate::verdict_note::{compose, Counts, Tally};
use crate::walk::streamed::Early;
use crate::walk::{Gathered, Walker};
use dragnet_core::args;
use dragnet_core::budget::{Budget, Limits};
use dragnet_core::clock::{Clock, SystemClock};
use dragnet_core::json_rows::Rows;
use dragnet_core::payload::Payload;
use dragnet_core::progress::{NoProgress, ProgressSink, Throttled};
use dragnet_core::{Error, Tool};
use dragnet_http::{Pacing, Upstream};

/// One call: a tool, its plain arguments, the loop options, the bounds and
/// (optionally) how it uses the cache.
#[derive(Debug, Clone)]
pub struct ToolCall<'a> {
    pub tool: &'a Tool,
    /// Arguments without reserved ones.
    pub arguments: Map<String, Value>,
    pub options: LoopOptions,
    pub limits: Limits,
    pub cache: Option<CachePolicy>,
}

/// Where progress goes, what time it is, how to stop, where fetched
/// pages are kept for a later attempt (none: nothing is kept), and
/// whether the caller reads the items as fetched.
pub struct Runtime<'a> {
    pub progress: &'a dyn ProgressSink,
    pub clock: Arc<dyn Clock>,
    pub cancel: CancellationToken,
    pub journal: Option<Journal<'a>>,
    pub unshaped: Unshaped,
}

/// Whether a caller reads the items as fetched, or only the rows shaped
/// from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unshaped {
    /// The result keeps every item fetched ([`LoopResult::payload`]): it is
    /// stored, cached, or shaped again later.
    #[default]
    Kept,
    /// The caller reads only [`LoopResult::shaped`]. A call with `_fields`
    /// or `_filter` that neither caches, keeps a journal nor fans out then
    /// shapes each page as it is kept, splitting a page while it arrives
    /// when the collection's path is known beforehand, and keeps no item:
    /// its payload's collection is empty. A large page is never held
    /// whole. `dragnet call` asks for this.
    Dropped,
}

impl Runtime<'static> {
    /// No progress, tokio's clock, never cancelled.
    pub fn quiet() -> Self {
        Runtime {
            progress: &NoProgress,
            clock: Arc::new(SystemClock),
            cancel: CancellationToken::new(),
            journal: None,
            unshaped: Unshaped::Kept,
        }
    }
}

/// Whether a call with `options` walks: the only calls the cache serves
/// and records.
pub fn walks(options: &LoopOptions) -> bool {
    options.all_pages || options.for_each.is_some()
}

/// Runs one call.
pub async fn execute<U: Upstream>(
    call: ToolCall<'_>,
    upstream: &U,
    runtime: &Runtime<'_>,
) -> Result<LoopResult, Error> {
    let ToolCall {
        tool,
        arguments,
        options,
        limits,
        cache,
    } = call;
    limits.validate().map_err(|e| Error::InvalidReserved {
        argument: "limits".into(),
        message: e.to_string(),
    })?;
    if options.all_pages && !tool.can_walk() {
        return Err(Error::NotWalkable {
            tool: tool.name.clone(),
            reason: tool.walkability.reason(),
        });
    }
    let for_each = options
        .for_each
        .as_ref()
        .map(|spec| ForEach::new(tool, &spec.key, &spec.values))
        .transpose()?;
    let mut supplied: Vec<&str> = Vec::new();
    if let Some(fe) = &for_each {
        supplied.push(fe.key.as_str());
    }
    args::validate(tool, &arguments, &supplied)?;

    // The cache holds complete walks (SPEC §5): a call that walked
    // (`_all_pages` or `_for_each`) is looked up and recorded; a plain call
    // always goes upstream, whatever policy it came with.
    let cache = cache.filter(|_| walks(&options));
    let key = cache.as_ref().map(|c| {
        let values = for_each
            .as_ref()
            .map(|f| (f.key.as_str(), f.sorted_values()));
        cache_key(KeyMaterial {
            tool_id: &c.tool_id,
            upstream: &upstream.identity(),
            tool,
            arguments: &arguments,
            all_pages: options.all_pages,
            items_path: options.items_path.as_deref(),
            for_each: values.as_ref().map(|(k, v)| (*k, v.as_slice())),
        })
    });
    if let (Some(policy), Some(key)) = (&cache, &key) {
        if let Some((payload, entry)) = around::lookup(policy, key, &options).await {
            return Ok(around::hit(payload, &entry, &options, policy.mode));
        }
    }

    let budget = Budget::new(limits, runtime.clock.clone());
    // Pacing per host: the upstream's own when it keeps one (shared by every
    // call through it), else this call's.
    let own_pacing = Pacing::default();
    let pacing = upstream.pacing().unwrap_or(&own_pacing);
    let progress = Mutex::new(Throttled::new(runtime.progress, runtime.clock.clone()));
    let shaping = !options.filter.is_empty() || options.fields.is_some();
    let early =
        (runtime.unshaped == Unshaped::Dropped && shaping && cache.is_none() && for_each.is_none())
            .then_some(Early {
                filter: &options.filter,
                fields: options.fields.as_ref(),
            });
    let mut walker = Walker {
        upstream,
        tool,
        all_pages: options.all_pages,
        explicit_path: options.items_path.as_deref(),
        tag_key: for_each.as_ref().map(|f| f.key.as_str()),
        budget: &budget,
        pacing,
        gathered: Gathered::default(),
        progress: &progress,
        cancel: runtime.cancel.clone(),
        journal: runtime.journal,
        early,
    };

    let Fanned { tally, errors } = match (&for_each, &options.for_each) {
        (Some(fe), Some(spec)) => {
            let fanned = fan_out(&mut walker, fe, &arguments, spec.concurrency.get()).await;
            let Fanned { tally, errors } = &fanned;
            if tally.succeeded == 0 && !errors.is_empty() && tally.stopped_by.is_none() {
                return Err(Error::AllValuesFailed {
                    first: format!("{}: {}", errors[0].value, errors[0].error),
                });
            }
            fanned
        }
        _ => {
            let outcome = walker.collect(arguments, None).await?;
            let mut tally = Tally::default();
            tally.add(&outcome);
            Fanned {
                tally,
                errors: Vec::new(),
            }
        }
    };

    let requests = budget.requests();
    let shaped_early = walker.shapes_early();
    let gathered = walker.gathered;
    let early_rows = gathered.early;
    let payload = match (gathered.path, gathered.envelope, gathered.single) {
        (Some(_), Some(envelope), _) => Payload::Collection {
            envelope,
            items: gathered.items,
        },
        (_, _, Some(single)) if for_each.is_none() => Payload::Single(single),
        _ => Payload::Items(gathered.items),
    };

    let (shaped, unmatched_fields, items) = match &payload {
        // Shaped page by page; the payload kept no items.
        Payload::Collection { .. } if shaped_early => {
            let count = early_rows.count;
            let (rows, unmatched) = early_rows.into_shaped(options.fields.as_ref());
            (Some(rows), unmatched, count)
        }
        _ => {
            let (shaped, unmatched) =
                shape(payload.items(), &options.filter, options.fields.as_ref());
            (shaped, unmatched, payload.items().len())
        }
    };
    let visible = shaped.as_ref().map(Rows::len);
    let counts = Counts {
        requests,
        items,
        visible,
        single: matches!(payload, Payload::Single(_)),
    };
    let mut verdict = compose(&tally, &errors, counts, &options);
    let replayed = budget.replayed();
    if replayed > 0 {
        verdict.note.push_str(&format!(
            " Resumed: {} read back from an earlier attempt, not fetched again (counted in the requests).",
            crate::verdict_note::plural(replayed as usize, "page")
        ));
    }
    let mut result = LoopResult {
        payload,
        shaped,
        verdict,
        unmatched_fields,
        for_each_errors: errors,
        cache: None,
        stats: budget.stats(),
    };
    if let (Some(policy), Some(key)) = (&cache, key) {
        result.cache = around::record(policy, key, &result).await;
    }
    Ok(result)
}
