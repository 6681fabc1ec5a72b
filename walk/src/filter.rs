//! `_filter` (SPEC §3.7): clauses `{field, op, value}`, ANDed, evaluated on
//! raw items after the walk and fan-out, before projection. Only the leaf a
//! clause names is parsed.

use std::cmp::Ordering;

use serde_json::Value;

use dragnet_core::json::{self, JsonText, Kind};
use dragnet_core::json_scan::{self, Fields};
use dragnet_core::Error;

/// Filter operators. Closed: anything else is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    Contains,
    In,
    Exists,
}

impl Op {
    pub const NAMES: [&'static str; 9] = [
        "eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists",
    ];

    /// The operator's name as written in files and arguments.
    pub fn name(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Neq => "neq",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::Contains => "contains",
            Op::In => "in",
            Op::Exists => "exists",
        }
    }

    pub fn parse(name: &str) -> Option<Op> {
        Some(match name {
            "eq" => Op::Eq,
            "neq" => Op::Neq,
            "gt" => Op::Gt,
            "gte" => Op::Gte,
            "lt" => Op::Lt,
            "lte" => Op::Lte,
            "contains" => Op::Contains,
            "in" => Op::In,
            "exists" => Op::Exists,
            _ => return None,
        })
    }
}

/// One validated clause.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub field: Vec<String>,
    pub op: Op,
    pub value: Value,
}

/// A validated, ANDed list of clauses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub clauses: Vec<Clause>,
}

impl Filter {
    /// Validates clauses given as JSON (`[{field, op, value}, …]`).
    pub fn from_json(value: &Value) -> Result<Filter, Error> {
        let list = match value {
            Value::Array(list) => list.as_slice(),
            Value::Object(_) => std::slice::from_ref(value),
            _ => {
                return Err(Error::InvalidFilter {
                    index: 0,
                    message: "expected a list of {field, op, value} clauses".into(),
                })
            }
        };
        let clauses = list
            .iter()
            .enumerate()
            .map(|(index, c)| clause_from_json(index, c))
            .collect::<Result<_, _>>()?;
        Ok(Filter { clauses })
    }

    /// Parses the CLI form `field op value` (value as JSON, else a string;
    /// words may be separated by any run of spaces). A clause without its
    /// value is an error naming it, not a filter that matches nothing.
    pub fn clause_from_text(index: usize, text: &str) -> Result<Clause, Error> {
        let bad = |message: String| Error::InvalidFilter { index, message };
        let (field, rest) = first_word(text);
        let (op, raw_value) = first_word(rest);
        if field.is_empty() || op.is_empty() {
            return Err(bad(format!("`{}` is not `field op value`", text.trim())));
        }
        if raw_value.is_empty() {
            return Err(bad(format!(
                "`{field} {op}` has no value; write `field op value` (`null` for null)"
            )));
        }
        let value =
            serde_json::from_str(raw_value).unwrap_or_else(|_| Value::String(raw_value.into()));
        build(index, field, op, value)
    }

    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }

    /// Whether `item` satisfies every clause.
    pub fn matches<T: JsonText + ?Sized>(&self, item: &T) -> bool {
        let obj = json_scan::object(item);
        self.matches_parsed(item.json(), obj.as_ref())
    }

    /// As `matches`, with the item's top level already parsed (when it is
    /// an object), so it is read once for every clause and the projection.
    pub fn matches_parsed(&self, item: &str, obj: Option<&Fields>) -> bool {
        self.clauses.iter().all(|c| c.matches_parsed(item, obj))
    }
}

/// The first word of `text` and the rest, both trimmed.
fn first_word(text: &str) -> (&str, &str) {
    let t = text.trim_start();
    match t.find(char::is_whitespace) {
        Some(end) => (&t[..end], t[end..].trim()),
        None => (t, ""),
    }
}

