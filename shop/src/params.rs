//! Reading request input without panicking: query integers with bounds, enums, JSON bodies.
//!
//! Bounds follow the OpenAPI document: a value under its `minimum` is a 400, a value over its
//! `maximum` is clamped to the maximum (documented), an empty value counts as absent.

use axum::extract::Query;
use axum::http::Uri;
use serde_json::{Map, Value};

use crate::data::OrderStatus;
use crate::error::ShopError;

/// An integer input's documented bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub default: u64,
    pub min: u64,
    pub max: Option<u64>,
}

impl Bounds {
    pub(crate) const fn new(default: u64, min: u64, max: Option<u64>) -> Self {
        Self { default, min, max }
    }

    fn check(self, name: &str, value: i64) -> Result<u64, ShopError> {
        match u64::try_from(value) {
            Ok(v) if v >= self.min => Ok(self.max.map_or(v, |max| v.min(max))),
            _ => Err(ShopError::bad(format!(
                "`{name}` must be at least {}, got {value}",
                self.min
            ))),
        }
    }
}

/// The decoded query pairs of one request, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    /// Decodes the query string of `uri`.
    pub(crate) fn from_uri(uri: &Uri) -> Result<Self, ShopError> {
        Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map(|Query(pairs)| Self(pairs))
            .map_err(|e| ShopError::bad(format!("unreadable query string: {e}")))
    }

    /// The pairs, in the order they were sent.
    pub(crate) fn into_pairs(self) -> Vec<(String, String)> {
        self.0
    }

    /// The first non-empty value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, value)| key == name && !value.is_empty())
            .map(|(_, value)| value.as_str())
    }

    /// An integer with bounds: default when absent, 400 when not an integer or under minimum.
    pub(crate) fn int(&self, name: &str, bounds: Bounds) -> Result<u64, ShopError> {
        match self.get(name) {
            None => Ok(bounds.default),
            Some(text) => bounds.check(name, parse_int(name, text)?),
        }
    }

    /// An optional integer of at least `min`.
    pub(crate) fn opt_int(&self, name: &str, min: u64) -> Result<Option<u64>, ShopError> {
        self.get(name)
            .map(|text| Bounds::new(min, min, None).check(name, parse_int(name, text)?))
            .transpose()
    }

    /// The optional `created_since` filter: a UTC time
    /// (`YYYY-MM-DDTHH:MM:SS`, optional fraction, `Z`), as its first 19
    /// characters, which order like the times they name.
    pub(crate) fn created_since(&self) -> Result<Option<String>, ShopError> {
        self.utc_since("created_since")
    }

    /// An optional UTC time filter named `name`, read as `created_since` is.
    pub(crate) fn utc_since(&self, name: &str) -> Result<Option<String>, ShopError> {
        let Some(text) = self.get(name) else {
            return Ok(None);
        };
        utc_time(text).map(|t| Some(t.to_string())).ok_or_else(|| {
            ShopError::bad(format!(
                "`{name}` must be a UTC time like 2026-01-01T00:00:00Z, got `{text}`"
            ))
        })
    }

    /// The optional `status` filter.
    pub(crate) fn status(&self) -> Result<Option<OrderStatus>, ShopError> {
        self.get("status").map(parse_status).transpose()
    }
}

/// A UTC time (`YYYY-MM-DDTHH:MM:SS`, optional fraction, `Z`) as its
/// first 19 characters, which order like the times they name.
pub(crate) fn utc_time(text: &str) -> Option<&str> {
    let t = text.trim();
    let bytes = t.as_bytes();
    let shaped = bytes.len() >= 20
        && t.ends_with('Z')
        && bytes[..19].iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b'T',
            13 | 16 => *b == b':',
            _ => b.is_ascii_digit(),
        })
        && (bytes.len() == 20 || bytes[19] == b'.');
    shaped.then(|| &t[..19])
}

/// Parses a decimal integer, naming the input in the error.
pub(crate) fn parse_int(name: &str, text: &str) -> Result<i64, ShopError> {
    text.trim()
        .parse()
        .map_err(|_| ShopError::bad(format!("`{name}` must be an integer, got `{text}`")))
}

