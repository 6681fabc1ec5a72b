//! The fan-out of `_for_each` (SPEC §3.6): one walk per value under the
//! call's one budget. With concurrency 1 the values are walked one after
//! another by the call's own walker, exactly as a plain call walks. With N,
//! N values are walked at a time, each by a sibling walker gathering on its
//! own (its pages still one after another); the results are merged in value
//! order, so rows and verdict are those of the sequential walk when nothing
//! fails or runs out.

use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};

use crate::for_each::ForEach;
use crate::result::ForEachError;
use crate::verdict_note::Tally;
use crate::walk::{Gathered, Outcome, Walker};
use dragnet_core::verdict::StopReason;
use dragnet_core::UpstreamError;
use dragnet_http::Upstream;

/// What the fan-out added up.
#[derive(Debug, Default)]
pub struct Fanned {
    pub tally: Tally,
    pub errors: Vec<ForEachError>,
}

/// Walks every value of `fe` (up to the values bound), into `walker.gathered`.
pub async fn fan_out<U: Upstream>(
    walker: &mut Walker<'_, U>,
    fe: &ForEach,
    arguments: &Map<String, Value>,
    concurrency: usize,
) -> Fanned {
    let mut out = Fanned::default();
    out.tally.values = fe.values.len();
    if concurrency <= 1 {
        sequential(walker, fe, arguments, &mut out).await;
    } else {
        concurrent(walker, fe, arguments, concurrency, &mut out).await;
    }
    out
}

async fn sequential<U: Upstream>(
    walker: &mut Walker<'_, U>,
    fe: &ForEach,
    arguments: &Map<String, Value>,
    out: &mut Fanned,
) {
    let cap = walker.budget.limits.max_for_each_values;
    for (index, value) in fe.values.iter().enumerate() {
        if index >= cap {
            out.tally
                .stop(StopReason::ForEachValues, fe.values.len() - cap);
            break;
        }
        if let Some(reason) = walker.budget.exhausted() {
            out.tally.stop(reason, fe.values.len() - index);
            break;
        }
        let value = match value {
            Ok(v) => v,
            Err((raw, message)) => {
                out.errors.push(ForEachError {
                    value: raw.clone(),
                    error: message.clone(),
                });
                continue;
            }
        };
        let result = walker
            .collect(with_value(arguments, fe, value), Some(value))
            .await;
        if record(out, value, result) {
            break;
        }
    }
}

/// One value's turn in a concurrent fan-out.
enum Turn {
    /// A call-wide bound was reached before this value started.
    Exhausted(StopReason),
    /// The value could not be coerced.
    Uncoercible(ForEachError),
    Walked(Result<Outcome, UpstreamError>, Box<Gathered>),
}

async fn concurrent<U: Upstream>(
    walker: &mut Walker<'_, U>,
    fe: &ForEach,
    arguments: &Map<String, Value>,
    concurrency: usize,
    out: &mut Fanned,
) {
    let cap = walker.budget.limits.max_for_each_values;
    let considered = fe.values.len().min(cap);
    let shared = &*walker;
    // At most `concurrency` walks at a time, started in value order; a
    // slot frees as soon as any walk ends (no waiting on a slower earlier
    // value). The turns are put back in value order before the merge.
    let mut turns: Vec<(usize, Turn)> = stream::iter(0..considered)
        .map(|index| async move { (index, turn(shared, fe, arguments, index).await) })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    turns.sort_unstable_by_key(|(index, _)| *index);
    let turns = turns.into_iter().map(|(_, turn)| turn);

    let mut stopped = false;
    for (index, (turn, value)) in turns.zip(&fe.values).enumerate() {
        match turn {
            Turn::Exhausted(reason) => {
                out.tally.stop(reason, fe.values.len() - index);
                stopped = true;
                break;
            }
            Turn::Uncoercible(error) => out.errors.push(error),
            Turn::Walked(result, gathered) => {
                merge(&mut walker.gathered, *gathered);
                let value = value.as_ref().unwrap_or(&Value::Null);
                if record(out, value, result) {
                    stopped = true;
                    break;
                }
            }
        }
    }
    if !stopped && considered < fe.values.len() {
        out.tally
            .stop(StopReason::ForEachValues, fe.values.len() - considered);
    }
}

/// Walks value `index` with a sibling walker.
async fn turn<U: Upstream>(
    shared: &Walker<'_, U>,
    fe: &ForEach,
    arguments: &Map<String, Value>,
    index: usize,
) -> Turn {
    // Values start in order and bounds only grow, so once a value sees one
    // reached, every later value does too: the merge stops at the first.
    if let Some(reason) = shared.budget.exhausted() {
        return Turn::Exhausted(reason);
    }
    let value = match &fe.values[index] {
        Ok(v) => v,
        Err((raw, message)) => {
            return Turn::Uncoercible(ForEachError {
                value: raw.clone(),
                error: message.clone(),
            })
        }
    };
    let mut own = shared.sibling();
    let result = own
        .collect(with_value(arguments, fe, value), Some(value))
        .await;
    Turn::Walked(result, Box::new(own.gathered))
}

/// Adds one value's walk to the tally; true when the fan-out must stop
/// (the walk was cancelled).
fn record(out: &mut Fanned, value: &Value, result: Result<Outcome, UpstreamError>) -> bool {
    match result {
        Ok(outcome) => {
            out.tally.add(&outcome);
            outcome.stopped_by == Some(StopReason::Cancelled)
        }
        Err(e) => {
            out.errors.push(ForEachError {
                value: value.clone(),
                error: e.to_string(),
            });
            false
        }
    }
}

/// Appends one value's items; the first value (in order) that found the
/// collection gives the envelope, as it does in a sequential walk.
fn merge(into: &mut Gathered, from: Gathered) {
    if from.located && !into.located {
        into.located = true;
        into.path = from.path;
        into.envelope = from.envelope;
    } else if into.envelope.is_none() && from.envelope.is_some() {
        into.path = from.path;
        into.envelope = from.envelope;
    }
    into.items.append(from.items);
}

fn with_value(arguments: &Map<String, Value>, fe: &ForEach, value: &Value) -> Map<String, Value> {
    let mut args = arguments.clone();
    args.insert(fe.key.clone(), value.clone());
    args
}
