//! A branch step: its condition evaluated with the same operators as
//! `_filter`, or by truthiness when no operator is given.

use dragnet_walk::filter;
use serde_json::{json, Value};

use super::template::resolve;
use crate::refs::{RefError, Scope};
use crate::workflow::model::BranchStep;

/// What a branch decided, and why, in words for skipped steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub then: bool,
    pub because: String,
}

impl Decision {
    pub fn output(&self, value: &Value) -> Value {
        json!({"took": if self.then { "then" } else { "else" }, "value": value})
    }
}

pub fn decide(branch: &BranchStep, scope: &Scope) -> Result<(Decision, Value), RefError> {
    let c = &branch.condition;
    let found = scope.resolve(&c.reference)?;
    let then = match c.op {
        Some(op) => {
            let value = resolve(&c.value, scope)?;
            filter::test(op, Some(&found), &value)
        }
        None => truthy(&found),
    };
    let because = match c.op {
        Some(op) => format!(
            "{} was {found} ({} {} {})",
            c.reference.text,
            op.name(),
            resolve(&c.value, scope).unwrap_or(Value::Null),
            if then { "held" } else { "did not hold" }
        ),
        None => format!("{} was {found}", c.reference.text),
    };
    Ok((Decision { then, because }, found))
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}
