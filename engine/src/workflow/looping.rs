//! A tool step's `loop:` block compiled into a `LoopSpec`: `all_pages`
//! only on walkable tools, `fields` as projections, `for_each.key` a real
//! parameter (`invalid_for_each_key` otherwise), filter operators and their
//! literal operands, `items_path` as a dot-path. Also the operand check
//! shared with branch conditions.

use dragnet_core::{Error as StepsError, Tool};
use dragnet_walk::fields::Projection;
use dragnet_walk::filter::Op;
use dragnet_walk::options::Concurrency;
use serde_json::Value;

use super::context::Ctx;
use super::cursor::Cursor;
use super::file::LoopFile;
use super::model::{FilterClause, ForEachSpec, LoopSpec, StepCache, Template};
use super::template::{literal, RefCheck};
use super::values::{dot_path, MAX_TTL_MINUTES};

/// The tool a loop runs over, when it resolved.
pub struct LoopTool<'a> {
    pub qualified: &'a str,
    pub tool: &'a Tool,
}

/// Compiles `loop:`; `lc` is the `loop` value. `None` when something was
/// reported.
pub fn compile<'a>(
    cx: &mut Ctx,
    lc: &Cursor<'a>,
    file: &LoopFile,
    tool: Option<&LoopTool<'_>>,
    refs: &mut RefCheck<'a>,
) -> Option<LoopSpec> {
    let before = cx.count();
    if let (true, Some(t)) = (file.all_pages, tool) {
        if !t.tool.can_walk() {
            let e = StepsError::NotWalkable {
                tool: t.tool.name.clone(),
                reason: t.tool.walkability.reason(),
            };
            cx.value_error(lc, "all_pages", format!("{e}; remove `all_pages`"));
        }
    }
    let fields = file.fields.as_ref().and_then(|paths| {
        let fc = lc.key("fields");
        for (i, path) in paths.iter().enumerate() {
            if let Err(message) = Projection::new(std::slice::from_ref(path)) {
                let at = fc.as_ref().and_then(|f| f.items().nth(i));
                match at {
                    Some(at) => cx.error(&at, format!("bad field path: {message}")),
                    None => cx.value_error(lc, "fields", format!("bad field path: {message}")),
                }
            }
        }
        Projection::new(paths).ok()
    });
    let for_each = file.for_each.as_ref().and_then(|fe| {
        let fec = lc.key("for_each")?;
        if let Some(t) = tool {
            let parameters = t.tool.argument_names();
            if !parameters.iter().any(|p| p == &fe.key) {
                let e = StepsError::InvalidForEachKey {
                    key: fe.key.clone(),
                    tool: t.qualified.to_string(),
                    parameters,
                };
                cx.value_error(&fec, "key", e.to_string());
            }
        }
        let vc = fec.key("values")?;
        let values = refs.template(cx, &vc)?;
        if let Some(v) = literal(&values) {
            if !v.is_array() {
                cx.error(
                    &vc,
                    "for_each.values must be a list, or {ref: \"<JSONPath>\"} to one",
                );
            }
        }
        let concurrency = match fe.concurrency {
            None => Concurrency::ONE,
            Some(n) => Concurrency::new(n).unwrap_or_else(|e| {
                cx.value_error(&fec, "concurrency", format!("for_each.{e}"));
                Concurrency::ONE
            }),
        };
        Some(ForEachSpec {
            key: fe.key.clone(),
            values,
            concurrency,
        })
    });
    let mut filter = Vec::new();
    if let Some(list) = lc.key("filter") {
        for (clause, c) in file.filter.iter().zip(list.items()) {
            if let Some(f) = filter_clause(cx, &c, &clause.field, &clause.op, refs) {
                filter.push(f);
            }
        }
    }
    let items_path = file.items_path.as_ref().and_then(|p| match dot_path(p) {
        Ok(segments) => Some(segments),
        Err(message) => {
            cx.value_error(lc, "items_path", message);
            None
        }
    });
    let cache = file.cache.as_ref().and_then(|c| {
        if (1..=MAX_TTL_MINUTES).contains(&c.ttl_minutes) {
            Some(StepCache {
                ttl: std::time::Duration::from_secs(c.ttl_minutes * 60),
            })
        } else {
            if let Some(cc) = lc.key("cache") {
                let message = if c.ttl_minutes == 0 {
                    "`ttl_minutes` must be at least 1".to_string()
                } else {
                    format!(
                        "`ttl_minutes` is {}; it must be at most {MAX_TTL_MINUTES} (a year)",
                        c.ttl_minutes
                    )
                };
                cx.value_error(&cc, "ttl_minutes", message);
            }
            None
        }
    });
    // Only complete walks are cached (SPEC §5): a step that neither walks
    // every page nor fans out is never cached, so asking for it is a mistake.
    if file.cache.is_some() && !file.all_pages && file.for_each.is_none() {
        cx.value_error(
            lc,
            "cache",
            "only walks are cached: this step neither walks every page (`all_pages: true`) \
             nor fans out (`for_each`), so it always calls the API; remove `cache`"
                .to_string(),
        );
    }
    let incremental = file
        .incremental
        .as_ref()
        .and_then(|inc| super::incremental::compile(cx, lc, file, inc, tool.map(|t| t.tool)));
    (cx.count() == before).then(|| LoopSpec {
        all_pages: file.all_pages,
        fields,
        for_each,
        filter,
        items_path,
        cache,
        incremental,
    })
}

fn filter_clause<'a>(
    cx: &mut Ctx,
    c: &Cursor<'a>,
    field: &str,
    op: &str,
    refs: &mut RefCheck<'a>,
) -> Option<FilterClause> {
    let before = cx.count();
    if let Err(message) = dot_path(field) {
        cx.value_error(c, "field", message);
    }
    let op = operator(cx, c, op);
    let value = operand(cx, c, op, refs);
    match (op, value) {
        (Some(op), Some(value)) if cx.count() == before => Some(FilterClause {
            field: field.trim().to_string(),
            op,
            value,
        }),
        _ => None,
    }
}

/// Parses the `op` of the mapping under `c`; unknown operators are reported.
pub fn operator(cx: &mut Ctx, c: &Cursor<'_>, op: &str) -> Option<Op> {
    let parsed = Op::parse(op.trim());
    if parsed.is_none() {
        cx.value_error(
            c,
            "op",
            format!(
                "unknown operator `{op}`; use one of {}",
                Op::NAMES.join(", ")
            ),
        );
    }
    parsed
}

/// Compiles the `value` of the mapping under `c` (null when absent) and
/// checks a literal operand against `op`: `in` takes a list, `exists` a
/// boolean.
pub fn operand<'a>(
    cx: &mut Ctx,
    c: &Cursor<'a>,
    op: Option<Op>,
    refs: &mut RefCheck<'a>,
) -> Option<Template> {
    let value = match c.key("value") {
        Some(vc) => refs.template(cx, &vc)?,
        None => Template::Literal(Value::Null),
    };
    let problem = match (op, literal(&value)) {
        (Some(Op::In), Some(v)) if !v.is_array() => Some("operator `in` takes a list value"),
        (Some(Op::Exists), Some(v)) if !v.is_boolean() => {
            Some("operator `exists` takes `value: true` or `value: false`")
        }
        _ => None,
    };
    match problem {
        Some(message) => {
            cx.value_error(c, "value", message);
            None
        }
        None => Some(value),
    }
}
