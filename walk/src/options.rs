//! The reserved arguments of a looping call (SPEC §3) and the options they
//! become. Reserved arguments are taken out of the arguments here, so none
//! can reach the upstream.

use serde_json::{Map, Value};

use crate::fields::Projection;
use crate::filter::Filter;
use dragnet_core::Error;

/// Every reserved argument name.
pub const RESERVED: [&str; 5] = ["_fields", "_all_pages", "_for_each", "_filter", "_refresh"];

/// A fan-out as asked for: key and raw values (validated against the tool
/// when the call runs), and how many values are walked at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct ForEachSpec {
    pub key: String,
    pub values: Vec<Value>,
    pub concurrency: Concurrency,
}

/// How many `_for_each` values are walked at a time: 1 (the default, one
/// after another) up to [`Concurrency::MAX`]. The pages of one value are
/// always fetched one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Concurrency(u8);

/// A concurrency outside 1..=[`Concurrency::MAX`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "concurrency is {given}; it must be an integer from 1 to {}",
    Concurrency::MAX
)]
pub struct ConcurrencyError {
    pub given: String,
}

impl Concurrency {
    /// The most values walked at a time: enough to hide a distant API's
    /// latency, few enough not to look like an attack on it.
    pub const MAX: u8 = 16;
    pub const ONE: Concurrency = Concurrency(1);

    pub fn new(n: u64) -> Result<Self, ConcurrencyError> {
        match u8::try_from(n) {
            Ok(n) if (1..=Self::MAX).contains(&n) => Ok(Concurrency(n)),
            _ => Err(ConcurrencyError {
                given: n.to_string(),
            }),
        }
    }

    /// From a JSON value: a whole number (`4`, `4.0` or `"4"`) in range.
    pub fn from_json(v: &Value) -> Result<Self, ConcurrencyError> {
        let n = match v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        n.ok_or_else(|| ConcurrencyError {
            given: v.to_string(),
        })
        .and_then(Self::new)
    }

    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl Default for Concurrency {
    fn default() -> Self {
        Concurrency::ONE
    }
}

/// What the loop layer does around the plain call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoopOptions {
    pub all_pages: bool,
    pub fields: Option<Projection>,
    pub for_each: Option<ForEachSpec>,
    pub filter: Filter,
    /// Where the collection is, when the response does not make it plain.
    pub items_path: Option<Vec<String>>,
    pub refresh: bool,
}

impl LoopOptions {
    /// Takes the reserved arguments out of `args` and parses them.
    pub fn split_reserved(
        mut args: Map<String, Value>,
    ) -> Result<(Map<String, Value>, Self), Error> {
        let mut options = LoopOptions::default();
        if let Some(v) = args.remove("_all_pages") {
            options.all_pages = as_bool("_all_pages", &v)?;
        }
        if let Some(v) = args.remove("_refresh") {
            options.refresh = as_bool("_refresh", &v)?;
        }
        if let Some(v) = args.remove("_fields") {
            options.fields = Some(parse_fields(&v)?);
        }
        if let Some(v) = args.remove("_filter") {
            options.filter = Filter::from_json(&v)?;
        }
        if let Some(v) = args.remove("_for_each") {
            options.for_each = Some(parse_for_each(&v)?);
        }
        Ok((args, options))
    }
}

fn as_bool(name: &str, v: &Value) -> Result<bool, Error> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "true" || s == "false" => Ok(s == "true"),
        _ => Err(Error::InvalidReserved {
            argument: name.into(),
            message: format!("expected true or false, got {v}"),
        }),
    }
}

/// `_fields`: a list of dot-paths (or one comma-separated string).
pub fn parse_fields(v: &Value) -> Result<Projection, Error> {
    let bad = |message: String| Error::InvalidReserved {
        argument: "_fields".into(),
        message,
    };
    let paths: Vec<String> = match v {
        Value::Array(list) => list
            .iter()
            .map(|p| {
                p.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(format!("{p} is not a string")))
            })
            .collect::<Result<_, _>>()?,
        Value::String(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
        _ => return Err(bad("expected a list of dot-paths".into())),
    };
    if paths.is_empty() {
        return Err(bad("list at least one dot-path".into()));
    }
    Projection::new(&paths).map_err(|e| bad(e.to_string()))
}

fn parse_for_each(v: &Value) -> Result<ForEachSpec, Error> {
    let bad = |message: &str| Error::InvalidReserved {
        argument: "_for_each".into(),
        message: message.into(),
    };
    let obj = v
        .as_object()
        .ok_or_else(|| bad("expected {key, values, concurrency?}"))?;
    let key = obj
        .get("key")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`key` must name a parameter"))?;
    let values = obj
        .get("values")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("`values` must be a list"))?;
    if values.is_empty() {
        return Err(bad("`values` is empty"));
    }
    let concurrency = match obj.get("concurrency") {
        None | Some(Value::Null) => Concurrency::ONE,
        Some(c) => Concurrency::from_json(c).map_err(|e| bad(&e.to_string()))?,
    };
    Ok(ForEachSpec {
        key: key.to_string(),
        values: values.clone(),
        concurrency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reserved_arguments_are_removed() {
        let args = json!({"status":"open","_all_pages":true,"_fields":["id"],
            "_for_each":{"key":"property_id","values":[1,2]},
            "_filter":[{"field":"total","op":"gt","value":1}],"_refresh":false});
        let (rest, o) = LoopOptions::split_reserved(args.as_object().unwrap().clone()).unwrap();
        assert_eq!(rest.keys().collect::<Vec<_>>(), vec!["status"]);
        assert!(o.all_pages);
        assert_eq!(o.fields.unwrap().paths(), ["id"]);
        let fe = o.for_each.unwrap();
        assert_eq!(fe.values, vec![json!(1), json!(2)]);
        assert_eq!(fe.concurrency, Concurrency::ONE);
        assert_eq!(o.filter.clauses.len(), 1);
    }

    #[test]
    fn concurrency_is_one_to_sixteen() {
        let parse = |c: Value| {
            let args = json!({"_for_each":{"key":"a","values":[1],"concurrency":c}});
            LoopOptions::split_reserved(args.as_object().unwrap().clone())
                .map(|(_, o)| o.for_each.unwrap().concurrency.get())
        };
        assert_eq!(parse(json!(4)).unwrap(), 4);
        assert_eq!(parse(json!("16")).unwrap(), 16);
        assert_eq!(parse(json!(2.0)).unwrap(), 2);
        for bad in [
            json!(0),
            json!(17),
            json!(-1),
            json!(1.5),
            json!("x"),
            json!(true),
        ] {
            let e = parse(bad.clone()).unwrap_err().to_string();
            assert!(e.contains("from 1 to 16"), "{bad}: {e}");
        }
    }

    #[test]
    fn malformed_reserved_arguments() {
        for bad in [
            json!({"_all_pages":"yes"}),
            json!({"_fields":7}),
            json!({"_for_each":{"key":"a"}}),
            json!({"_for_each":{"key":"a","values":[]}}),
            json!({"_filter":[{"field":"a","op":"like","value":1}]}),
        ] {
            assert!(
                LoopOptions::split_reserved(bad.as_object().unwrap().clone()).is_err(),
                "{bad}"
            );
        }
    }
}