/// Parses an order status name.
pub(crate) fn parse_status(text: &str) -> Result<OrderStatus, ShopError> {
    OrderStatus::parse(text).ok_or_else(|| {
        ShopError::bad(format!(
            "`status` must be one of open, paid, shipped, cancelled; got `{text}`"
        ))
    })
}

/// Parses a request body as a JSON object; an empty body is `None`.
pub(crate) fn json_object(body: &[u8]) -> Result<Option<Map<String, Value>>, ShopError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err(ShopError::bad("the request body must be a JSON object")),
        Err(e) => Err(ShopError::bad(format!("the request body is not JSON: {e}"))),
    }
}

/// A field of a JSON object that must be an object when present (`null` counts as absent).
pub(crate) fn object_field<'a>(
    object: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a Map<String, Value>>, ShopError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(_) => Err(ShopError::bad(format!("`{name}` must be an object"))),
    }
}

/// A string field; `required` makes absence a 400.
pub(crate) fn string_field(
    object: &Map<String, Value>,
    name: &str,
    required: bool,
) -> Result<Option<String>, ShopError> {
    match object.get(name) {
        None | Some(Value::Null) if required => {
            Err(ShopError::bad(format!("`{name}` is required")))
        }
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(ShopError::bad(format!("`{name}` must be a string"))),
    }
}

/// An integer field with bounds (`label` names it in errors, e.g. `paging.page`).
pub(crate) fn int_field(
    object: Option<&Map<String, Value>>,
    name: &str,
    label: &str,
    bounds: Bounds,
) -> Result<u64, ShopError> {
    match object.and_then(|o| o.get(name)) {
        None | Some(Value::Null) => Ok(bounds.default),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(value) => bounds.check(label, value),
            None => Err(ShopError::bad(format!("`{label}` must be an integer"))),
        },
        Some(_) => Err(ShopError::bad(format!("`{label}` must be an integer"))),
    }
}

/// An optional integer field of at least `min`.
pub(crate) fn opt_int_field(
    object: Option<&Map<String, Value>>,
    name: &str,
    label: &str,
    min: u64,
) -> Result<Option<u64>, ShopError> {
    match object.and_then(|o| o.get(name)) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => int_field(object, name, label, Bounds::new(min, min, None)).map(Some),
    }
}

/// An optional number field.
pub(crate) fn number_field(
    object: Option<&Map<String, Value>>,
    name: &str,
    label: &str,
) -> Result<Option<f64>, ShopError> {
    match object.and_then(|o| o.get(name)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(ShopError::bad(format!("`{label}` must be a number"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> QueryParams {
        QueryParams::from_uri(&format!("/x?{text}").parse::<Uri>().unwrap()).unwrap()
    }

    #[test]
    fn integers_clamp_above_and_refuse_below() {
        let bounds = Bounds::new(25, 1, Some(100));
        assert_eq!(query("").int("per_page", bounds).unwrap(), 25);
        assert_eq!(query("per_page=").int("per_page", bounds).unwrap(), 25);
        assert_eq!(query("per_page=500").int("per_page", bounds).unwrap(), 100);
        assert!(query("per_page=0").int("per_page", bounds).is_err());
        assert!(query("per_page=-3").int("per_page", bounds).is_err());
        assert!(query("per_page=abc").int("per_page", bounds).is_err());
        assert!(query("per_page=99999999999999999999")
            .int("per_page", bounds)
            .is_err());
    }

    #[test]
    fn status_and_body_fields() {
        assert_eq!(
            query("status=paid").status().unwrap(),
            Some(OrderStatus::Paid)
        );
        assert!(query("status=lost").status().is_err());
        let body = json_object(br#"{"paging":{"page":"2"},"title":3}"#)
            .unwrap()
            .unwrap();
        let paging = object_field(&body, "paging").unwrap();
        assert!(int_field(paging, "page", "paging.page", Bounds::new(1, 1, None)).is_err());
        assert!(string_field(&body, "title", true).is_err());
        assert!(string_field(&body, "missing", true).is_err());
        assert!(json_object(b"[1]").is_err());
        assert!(json_object(b"{").is_err());
        assert!(json_object(b"  ").unwrap().is_none());
    }
}
