//! `{ref: "<JSONPath>"}` values: parsed and checked when a workflow is
//! compiled, resolved when a step runs over `$.inputs`, `$.steps.<id>` and
//! `$.trigger`. A plain path (`$.steps.fetch._loop.complete`) is resolved
//! lazily over the step's raw JSON, touching only the objects on the way;
//! anything else (wildcards, filters, slices, `..`) is evaluated over that
//! one step's output by `bounded`, which stops a ref that visits too many
//! nodes or produces too many values, naming the ref and the limit.

mod bounded;
#[cfg(test)]
mod bounded_tests;

pub use bounded::{Exceeded, Limits, MAX_NODES_VISITED, MAX_VALUES_PRODUCED};

use dragnet_core::Document;
use std::collections::HashMap;
use std::sync::Arc;

use dragnet_core::json;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::step_id::StepId;

/// What a ref reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefRoot {
    Inputs,
    Step(StepId),
    Trigger,
}

/// One segment of a plain path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A parsed ref.
#[derive(Debug, Clone, PartialEq)]
pub struct RefExpr {
    /// As written.
    pub text: String,
    pub root: RefRoot,
    /// The JSONPath relative to the root, starting with `$`.
    pub relative: String,
    /// The segments when the relative path is plain (keys and indexes only);
    /// a plain path yields one value, any other path a list of matches.
    pub plain: Option<Vec<Segment>>,
}

/// Why a ref is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RefError(pub String);

impl RefExpr {
    /// Parses `text`; the root must be `$.inputs`, `$.steps.<id>` or `$.trigger`.
    pub fn parse(text: &str) -> Result<RefExpr, RefError> {
        let text = text.trim();
        // A path of member names only needs no parser to be known valid.
        if !member_names_only(text) {
            parse_path(text)?;
        }
        let segments = split(text).ok_or_else(|| {
            RefError(format!(
                "`{text}` must start with $.inputs, $.steps.<id> or $.trigger"
            ))
        })?;
        let (root, rest) = match segments.raw.as_slice() {
            [Segment::Key(k), rest @ ..] if k == "inputs" => (RefRoot::Inputs, rest),
            [Segment::Key(k), rest @ ..] if k == "trigger" => (RefRoot::Trigger, rest),
            [Segment::Key(k), Segment::Key(id), rest @ ..] if k == "steps" => {
                (RefRoot::Step(StepId(id.clone())), rest)
            }
            _ => {
                return Err(RefError(format!(
                    "`{text}` must start with $.inputs, $.steps.<id> or $.trigger"
                )))
            }
        };
        let consumed = segments.raw.len() - rest.len();
        let relative = format!("${}", &text[segments.offsets[consumed - 1]..]);
        let plain = if segments.complete {
            Some(rest.to_vec())
        } else {
            None
        };
        Ok(RefExpr {
            text: text.to_string(),
            root,
            relative,
            plain,
        })
    }

    /// The step this ref reads, if any.
    pub fn step(&self) -> Option<&StepId> {
        match &self.root {
            RefRoot::Step(id) => Some(id),
            _ => None,
        }
    }

    /// The first key after `$.inputs`, to check against declared inputs.
    pub fn input_name(&self) -> Option<&str> {
        match (&self.root, self.plain.as_deref()) {
            (RefRoot::Inputs, Some([Segment::Key(k), ..])) => Some(k),
            _ => None,
        }
    }
}

/// The leading plain segments of a path, with the byte offset where each
/// ends, and whether the whole path was plain.
struct Split {
    raw: Vec<Segment>,
    offsets: Vec<usize>,
    complete: bool,
}

fn split(text: &str) -> Option<Split> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'$') {
        return None;
    }
    let mut i = 1;
    let mut raw = Vec::new();
    let mut offsets = Vec::new();
    while i < bytes.len() {
        match bytes[i] {
            b'.' if bytes.get(i + 1) != Some(&b'.') => {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len()
                    && (bytes[end].is_ascii_alphanumeric()
                        || matches!(bytes[end], b'_' | b'-' | b'@'))
                {
                    end += 1;
                }
                if end == start {
                    break;
                }
                raw.push(Segment::Key(text[start..end].to_string()));
                i = end;
            }
            b'[' => {
                let close = text[i..].find(']').map(|c| i + c)?;
                let inner = text[i + 1..close].trim();
                let quoted = inner.len() >= 2
                    && ((inner.starts_with('\'') && inner.ends_with('\''))
                        || (inner.starts_with('"') && inner.ends_with('"')));
                if quoted {
                    raw.push(Segment::Key(inner[1..inner.len() - 1].to_string()));
                } else if let Ok(n) = inner.parse::<usize>() {
                    raw.push(Segment::Index(n));
                } else {
                    break;
                }
                i = close + 1;
            }
            _ => break,
        }
        offsets.push(i);
    }
    Some(Split {
        complete: i == bytes.len(),
        raw,
        offsets,
    })
}

