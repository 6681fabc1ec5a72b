//! Turning a `Template` into a value: every `{ref}` resolved in the run's
//! scope.

use serde_json::{Map, Value};

use crate::refs::{RefError, Scope};
use crate::workflow::model::Template;

pub fn resolve(template: &Template, scope: &Scope) -> Result<Value, RefError> {
    Ok(match template {
        Template::Literal(v) => v.clone(),
        Template::Ref(r) => scope.resolve(r)?,
        Template::Array(items) => Value::Array(
            items
                .iter()
                .map(|t| resolve(t, scope))
                .collect::<Result<_, _>>()?,
        ),
        Template::Object(fields) => {
            let mut map = Map::new();
            for (k, t) in fields {
                map.insert(k.clone(), resolve(t, scope)?);
            }
            Value::Object(map)
        }
    })
}
