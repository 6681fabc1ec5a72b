//! A step's `loop.incremental` compiled into an [`IncrementalSpec`]: the
//! field and key as dot-paths, `param` an argument of the tool, the scale
//! decided by `initial` and `lag` checked on it, and the loop settings it
//! cannot go with refused (a fan-out, the cache, a walk of one page).

use dragnet_core::Tool;
use serde_json::Value;

use super::context::Ctx;
use super::cursor::Cursor;
use super::file::{IncrementalFile, LoopFile};
use super::model::IncrementalSpec;
use super::values::{dot_path, parse_duration_upto};
use crate::watermark::{Lag, Scale};

/// The longest `lag` on the time scale: thirty days.
pub const MAX_LAG: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Compiles `incremental` of the loop under `lc`; `tool` is the step's
/// when it resolved to an OpenAPI operation (an MCP tool's arguments are
/// checked when it is called). `None` when something was reported.
pub fn compile(
    cx: &mut Ctx,
    lc: &Cursor<'_>,
    looping: &LoopFile,
    file: &IncrementalFile,
    tool: Option<&Tool>,
) -> Option<IncrementalSpec> {
    let ic = lc.key("incremental")?;
    let before = cx.count();
    let field = path(cx, &ic, "field", &file.field);
    let dedupe_by = file
        .dedupe_by
        .as_ref()
        .map(|key| path(cx, &ic, "dedupe_by", key));
    let param = file.param.trim().to_string();
    if let Some(tool) = tool {
        let arguments = tool.argument_names();
        if !arguments.iter().any(|a| a == &param) {
            cx.value_error(
                &ic,
                "param",
                format!(
                    "`{param}` is not an argument of `{}`; its arguments are: {}",
                    tool.name,
                    arguments.join(", ")
                ),
            );
        }
        if tool.can_walk() && !looping.all_pages {
            cx.key_error(
                lc,
                "incremental",
                "an incremental step moves its watermark only on a walk of every page; \
                 add `all_pages: true`",
            );
        }
    }
    for (key, present, why) in [
        (
            "for_each",
            looping.for_each.is_some(),
            "each value would need a watermark of its own",
        ),
        (
            "cache",
            looping.cache.is_some(),
            "a cached walk would move the watermark past rows changed since it was stored",
        ),
    ] {
        if present {
            cx.key_error(
                lc,
                key,
                format!("an incremental step cannot also set `{key}`: {why}; remove one"),
            );
        }
    }
    let scale = match Scale::of_initial(&file.initial) {
        Ok(scale) => Some(scale),
        Err(e) => {
            cx.value_error(
                &ic,
                "initial",
                format!(
                    "`initial` is {}: give a time (\"2026-01-01T00:00:00Z\", a date) or a number",
                    e.value
                ),
            );
            None
        }
    };
    let lag = match (scale, &file.lag) {
        (Some(scale), Some(lag)) => match lag_of(scale, lag) {
            Ok(lag) => Some(lag),
            Err(message) => {
                cx.value_error(&ic, "lag", message);
                None
            }
        },
        _ => None,
    };
    if cx.count() != before {
        return None;
    }
    Some(IncrementalSpec {
        field: field?,
        param,
        scale: scale?,
        initial: file.initial.clone(),
        lag,
        dedupe_by: dedupe_by.flatten(),
    })
}

fn path(cx: &mut Ctx, ic: &Cursor<'_>, key: &str, text: &str) -> Option<Vec<String>> {
    match dot_path(text) {
        Ok(segments) => Some(segments),
        Err(message) => {
            cx.value_error(ic, key, message);
            None
        }
    }
}

/// `lag` on `scale`: a duration on the time scale, a number on the other.
fn lag_of(scale: Scale, lag: &Value) -> Result<Lag, String> {
    match (scale, lag) {
        (Scale::Time, Value::String(text)) => {
            let d = parse_duration_upto(text, "lag", MAX_LAG)?;
            chrono::Duration::from_std(d)
                .map(Lag::Time)
                .map_err(|_| format!("`{text}` is too long a lag"))
        }
        (Scale::Number, Value::Number(n)) => match n.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Lag::Number(x)),
            _ => Err(format!("`lag` is {n}; it must be a number of at least 0")),
        },
        (Scale::Time, other) => Err(format!(
            "`lag` is {other}; on a time watermark it is a duration such as \"5m\""
        )),
        (Scale::Number, other) => Err(format!(
            "`lag` is {other}; on a numeric watermark (a number `initial`) it is a number"
        )),
    }
}
