//! A node of the positioned tree together with its YAML path
//! (`steps[2].loop.for_each.key`): how validation walks the file and
//! locates what it complains about. Also turns nodes into JSON values.

use serde_json::{Map, Number, Value};

use super::yaml::{Entry, Node, NodeValue, Pos};
use crate::path::YamlPath;
use crate::Location;

/// A node and the path that leads to it (written out when asked).
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    pub node: &'a Node,
    pub path: YamlPath<'a>,
}

impl<'a> Cursor<'a> {
    pub fn root(node: &'a Node) -> Cursor<'a> {
        Cursor {
            node,
            path: YamlPath::root(),
        }
    }

    pub fn pos(&self) -> Pos {
        self.node.pos
    }

    pub fn location(&self) -> Location {
        Location {
            line: self.node.pos.line,
            column: self.node.pos.column,
            path: self.path.to_string(),
        }
    }

    /// The value under `key`, when this is a mapping holding it.
    pub fn key(&self, key: &str) -> Option<Cursor<'a>> {
        self.entry(key).map(|e| self.child(e))
    }

    /// A key's own position and path, when present.
    pub fn key_site(&self, key: &str) -> Option<(Pos, String)> {
        self.entry(key)
            .map(|e| (e.key_pos, self.path.key(&e.key).to_string()))
    }

    /// The entry holding `key`, found before any path is written (a lookup
    /// runs for every key a step may have, most of them absent).
    fn entry(&self, key: &str) -> Option<&'a Entry> {
        match &self.node.value {
            NodeValue::Map(entries) => entries.iter().find(|e| e.key == key),
            _ => None,
        }
    }

    fn child(&self, e: &'a Entry) -> Cursor<'a> {
        Cursor {
            node: &e.value,
            path: self.path.key(&e.key),
        }
    }

    /// The keys of a mapping and their positions, without the paths
    /// `entries` writes (nothing for other nodes).
    pub fn keys(&self) -> impl Iterator<Item = (&'a str, Pos)> + '_ {
        let entries: &'a [_] = match &self.node.value {
            NodeValue::Map(entries) => entries,
            _ => &[],
        };
        entries
            .iter()
            .map(|e: &'a Entry| (e.key.as_str(), e.key_pos))
    }

    /// Entries of a mapping (nothing for other nodes).
    pub fn entries(&self) -> impl Iterator<Item = (&'a str, Pos, Cursor<'a>)> + '_ {
        let entries: &'a [_] = match &self.node.value {
            NodeValue::Map(entries) => entries,
            _ => &[],
        };
        entries
            .iter()
            .map(move |e| (e.key.as_str(), e.key_pos, self.child(e)))
    }

    /// Items of a sequence (nothing for other nodes).
    pub fn items(&self) -> impl Iterator<Item = Cursor<'a>> + '_ {
        let items: &'a [Node] = match &self.node.value {
            NodeValue::Seq(items) => items,
            _ => &[],
        };
        items.iter().enumerate().map(move |(i, node)| Cursor {
            node,
            path: self.path.index(i),
        })
    }

    pub fn is_map(&self) -> bool {
        matches!(self.node.value, NodeValue::Map(_))
    }

    pub fn is_seq(&self) -> bool {
        matches!(self.node.value, NodeValue::Seq(_))
    }

    pub fn is_null(&self) -> bool {
        matches!(self.node.value, NodeValue::Null)
    }

    pub fn as_str(&self) -> Option<&'a str> {
        match &self.node.value {
            NodeValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as JSON.
    pub fn to_json(&self) -> Value {
        to_json(self.node)
    }
}

/// A short description of a node's kind for messages (`a string "x"`).
pub fn describe(node: &Node) -> String {
    match &node.value {
        NodeValue::Null => "null".into(),
        NodeValue::Bool(b) => format!("boolean {b}"),
        NodeValue::Int(i) => format!("integer {i}"),
        NodeValue::UInt(u) => format!("integer {u}"),
        NodeValue::Float(f) => format!("number {f}"),
        NodeValue::Str(s) => format!("string {}", Value::String(s.clone())),
        NodeValue::Seq(_) => "a list".into(),
        NodeValue::Map(_) => "a mapping".into(),
    }
}

/// Converts a node to JSON; the tree is depth-capped, so this recursion is
/// bounded.
pub fn to_json(node: &Node) -> Value {
    match &node.value {
        NodeValue::Null => Value::Null,
        NodeValue::Bool(b) => Value::Bool(*b),
        NodeValue::Int(i) => Value::Number((*i).into()),
        NodeValue::UInt(u) => Value::Number((*u).into()),
        NodeValue::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
        NodeValue::Str(s) => Value::String(s.clone()),
        NodeValue::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        NodeValue::Map(entries) => {
            let mut map = Map::new();
            for e in entries {
                map.insert(e.key.clone(), to_json(&e.value));
            }
            Value::Object(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse;

    #[test]
    fn builds_paths() {
        let node = parse("steps:\n  - id: a\n    'odd key': 1\n")
            .unwrap()
            .root
            .unwrap();
        let root = Cursor::root(&node);
        let step = root.key("steps").unwrap().items().next().unwrap();
        assert_eq!(step.path.to_string(), "steps[0]");
        assert_eq!(step.key("id").unwrap().path.to_string(), "steps[0].id");
        assert_eq!(
            step.key("odd key").unwrap().path.to_string(),
            "steps[0][\"odd key\"]"
        );
        assert_eq!(step.to_json(), serde_json::json!({"id": "a", "odd key": 1}));
    }
}
