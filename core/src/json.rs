//! Lazy JSON: objects parsed one level at a time into borrowed raw values,
//! so a 24 MB page is never turned into a `serde_json::Value` tree. Items
//! keep their exact bytes (ranges into the page, see `crate::items`) and
//! only the parts a projection or filter touches are looked at.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// One item of a collection, as the upstream sent it.
pub type RawItem = Box<RawValue>;

/// An object key, borrowed from the input unless it had escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// An object's top level: keys (unescaped) and values, in document order.
/// `get` gives a repeated key's last value.
#[derive(Debug, Clone, PartialEq)]
pub struct Object<'a, V> {
    pub fields: Vec<(Key<'a>, V)>,
}

impl<V> Default for Object<'_, V> {
    fn default() -> Self {
        Object { fields: Vec::new() }
    }
}

impl<'a, V: Copy> Object<'a, V> {
    /// The value of `key`, if present (a repeated key's last one).
    pub fn get(&self, key: &str) -> Option<V> {
        self.fields
            .iter()
            .rev()
            .find(|(k, _)| k.0 == key)
            .map(|(_, v)| *v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.fields.iter().any(|(k, _)| k.0 == key)
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(k, _)| k.0.as_ref())
    }
}

/// An object parsed one level deep by a validating parse, each key once. A
/// key that appears twice keeps its first place and takes its last value,
/// as `serde_json::Value` (and JavaScript) read it; every reader of pages,
/// envelopes and outputs goes by that one rule.
pub type RawObject<'a> = Object<'a, &'a RawValue>;

impl<'a> RawObject<'a> {
    /// An object from fields in document order, duplicates merged (see the type).
    pub fn from_fields(mut fields: Vec<(Key<'a>, &'a RawValue)>) -> RawObject<'a> {
        merge_duplicates(&mut fields);
        Object { fields }
    }
}

impl<'de> Deserialize<'de> for RawObject<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjVisitor;
        impl<'de> Visitor<'de> for ObjVisitor {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    fields.push((key, value));
                }
                Ok(RawObject::from_fields(fields))
            }
        }
        d.deserialize_map(ObjVisitor)
    }
}

/// Merges repeated keys in place: the first place, the last value. Returns
/// the positions (in the list as it was) of the entries removed, in order.
pub fn merge_duplicates<V: Copy>(fields: &mut Vec<(Key<'_>, V)>) -> Vec<usize> {
    /// Up to this many fields a pairwise check is cheaper than a map.
    const SMALL: usize = 16;
    let mut later: Vec<(usize, usize)> = Vec::new();
    if fields.len() <= SMALL {
        for i in 1..fields.len() {
            if let Some(first) = (0..i).find(|&j| fields[j].0 == fields[i].0) {
                later.push((first, i));
            }
        }
    } else {
        let mut seen: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(fields.len());
        for (i, (key, _)) in fields.iter().enumerate() {
            match seen.get(key.0.as_ref()) {
                Some(&first) => later.push((first, i)),
                None => {
                    seen.insert(key.0.as_ref(), i);
                }
            }
        }
    }
    if later.is_empty() {
        return Vec::new();
    }
    for &(first, i) in &later {
        fields[first].1 = fields[i].1;
    }
    let removed: Vec<usize> = later.iter().map(|&(_, i)| i).collect();
    let mut index = 0;
    fields.retain(|_| {
        let keep = removed.binary_search(&index).is_err();
        index += 1;
        keep
    });
    removed
}

/// An array parsed one level deep.
struct RawArray<'a>(Vec<&'a RawValue>);

impl<'de> Deserialize<'de> for RawArray<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ArrVisitor;
        impl<'de> Visitor<'de> for ArrVisitor {
            type Value = RawArray<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(16));
                while let Some(v) = seq.next_element::<&'de RawValue>()? {
                    out.push(v);
                }
                Ok(RawArray(out))
            }
        }
        d.deserialize_seq(ArrVisitor)
    }
}

/// The kind of a raw JSON value, read from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

/// JSON text that a parser already accepted: a raw value, or a range of a
/// body that was split (see `crate::items`). The readers below take either.
pub trait JsonText {
    fn json(&self) -> &str;
}

impl JsonText for RawValue {
    fn json(&self) -> &str {
        self.get()
    }
}

impl JsonText for Box<RawValue> {
    fn json(&self) -> &str {
        self.get()
    }
}

