//! Turning the text of a document into a `serde_json::Value`: JSON or YAML
//! chosen by content (a leading `{` means JSON), a UTF-8 byte-order mark
//! tolerated, YAML's non-string mapping keys (`200:`, `true:`) turned into
//! the strings a JSON document would have had, YAML merge keys applied.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, Error as _, MapAccess};
use serde::de::{SeqAccess, VariantAccess, Visitor};
use serde_json::{Map, Number, Value};

use dragnet_core::error::Error;

/// Nesting beyond this is refused (the YAML parser stops at 128 anyway).
const MAX_NESTING: usize = 256;

/// Parses `text` (JSON or YAML) into a JSON value.
pub(crate) fn parse(source: &str, text: &str) -> Result<Value, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let parse_error = |message: String| Error::ParseDocument {
        file: source.to_string(),
        message,
    };
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| parse_error(e.to_string()));
    }
    let deserializer = serde_yaml_ng::Deserializer::from_str(text);
    JsonSeed { depth: 0 }
        .deserialize(deserializer)
        .map_err(|e| parse_error(e.to_string()))
}

/// Builds a `serde_json::Value` straight from YAML events. (Going through
/// `serde_yaml_ng::Value` fails on integers beyond 64 bits, which real
/// documents carry as `maximum`s; here they become floats, as in JSON.)
#[derive(Clone, Copy)]
struct JsonSeed {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for JsonSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        if self.depth > MAX_NESTING {
            return Err(D::Error::custom("the document nests too deeply"));
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(match i64::try_from(v) {
            Ok(small) => Value::Number(small.into()),
            Err(_) => float(v as f64),
        })
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(match u64::try_from(v) {
            Ok(small) => Value::Number(small.into()),
            Err(_) => float(v as f64),
        })
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = JsonSeed {
            depth: self.depth + 1,
        };
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = JsonSeed {
            depth: self.depth + 1,
        };
        let mut out = Map::new();
        let mut merges: Vec<Value> = Vec::new();
        while let Some(key) = map.next_key_seed(inner)? {
            let value = map.next_value_seed(inner)?;
            let key = match key {
                Value::String(s) => s,
                other => other.to_string(),
            };
            if key == "<<" {
                merges.push(value);
            } else {
                out.insert(key, value);
            }
        }
        // YAML merge keys (`<<: *base`): the mapping's own keys win, then
        // earlier merged mappings over later ones.
        for merged in merges {
            let sources = match merged {
                Value::Array(list) => list,
                other => vec![other],
            };
            for source in sources {
                let Value::Object(source) = source else {
                    return Err(A::Error::custom(
                        "a YAML merge key `<<` must name a mapping",
                    ));
                };
                for (k, v) in source {
                    out.entry(k).or_insert(v);
                }
            }
        }
        Ok(Value::Object(out))
    }

    /// `!tag value`: the tag carries no meaning in an OpenAPI document.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (_tag, variant): (String, _) = data.variant()?;
        variant.newtype_variant_seed(JsonSeed {
            depth: self.depth + 1,
        })
    }
}

/// A float as JSON; NaN and infinities (which JSON lacks) as strings.
fn float(v: f64) -> Value {
    Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_with_bom() {
        let v = parse("t", "\u{feff}  {\"openapi\":\"3.0.0\"}").unwrap();
        assert_eq!(v["openapi"], "3.0.0");
    }

    #[test]
    fn yaml_numeric_and_bool_keys_become_strings() {
        let v = parse(
            "t",
            "\u{feff}responses:\n  200:\n    d: 1\n  2.5: x\n  true: y\n  ~: z\n",
        )
        .unwrap();
        let responses = v["responses"].as_object().unwrap();
        let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
        assert_eq!(keys, ["200", "2.5", "true", "null"]);
    }

    #[test]
    fn yaml_merge_keys_and_tags() {
        let v = parse("t", "a: &x {k: 1}\nb:\n  <<: *x\n  j: 2\nc: !custom 5\n").unwrap();
        assert_eq!(v["b"]["k"], 1);
        assert_eq!(v["c"], 5);
    }

    #[test]
    fn broken_text_is_a_parse_error() {
        assert!(matches!(
            parse("f.json", "{\"a\":"),
            Err(Error::ParseDocument { file, .. }) if file == "f.json"
        ));
        assert!(matches!(
            parse("f.yaml", "a: [1, 2"),
            Err(Error::ParseDocument { .. })
        ));
    }

    #[test]
    fn special_floats_do_not_panic() {
        let v = parse("t", "a: .nan\nb: .inf\nc: 18446744073709552000\n").unwrap();
        assert!(v["a"].is_string());
        assert!(v["b"].is_string());
        assert_eq!(v["c"].as_f64(), Some(18446744073709552000.0));
    }
}