fn clause_from_json(index: usize, clause: &Value) -> Result<Clause, Error> {
    let bad = |message: String| Error::InvalidFilter { index, message };
    let obj = clause
        .as_object()
        .ok_or_else(|| bad("a clause is an object {field, op, value}".into()))?;
    if let Some(unknown) = obj
        .keys()
        .find(|k| !["field", "op", "value"].contains(&k.as_str()))
    {
        return Err(bad(format!(
            "unknown key `{unknown}` (expected field, op, value)"
        )));
    }
    let field = obj
        .get("field")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`field` must be a string dot-path".into()))?;
    let op = obj
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`op` must be a string".into()))?;
    build(
        index,
        field,
        op,
        obj.get("value").cloned().unwrap_or(Value::Null),
    )
}

fn build(index: usize, field: &str, op: &str, value: Value) -> Result<Clause, Error> {
    let bad = |message: String| Error::InvalidFilter { index, message };
    if field.is_empty() || field.split('.').any(str::is_empty) {
        return Err(bad(format!("`{field}` is not a dot-path")));
    }
    let op = Op::parse(op).ok_or_else(|| {
        bad(format!(
            "unknown operator `{op}`; use one of {}",
            Op::NAMES.join(", ")
        ))
    })?;
    match (op, &value) {
        (Op::In, Value::Array(_)) | (Op::Exists, Value::Bool(_)) => {}
        (Op::In, _) => return Err(bad("`in` takes an array value".into())),
        (Op::Exists, _) => return Err(bad("`exists` takes true or false".into())),
        _ => {}
    }
    Ok(Clause {
        field: field.split('.').map(str::to_string).collect(),
        op,
        value,
    })
}

impl Clause {
    pub fn matches<T: JsonText + ?Sized>(&self, item: &T) -> bool {
        test(self.op, lookup(item, &self.field).as_ref(), &self.value)
    }

    fn matches_parsed(&self, item: &str, obj: Option<&Fields>) -> bool {
        let found = match (obj, self.field.split_first()) {
            (Some(obj), Some((head, rest))) => obj.get(head).and_then(|v| lookup(v, rest)),
            _ => lookup(item, &self.field),
        };
        test(self.op, found.as_ref(), &self.value)
    }
}

/// One operator applied to a value found at a field (`None`: nothing
/// there) and the clause's value. Shared with workflow branch conditions.
pub fn test(op: Op, found: Option<&Value>, value: &Value) -> bool {
    match op {
        Op::Exists => {
            let present = found.is_some_and(|v| !v.is_null());
            value.as_bool() == Some(present)
        }
        _ => found.is_some_and(|field| compare(op, field, value)),
    }
}

/// The value at a dot-path of `raw`, if there is one; through arrays, the
/// values of every element.
pub fn lookup<T: JsonText + ?Sized>(raw: &T, path: &[String]) -> Option<Value> {
    let Some((head, rest)) = path.split_first() else {
        return Some(json::leaf(raw));
    };
    match json::kind(raw) {
        Kind::Object => lookup(json_scan::object(raw)?.get(head)?, rest),
        Kind::Array => {
            let values: Vec<Value> = json_scan::array(raw)?
                .into_iter()
                .filter_map(|e| lookup(e, path))
                .collect();
            Some(Value::Array(values))
        }
        _ => None,
    }
}

fn compare(op: Op, field: &Value, value: &Value) -> bool {
    match op {
        Op::Eq => equal(field, value) == Some(true),
        Op::Neq => equal(field, value) == Some(false),
        Op::Gt => order(field, value) == Some(Ordering::Greater),
        Op::Gte => matches!(
            order(field, value),
            Some(Ordering::Greater | Ordering::Equal)
        ),
        Op::Lt => order(field, value) == Some(Ordering::Less),
        Op::Lte => matches!(order(field, value), Some(Ordering::Less | Ordering::Equal)),
        Op::Contains => match (field, value) {
            (Value::String(s), Value::String(needle)) => s.contains(needle.as_str()),
            (Value::Array(list), needle) => list.iter().any(|e| equal(e, needle) == Some(true)),
            _ => false,
        },
        Op::In => match value {
            Value::Array(options) => options.iter().any(|o| equal(field, o) == Some(true)),
            _ => false,
        },
        Op::Exists => false,
    }
}

/// Equality within one type; `None` on a type mismatch.
fn equal(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Some(x.as_f64() == y.as_f64()),
        (Value::String(x), Value::String(y)) => Some(x == y),
        (Value::Bool(x), Value::Bool(y)) => Some(x == y),
        (Value::Null, Value::Null) => Some(true),
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => Some(a == b),
        _ => None,
    }
}

