//! `_fields` projection (SPEC §3.5): every item is cut down to the listed
//! dot-paths, keeping nesting and mapping over arrays on the way. Works on
//! raw items, touching only the parts the paths name; keys are quoted once
//! when the projection is built.

use dragnet_core::json::{self, Kind, RawItem};
use dragnet_core::json_rows::Rows;
use dragnet_core::json_scan::{self, Fields};

/// A validated list of dot-paths, as a tree (`customer.name` and
/// `customer.email` share the `customer` node).
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    paths: Vec<String>,
    root: Node,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Node {
    /// Children in first-mention order; a leaf has none.
    children: Vec<Child>,
    /// Index into `paths` when a path ends here.
    ends: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
struct Child {
    key: String,
    /// `"key":`, written once.
    quoted: String,
    node: Node,
}

/// Paths that matched nothing on any item, with what the items hold instead.
#[derive(Debug, Clone)]
pub struct UnmatchedFields {
    pub fields: Vec<String>,
    /// The real top-level keys of the items (union, first-seen order).
    pub available_keys: Vec<String>,
    /// One unprojected item, for the caller to see the real shape.
    pub sample_item: Option<RawItem>,
}

/// A `_fields` path that is not a dot-path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}` is not a dot-path like `customer.name`")]
pub struct BadFieldPath {
    pub path: String,
}

/// Which paths matched some item so far.
#[derive(Debug, Clone)]
pub struct Matched(Vec<bool>);

impl Matched {
    /// Adds what another part of the same set matched.
    pub fn merge(&mut self, other: &Matched) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine |= *theirs;
        }
    }
}

impl Projection {
    /// Parses dot-paths; an empty path or an empty segment is an error.
    pub fn new(paths: &[String]) -> Result<Self, BadFieldPath> {
        let mut root = Node::default();
        for (index, path) in paths.iter().enumerate() {
            let path = path.trim();
            if path.is_empty() || path.split('.').any(str::is_empty) {
                return Err(BadFieldPath {
                    path: path.to_string(),
                });
            }
            let mut node = &mut root;
            for segment in path.split('.') {
                let pos = match node.children.iter().position(|c| c.key == segment) {
                    Some(pos) => pos,
                    None => {
                        let mut quoted = String::with_capacity(segment.len() + 3);
                        json::write_str(&mut quoted, segment);
                        quoted.push(':');
                        node.children.push(Child {
                            key: segment.to_string(),
                            quoted,
                            node: Node::default(),
                        });
                        node.children.len() - 1
                    }
                };
                node = &mut node.children[pos].node;
            }
            node.ends.push(index);
        }
        Ok(Projection {
            paths: paths.iter().map(|p| p.trim().to_string()).collect(),
            root,
        })
    }

    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// A fresh record of which paths matched.
    pub fn matched(&self) -> Matched {
        Matched(vec![false; self.paths.len()])
    }

    /// Appends the projection of one item (its top level already parsed
    /// into `obj` when it is an object) to `rows`.
    pub fn project_into(
        &self,
        item: &str,
        obj: Option<&Fields>,
        rows: &mut Rows,
        matched: &mut Matched,
    ) {
        rows.push_with(|out| match obj {
            Some(obj) => project_object(obj, &self.root, out, &mut matched.0),
            None => project(item, &self.root, out, &mut matched.0),
        });
    }

    /// The report on paths that matched no item, looking at `items` for
    /// the keys they do have.
    pub fn unmatched<'a>(
        &self,
        matched: &Matched,
        items: impl Iterator<Item = &'a str>,
    ) -> Option<UnmatchedFields> {
        let fields: Vec<String> = self
            .paths
            .iter()
            .zip(&matched.0)
            .filter(|(_, m)| !**m)
            .map(|(p, _)| p.clone())
            .collect();
        if fields.is_empty() {
            return None;
        }
        let mut sample: Option<RawItem> = None;
        let mut keys: Vec<String> = Vec::new();
        for item in items.take(50) {
            if sample.is_none() {
                sample = Some(json::to_raw(item.to_string()));
            }
            if let Some(obj) = json_scan::object(item) {
                for k in obj.keys() {
                    if !keys.iter().any(|have| have == k) {
                        keys.push(k.to_string());
                    }
                }
            }
        }
        Some(UnmatchedFields {
            fields,
            available_keys: keys,
            sample_item: sample,
        })
    }

    /// Projects every item; also reports the paths that matched no item.
    pub fn apply<'a, I>(&self, items: I) -> (Rows, Option<UnmatchedFields>)
    where
        I: IntoIterator<Item = &'a str> + Clone,
    {
        let mut rows = Rows::default();
        let mut matched = self.matched();
        for item in items.clone() {
            let obj = json_scan::object(item);
            self.project_into(item, obj.as_ref(), &mut rows, &mut matched);
        }
        let report = self.unmatched(&matched, items.into_iter());
        (rows, report)
    }
}