impl JsonText for str {
    fn json(&self) -> &str {
        self
    }
}

impl<T: JsonText + ?Sized> JsonText for &T {
    fn json(&self) -> &str {
        (**self).json()
    }
}

pub fn kind<T: JsonText + ?Sized>(raw: &T) -> Kind {
    match raw.json().trim_start().as_bytes().first() {
        Some(b'{') => Kind::Object,
        Some(b'[') => Kind::Array,
        Some(b'"') => Kind::String,
        Some(b't' | b'f') => Kind::Bool,
        Some(b'n') | None => Kind::Null,
        Some(_) => Kind::Number,
    }
}

/// Parses one level of an object; `None` when `raw` is not an object.
pub fn object<T: JsonText + ?Sized>(raw: &T) -> Option<RawObject<'_>> {
    if kind(raw) != Kind::Object {
        return None;
    }
    serde_json::from_str(raw.json()).ok()
}

/// Parses one level of an array; `None` when `raw` is not an array.
pub fn array<T: JsonText + ?Sized>(raw: &T) -> Option<Vec<&RawValue>> {
    if kind(raw) != Kind::Array {
        return None;
    }
    serde_json::from_str::<RawArray>(raw.json())
        .ok()
        .map(|a| a.0)
}

/// Writes `s` as a JSON string literal.
pub fn write_str(out: &mut String, s: &str) {
    // serde_json's escaping is the reference; a String writer cannot fail.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

/// Turns text the caller built into a raw value. The text must be JSON that
/// this module wrote; if it somehow is not, `null` stands in.
pub fn to_raw(text: String) -> RawItem {
    // The default raw value is `null`.
    RawValue::from_string(text).unwrap_or_default()
}

/// Parses a small raw value (a leaf a filter looks at) into a `Value`.
pub fn leaf<T: JsonText + ?Sized>(raw: &T) -> serde_json::Value {
    serde_json::from_str(raw.json()).unwrap_or(serde_json::Value::Null)
}

/// The value with every object's keys sorted (serde_json keeps insertion
/// order here): the material of cache and page-journal keys.
pub fn canonical(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            serde_json::Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(canonical).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_keeps_order_and_raw_values() {
        let raw: Box<RawValue> =
            serde_json::from_str(r#"{"b":1,"a":{"x":[1,2]},"c\"q":"s"}"#).unwrap();
        let obj = object(&raw).unwrap();
        let keys: Vec<&str> = obj.keys().collect();
        assert_eq!(keys, vec!["b", "a", "c\"q"]);
        assert_eq!(obj.get("a").unwrap().get(), r#"{"x":[1,2]}"#);
        assert!(object(obj.get("b").unwrap()).is_none());
    }

    #[test]
    fn repeated_keys_keep_the_first_place_and_the_last_value() {
        for n in [3, 40] {
            // Keys k0..k{n-1}, then k1 again and k0 again.
            let mut parts: Vec<String> = (0..n).map(|i| format!(r#""k{i}":{i}"#)).collect();
            parts.push(r#""k1":"second""#.into());
            parts.push(r#""k0":"last""#.into());
            let text = format!("{{{}}}", parts.join(","));
            let raw: Box<RawValue> = serde_json::from_str(&text).unwrap();
            let obj = object(&raw).unwrap();
            assert_eq!(obj.fields.len(), n, "{text}");
            assert_eq!(obj.keys().next(), Some("k0"));
            assert_eq!(obj.get("k0").unwrap().get(), r#""last""#);
            assert_eq!(obj.fields[1].1.get(), r#""second""#);
            // As serde_json's own Value reads it.
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["k0"], "last");
            assert_eq!(
                value.as_object().unwrap().keys().next().map(String::as_str),
                Some("k0")
            );
        }
    }

    #[test]
    fn kinds() {
        for (text, k) in [
            ("{}", Kind::Object),
            ("[1]", Kind::Array),
            ("\"x\"", Kind::String),
            ("-1.5", Kind::Number),
            ("true", Kind::Bool),
            ("null", Kind::Null),
        ] {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
            assert_eq!(kind(&raw), k, "{text}");
        }
    }

    #[test]
    fn array_elements() {
        let raw: Box<RawValue> = serde_json::from_str(r#"[ {"a":1} , 2 ]"#).unwrap();
        let items = array(&raw).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].get(), r#"{"a":1}"#);
    }
}