/// Ordering of numbers as numbers and strings as strings; else `None`.
fn order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(text: &str) -> Box<serde_json::value::RawValue> {
        serde_json::from_str(text).unwrap()
    }
    fn f(clauses: Value) -> Filter {
        Filter::from_json(&clauses).unwrap()
    }

    #[test]
    fn operators() {
        let it = item(
            r#"{"n":10,"s":"open","d":"2026-03-01T00:00:00Z","tags":["a","b"],"c":{"name":"Ann"},"z":null}"#,
        );
        let yes = [
            json!({"field":"n","op":"eq","value":10.0}),
            json!({"field":"n","op":"gt","value":9}),
            json!({"field":"n","op":"lte","value":10}),
            json!({"field":"s","op":"neq","value":"paid"}),
            json!({"field":"d","op":"gte","value":"2026-01-01"}),
            json!({"field":"s","op":"contains","value":"pe"}),
            json!({"field":"tags","op":"contains","value":"b"}),
            json!({"field":"s","op":"in","value":["paid","open"]}),
            json!({"field":"c.name","op":"eq","value":"Ann"}),
            json!({"field":"c","op":"exists","value":true}),
            json!({"field":"z","op":"exists","value":false}),
            json!({"field":"nope","op":"exists","value":false}),
        ];
        for c in yes {
            assert!(f(c.clone()).matches(&it), "{c}");
        }
        let no = [
            json!({"field":"n","op":"eq","value":"10"}),
            json!({"field":"n","op":"neq","value":"10"}),
            json!({"field":"s","op":"gt","value":5}),
            json!({"field":"nope","op":"eq","value":1}),
            json!({"field":"n","op":"contains","value":1}),
        ];
        for c in no {
            assert!(!f(c.clone()).matches(&it), "{c}");
        }
    }

    #[test]
    fn clauses_are_anded_and_paths_map_over_arrays() {
        let it = item(r#"{"status":"open","lines":[{"sku":"A"},{"sku":"B"}]}"#);
        let filter = f(json!([
            {"field":"status","op":"eq","value":"open"},
            {"field":"lines.sku","op":"contains","value":"B"}]));
        assert!(filter.matches(&it));
        let filter = f(json!([
            {"field":"status","op":"eq","value":"open"},
            {"field":"lines.sku","op":"contains","value":"C"}]));
        assert!(!filter.matches(&it));
    }

    #[test]
    fn bad_clauses() {
        let err = Filter::from_json(&json!([{"field":"a","op":"like","value":1}])).unwrap_err();
        assert!(err.to_string().contains("unknown operator `like`"), "{err}");
        assert!(Filter::from_json(&json!([{"field":"a","op":"in","value":1}])).is_err());
        assert!(Filter::from_json(&json!([{"field":"a","op":"exists","value":"y"}])).is_err());
        assert!(Filter::from_json(&json!("x")).is_err());
    }

    #[test]
    fn text_form() {
        let c = Filter::clause_from_text(0, "total gt 100").unwrap();
        assert_eq!(c.value, json!(100));
        let c = Filter::clause_from_text(0, "status eq open").unwrap();
        assert_eq!(c.value, json!("open"));
        let c = Filter::clause_from_text(0, "customer.name contains Ann Lee").unwrap();
        assert_eq!(c.value, json!("Ann Lee"));
        assert!(Filter::clause_from_text(0, "total").is_err());
        let e = Filter::clause_from_text(0, "total gt").unwrap_err();
        assert!(e.to_string().contains("`total gt` has no value"), "{e}");
        assert!(Filter::clause_from_text(1, " total   lte   ").is_err());
        let c = Filter::clause_from_text(0, "  total   gte\t 20 ").unwrap();
        assert_eq!(
            (c.field.clone(), c.value.clone()),
            (vec!["total".to_string()], json!(20))
        );
        assert!(Filter::clause_from_text(0, "total exists").is_err());
        let c = Filter::clause_from_text(0, "note eq null").unwrap();
        assert_eq!(c.value, Value::Null);
        assert!(Filter::clause_from_text(0, "total ~ 3").is_err());
    }
}
