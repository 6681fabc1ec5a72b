//! A serde `Deserializer` over the positioned tree, so the file types in
//! `file.rs` deserialize with `deny_unknown_fields` and every serde error
//! lands on the node it is about: an unknown field on its key, a missing
//! field on its mapping, a wrong type on the value.

use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};

use super::cursor::Cursor;
use super::path::YamlPath;
use super::yaml::{Entry, Node, NodeValue, Pos};

/// A serde error, located at the innermost node it was raised for.
#[derive(Debug, Clone, PartialEq)]
pub struct DeError {
    pub message: String,
    pub at: Option<(Pos, String)>,
}

impl DeError {
    fn locate(mut self, pos: Pos, path: &YamlPath<'_>) -> DeError {
        if self.at.is_none() {
            self.at = Some((pos, path.to_string()));
        }
        self
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            message: msg.to_string(),
            at: None,
        }
    }
}

/// Deserializes the node under `cursor`; errors carry position and path.
pub fn from_cursor<T: DeserializeOwned>(cursor: &Cursor<'_>) -> Result<T, DeError> {
    let de = NodeDe {
        node: cursor.node,
        path: cursor.path.clone(),
    };
    T::deserialize(de).map_err(|e| e.locate(cursor.pos(), &cursor.path))
}

struct NodeDe<'a> {
    node: &'a Node,
    path: YamlPath<'a>,
}

impl<'de, 'a> de::Deserializer<'de> for NodeDe<'a> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let NodeDe { node, path } = self;
        let result = match &node.value {
            NodeValue::Null => visitor.visit_unit(),
            NodeValue::Bool(b) => visitor.visit_bool(*b),
            NodeValue::Int(i) => visitor.visit_i64(*i),
            NodeValue::UInt(u) => visitor.visit_u64(*u),
            NodeValue::Float(f) => visitor.visit_f64(*f),
            NodeValue::Str(s) => visitor.visit_str(s),
            NodeValue::Seq(items) => visitor.visit_seq(SeqDe {
                items: items.iter().enumerate(),
                path: &path,
            }),
            NodeValue::Map(entries) => visitor.visit_map(MapDe {
                entries: entries.iter(),
                path: &path,
                pending: None,
            }),
        };
        result.map_err(|e| e.locate(node.pos, &path))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.value {
            NodeValue::Null => visitor
                .visit_none()
                .map_err(|e: DeError| e.locate(self.node.pos, &self.path)),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match &self.node.value {
            NodeValue::Str(s) => {
                let access: de::value::StrDeserializer<'_, DeError> =
                    s.as_str().into_deserializer();
                visitor
                    .visit_enum(access)
                    .map_err(|e: DeError| e.locate(self.node.pos, &self.path))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier
    }
}

struct SeqDe<'a, 'p> {
    items: std::iter::Enumerate<std::slice::Iter<'a, Node>>,
    path: &'p YamlPath<'a>,
}

impl<'de> SeqAccess<'de> for SeqDe<'_, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.items.next() {
            None => Ok(None),
            Some((i, node)) => {
                let path = self.path.index(i);
                seed.deserialize(NodeDe { node, path }).map(Some)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct MapDe<'a, 'p> {
    entries: std::slice::Iter<'a, Entry>,
    path: &'p YamlPath<'a>,
    pending: Option<&'a Entry>,
}

impl<'de> MapAccess<'de> for MapDe<'_, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some(entry) = self.entries.next() else {
            return Ok(None);
        };
        self.pending = Some(entry);
        seed.deserialize(KeyDe(&entry.key))
            .map(Some)
            .map_err(|e| e.locate(entry.key_pos, &self.path.key(&entry.key)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let Some(entry) = self.pending.take() else {
            return Err(de::Error::custom("a mapping value without its key"));
        };
        seed.deserialize(NodeDe {
            node: &entry.value,
            path: self.path.key(&entry.key),
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A mapping key: always a string.
struct KeyDe<'a>(&'a str);

impl<'de> de::Deserializer<'de> for KeyDe<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_str(self.0)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        a: u32,
        #[serde(default)]
        b: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        list: Vec<Inner>,
    }

    fn error(text: &str) -> DeError {
        let node = parse(text).unwrap().root.unwrap();
        from_cursor::<Outer>(&Cursor::root(&node)).unwrap_err()
    }

    #[test]
    fn locates_errors() {
        let e = error("list:\n  - a: 1\n    c: 2\n");
        assert!(e.message.starts_with("unknown field `c`"), "{e}");
        assert_eq!(e.at, Some((Pos { line: 3, column: 5 }, "list[0].c".into())));
        let e = error("list:\n  - b: x\n");
        assert_eq!(e.message, "missing field `a`");
        assert_eq!(e.at, Some((Pos { line: 2, column: 5 }, "list[0]".into())));
        let e = error("list:\n  - a: many\n");
        assert!(
            e.message.starts_with("invalid type: string \"many\""),
            "{e}"
        );
        assert_eq!(e.at, Some((Pos { line: 2, column: 8 }, "list[0].a".into())));
        let e = error("list: 3\n");
        assert_eq!(e.at.unwrap().1, "list");
    }
}