/// What refs resolve against during a run.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    pub inputs: Arc<Value>,
    pub trigger: Arc<Value>,
    /// Each finished step's output as raw JSON.
    pub steps: HashMap<StepId, Document>,
}

impl Scope {
    /// Resolves a ref: one value for a plain path, a list of matches else.
    pub fn resolve(&self, r: &RefExpr) -> Result<Value, RefError> {
        match &r.root {
            RefRoot::Inputs => resolve_value(&self.inputs, r),
            RefRoot::Trigger => resolve_value(&self.trigger, r),
            RefRoot::Step(id) => {
                let raw = self.steps.get(id).ok_or_else(|| {
                    RefError(format!(
                        "`{}` reads step `{id}`, which has no output",
                        r.text
                    ))
                })?;
                match &r.plain {
                    Some(segments) => walk_raw(raw, segments).ok_or_else(|| missing(r)),
                    None => {
                        let tree: Value = serde_json::from_str(raw.get()).map_err(|e| {
                            RefError(format!("step `{id}` output is not JSON: {e}"))
                        })?;
                        query(&tree, r)
                    }
                }
            }
        }
    }
}

fn missing(r: &RefExpr) -> RefError {
    RefError(format!("`{}` matched nothing", r.text))
}

fn resolve_value(root: &Value, r: &RefExpr) -> Result<Value, RefError> {
    match &r.plain {
        Some(segments) => {
            let mut current = root;
            for s in segments {
                current = match s {
                    Segment::Key(k) => current.get(k.as_str()),
                    Segment::Index(n) => current.get(*n),
                }
                .ok_or_else(|| missing(r))?;
            }
            Ok(current.clone())
        }
        None => query(root, r),
    }
}