/// Writes the projection of `value` through `node`.
fn project(value: &str, node: &Node, out: &mut String, matched: &mut [bool]) {
    match json::kind(value) {
        Kind::Object => match json_scan::object(value) {
            Some(obj) => project_object(&obj, node, out, matched),
            None => out.push_str("null"),
        },
        Kind::Array => {
            let elements = json_scan::array(value).unwrap_or_default();
            out.push('[');
            for (i, element) in elements.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                project(element, node, out, matched);
            }
            out.push(']');
        }
        // A path that goes on past a scalar resolves to nothing.
        _ => out.push_str("null"),
    }
}

fn project_object(obj: &Fields, node: &Node, out: &mut String, matched: &mut [bool]) {
    out.push('{');
    for (i, child) in node.children.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&child.quoted);
        match obj.get(&child.key) {
            Some(inner) => {
                mark(&child.node, matched);
                if child.node.children.is_empty() {
                    out.push_str(inner);
                } else {
                    project(inner, &child.node, out, matched);
                }
            }
            None => out.push_str("null"),
        }
    }
    out.push('}');
}

/// A path counts as matched once its last segment was found on some item.
fn mark(node: &Node, matched: &mut [bool]) {
    for &i in &node.ends {
        if let Some(m) = matched.get_mut(i) {
            *m = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Vec<Box<serde_json::value::RawValue>> {
        serde_json::from_str(text).unwrap()
    }
    fn project_all(paths: &[&str], text: &str) -> (Vec<String>, Option<UnmatchedFields>) {
        let p = Projection::new(&paths.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        let items = items(text);
        let (out, unmatched) = p.apply(items.iter().map(|b| b.get()));
        (out.iter().map(str::to_string).collect(), unmatched)
    }

    #[test]
    fn keeps_nesting_and_maps_arrays() {
        let (out, unmatched) = project_all(
            &["id", "customer.name", "lines.sku"],
            r#"[{"id":1,"total":5,"customer":{"name":"Ann","email":"a@x"},
                "lines":[{"sku":"A","qty":1},{"sku":"B","qty":2}]}]"#,
        );
        assert_eq!(
            out[0],
            r#"{"id":1,"customer":{"name":"Ann"},"lines":[{"sku":"A"},{"sku":"B"}]}"#
        );
        assert!(unmatched.is_none());
    }

    #[test]
    fn missing_paths_are_null_and_reported_when_unmatched_everywhere() {
        let (out, unmatched) = project_all(
            &["id", "custmer.name", "note"],
            r#"[{"id":1,"note":"x"},{"id":2}]"#,
        );
        assert_eq!(out[0], r#"{"id":1,"custmer":null,"note":"x"}"#);
        assert_eq!(out[1], r#"{"id":2,"custmer":null,"note":null}"#);
        let u = unmatched.unwrap();
        assert_eq!(u.fields, vec!["custmer.name"]);
        assert_eq!(u.available_keys, vec!["id", "note"]);
        assert_eq!(u.sample_item.unwrap().get(), r#"{"id":1,"note":"x"}"#);
    }

    #[test]
    fn rejects_bad_paths() {
        assert!(Projection::new(&["a..b".to_string()]).is_err());
        assert!(Projection::new(&["".to_string()]).is_err());
    }

    #[test]
    fn escaped_keys_and_duplicate_prefixes() {
        let (out, _) = project_all(
            &["a.b", "a.c", "q\"k"],
            r#"[{"a":{"b":1,"c":2,"d":3},"q\"k":true}]"#,
        );
        assert_eq!(out[0], r#"{"a":{"b":1,"c":2},"q\"k":true}"#);
        // every row is valid JSON
        assert!(serde_json::from_str::<serde_json::Value>(&out[0]).is_ok());
    }
}