/// Whether `text` is `$` and one or more `.name` (a letter or `_`, then
/// letters, digits or `_`: RFC 9535's member-name shorthand in ASCII),
/// the commonest ref (`$.inputs.go`, `$.steps.fetch._loop.complete`).
/// Such a path is valid JSONPath, so compiling it skips jsonpath-rust's
/// parser, which took about a sixth of a 1,000-step workflow's run
/// (`docs/PERFORMANCE.md`, P4).
fn member_names_only(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("$.") else {
        return false;
    };
    rest.split('.').all(|name| {
        let mut bytes = name.bytes();
        bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// The most parser steps one JSONPath may take. Ordinary refs take a few
/// hundred; jsonpath-rust's parser backtracks, and nested filters can make it
/// take exponentially many (found by fuzzing: 900 bytes ran for minutes).
const PARSE_CALLS: usize = 1_000_000;

/// Parses a JSONPath within `PARSE_CALLS` parser steps.
fn parse_path(text: &str) -> Result<jsonpath_rust::parser::model::JpQuery, RefError> {
    static LIMIT: std::sync::Once = std::sync::Once::new();
    // pest reads the limit when each parse starts; jsonpath-rust is the
    // only pest grammar in the process.
    LIMIT.call_once(|| pest::set_call_limit(std::num::NonZeroUsize::new(PARSE_CALLS)));
    jsonpath_rust::parser::parse_json_path(text).map_err(|e| {
        let message = e.to_string();
        if message.contains("call limit reached") {
            RefError(format!(
                "`{text}` is too complex to parse (over {PARSE_CALLS} parser steps); use fewer nested filters"
            ))
        } else {
            RefError(format!("`{text}` is not a valid JSONPath: {message}"))
        }
    })
}

fn query(root: &Value, r: &RefExpr) -> Result<Value, RefError> {
    query_with(root, r, Limits::default())
}

/// Resolves a non-plain ref over `root` within `limits`.
fn query_with(root: &Value, r: &RefExpr, limits: Limits) -> Result<Value, RefError> {
    let path = parse_path(&r.relative)?;
    let found = bounded::query(&path, root, limits).map_err(|e| {
        RefError(format!(
            "`{}` {e}; narrow the path (fewer `..` and wildcards) or read a smaller part of the output",
            r.text
        ))
    })?;
    Ok(Value::Array(found.into_iter().cloned().collect()))
}

/// Follows plain segments over raw JSON, parsing one level at a time.
fn walk_raw(doc: &Document, segments: &[Segment]) -> Option<Value> {
    let Some((first, rest)) = segments.split_first() else {
        return serde_json::from_str(doc.get()).ok();
    };
    let mut current: &RawValue = step(doc, first)?;
    for s in rest {
        current = step(current, s)?;
    }
    serde_json::from_str(current.get()).ok()
}

/// One plain segment down from `raw`.
fn step<'a, T: json::JsonText + ?Sized>(raw: &'a T, segment: &Segment) -> Option<&'a RawValue> {
    match segment {
        Segment::Key(k) => json::object(raw)?.get(k),
        Segment::Index(n) => json::array(raw)?.get(*n).copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_of_member_names_are_valid_jsonpath_and_nothing_else_skips_the_parser() {
        let names = [
            "inputs", "go", "_loop", "_", "a1", "A_b_9", "true", "false", "null", "length",
            "steps", "items", "x",
        ];
        for a in names {
            for b in names {
                let text = format!("$.{a}.{b}");
                assert!(member_names_only(&text), "{text}");
                assert!(parse_path(&text).is_ok(), "{text} is valid JSONPath");
            }
        }
        for text in [
            "$",
            "$.",
            "$..a",
            "$.a.",
            "$.1a",
            "$.a-b",
            "$.a b",
            "$.a[0]",
            "$['a']",
            "$.a.*",
            "$.é",
            "$.inputs..go",
            "inputs.go",
            "$.a.@",
        ] {
            assert!(!member_names_only(text), "{text}");
        }
        // What the parser refuses is still refused.
        assert!(RefExpr::parse("$.inputs.a-b").is_err());
        assert!(RefExpr::parse("$.inputs.1a").is_err());
        assert_eq!(
            RefExpr::parse("$.steps.fetch._loop.complete")
                .unwrap()
                .plain,
            Some(vec![
                Segment::Key("_loop".into()),
                Segment::Key("complete".into())
            ])
        );
    }

    fn scope() -> Scope {
        let mut s = Scope {
            inputs: Arc::new(json!({"min": 5, "ids": [1, 2]})),
            ..Scope::default()
        };
        let out: Box<RawValue> = serde_json::from_str(
            r#"{"data":[{"id":1,"v":"a"},{"id":2,"v":"b"}],"_loop":{"complete":true}}"#,
        )
        .unwrap();
        s.steps.insert(StepId("fetch".into()), Document::from(out));
        s
    }

    #[test]
    fn parses_roots() {
        let r = RefExpr::parse("$.steps.fetch._loop.complete").unwrap();
        assert_eq!(r.step(), Some(&StepId("fetch".into())));
        assert_eq!(r.relative, "$._loop.complete");
        assert!(r.plain.is_some());
        let r = RefExpr::parse("$.steps.fetch.data[*].id").unwrap();
        assert_eq!(r.relative, "$.data[*].id");
        assert!(r.plain.is_none());
        assert_eq!(
            RefExpr::parse("$.inputs.min").unwrap().input_name(),
            Some("min")
        );
        assert!(RefExpr::parse("$.other").is_err());
        assert!(RefExpr::parse("$.steps").is_err());
        assert!(RefExpr::parse("$.steps.x[").is_err());
    }

    #[test]
    fn resolves_plain_and_query_paths() {
        let s = scope();
        let r = |t: &str| s.resolve(&RefExpr::parse(t).unwrap());
        assert_eq!(r("$.steps.fetch._loop.complete").unwrap(), json!(true));
        assert_eq!(r("$.steps.fetch.data[1].v").unwrap(), json!("b"));
        assert_eq!(r("$.steps.fetch.data[*].id").unwrap(), json!([1, 2]));
        assert_eq!(r("$.inputs.ids[0]").unwrap(), json!(1));
        assert_eq!(r("$.steps.fetch.data[?@.id == 2].v").unwrap(), json!(["b"]));
        assert!(r("$.steps.fetch.nope")
            .unwrap_err()
            .0
            .contains("matched nothing"));
        assert!(r("$.steps.other.x").is_err());
    }
}
