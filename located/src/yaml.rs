//! A positioned YAML tree: yaml-rust2's event parser drives a small builder
//! that keeps the line and column of every node and mapping key. Plain
//! scalars resolve as in YAML 1.2's core schema; anchors and aliases are
//! expanded (with a size cap), nesting is capped, and a syntax error becomes
//! one problem at the scanner's position. Non-fatal problems (duplicate or
//! complex keys) are collected beside the tree.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Deepest nesting accepted; deeper input is refused, not recursed into.
pub const MAX_DEPTH: usize = 64;
/// Most nodes a document may expand to (aliases included).
pub const MAX_NODES: usize = 200_000;

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    pub const START: Pos = Pos { line: 1, column: 1 };

    fn from_marker(m: &Marker) -> Pos {
        Pos {
            line: m.line().max(1),
            column: m.col() + 1,
        }
    }
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub value: NodeValue,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeValue {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A mapping entry; keys are plain strings.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_pos: Pos,
    pub value: Node,
}

/// A problem found while parsing, at a position.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub pos: Pos,
    pub message: String,
}

/// What parsing yields: the document (None for an empty file) and the
/// non-fatal problems.
#[derive(Debug)]
pub struct Parsed {
    pub root: Option<Node>,
    pub problems: Vec<Problem>,
}

/// Parses one YAML document. `Err` holds the one fatal problem.
pub fn parse(text: &str) -> Result<Parsed, Problem> {
    let mut parser = Parser::new_from_str(text);
    let mut b = Builder::default();
    loop {
        let (event, marker) = parser.next_token().map_err(|e| Problem {
            pos: Pos::from_marker(e.marker()),
            message: format!("invalid YAML: {}", e.info()),
        })?;
        let pos = Pos::from_marker(&marker);
        match event {
            Event::StreamEnd => break,
            Event::DocumentStart => {
                b.documents += 1;
                if b.documents > 1 {
                    return Err(Problem {
                        pos,
                        message: "a workflow file holds one YAML document; remove the second `---`"
                            .into(),
                    });
                }
            }
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
            Event::Alias(id) => b.alias(id, pos)?,
            Event::Scalar(text, style, anchor, tag) => {
                b.scalar(text, style, anchor, tag.as_ref(), pos)?
            }
            Event::SequenceStart(anchor, _) => b.open(Frame::seq(anchor, pos))?,
            Event::MappingStart(anchor, _) => b.open(Frame::map(anchor, pos))?,
            Event::SequenceEnd | Event::MappingEnd => b.close()?,
        }
    }
    Ok(Parsed {
        root: b.root,
        problems: b.problems,
    })
}

#[derive(Debug)]
struct Frame {
    anchor: usize,
    pos: Pos,
    kind: FrameKind,
}

#[derive(Debug)]
enum FrameKind {
    Seq(Vec<Node>),
    Map {
        entries: Vec<Entry>,
        /// The key read, waiting for its value; None for a complex key.
        key: Option<Option<(String, Pos)>>,
    },
}

impl Frame {
    fn seq(anchor: usize, pos: Pos) -> Frame {
        Frame {
            anchor,
            pos,
            kind: FrameKind::Seq(Vec::new()),
        }
    }

    fn map(anchor: usize, pos: Pos) -> Frame {
        Frame {
            anchor,
            pos,
            kind: FrameKind::Map {
                entries: Vec::new(),
                key: None,
            },
        }
    }
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    anchors: HashMap<usize, (Node, usize)>,
    nodes: usize,
    documents: usize,
    problems: Vec<Problem>,
}

impl Builder {
    fn count(&mut self, n: usize, pos: Pos) -> Result<(), Problem> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(Problem {
                pos,
                message: format!("the document expands to more than {MAX_NODES} nodes"),
            });
        }
        Ok(())
    }

    fn open(&mut self, frame: Frame) -> Result<(), Problem> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Problem {
                pos: frame.pos,
                message: format!("nesting deeper than {MAX_DEPTH} levels"),
            });
        }
        self.count(1, frame.pos)?;
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self) -> Result<(), Problem> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        // A block collection's start event sits after its first key or
        // dash; the collection starts where its first entry does.
        let (value, first) = match frame.kind {
            FrameKind::Seq(items) => {
                let first = items.first().map(|n| n.pos);
                (NodeValue::Seq(items), first)
            }
            FrameKind::Map { entries, .. } => {
                let first = entries.first().map(|e| e.key_pos);
                (NodeValue::Map(entries), first)
            }
        };
        let pos = match first {
            Some(p) if (p.line, p.column) < (frame.pos.line, frame.pos.column) => p,
            _ => frame.pos,
        };
        let node = Node { pos, value };
        self.finish(node, frame.anchor, None)
    }

    fn scalar(
        &mut self,
        text: String,
        style: TScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        pos: Pos,
    ) -> Result<(), Problem> {
        self.count(1, pos)?;
        let value = resolve(&text, style, tag);
        let node = Node { pos, value };
        self.finish(node, anchor, Some(text))
    }

    fn alias(&mut self, id: usize, pos: Pos) -> Result<(), Problem> {
        let Some((node, size)) = self.anchors.get(&id).cloned() else {
            return Err(Problem {
                pos,
                message: "alias to an unknown anchor".into(),
            });
        };
        self.count(size, pos)?;
        self.finish(node, 0, None)
    }

    /// Puts a finished node into its parent; `raw` is a scalar's text, used
    /// when the node is a mapping key.
    fn finish(&mut self, node: Node, anchor: usize, raw: Option<String>) -> Result<(), Problem> {
        if anchor > 0 {
            let size = size(&node);
            self.anchors.insert(anchor, (node.clone(), size));
        }
        let Some(parent) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        match &mut parent.kind {
            FrameKind::Seq(items) => items.push(node),
            FrameKind::Map { entries, key } => match key.take() {
                None => {
                    let read = match (raw, &node.value) {
                        (Some(text), _) => Some((text, node.pos)),
                        (None, NodeValue::Str(s)) => Some((s.clone(), node.pos)),
                        _ => {
                            self.problems.push(Problem {
                                pos: node.pos,
                                message: "mapping keys must be plain strings".into(),
                            });
                            None
                        }
                    };
                    *key = Some(read);
                }
                Some(None) => {}
                Some(Some((k, key_pos))) => {
                    if let Some(first) = entries.iter().find(|e| e.key == k) {
                        self.problems.push(Problem {
                            pos: key_pos,
                            message: format!(
                                "duplicate key `{k}` (first at line {}); keep one",
                                first.key_pos.line
                            ),
                        });
                    } else {
                        entries.push(Entry {
                            key: k,
                            key_pos,
                            value: node,
                        });
                    }
                }
            },
        }
        Ok(())
    }
}

fn size(node: &Node) -> usize {
    let mut n = 0usize;
    let mut todo = vec![node];
    while let Some(next) = todo.pop() {
        n += 1;
        match &next.value {
            NodeValue::Seq(items) => todo.extend(items.iter()),
            NodeValue::Map(entries) => todo.extend(entries.iter().map(|e| &e.value)),
            _ => {}
        }
    }
    n
}

/// YAML 1.2 core schema resolution; quoted scalars are strings, `!!str`
/// and friends are honoured.
fn resolve(text: &str, style: TScalarStyle, tag: Option<&Tag>) -> NodeValue {
    if let Some(tag) = tag {
        if tag.handle == "tag:yaml.org,2002:" {
            match tag.suffix.as_str() {
                "str" => return NodeValue::Str(text.to_string()),
                "bool" | "int" | "float" | "null" => return plain(text),
                _ => {}
            }
        }
    }
    if style != TScalarStyle::Plain {
        return NodeValue::Str(text.to_string());
    }
    plain(text)
}

fn plain(text: &str) -> NodeValue {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return NodeValue::Null,
        "true" | "True" | "TRUE" => return NodeValue::Bool(true),
        "false" | "False" | "FALSE" => return NodeValue::Bool(false),
        _ => {}
    }
    let radix = |prefix: &str, radix: u32| {
        text.strip_prefix(prefix)
            .and_then(|digits| i64::from_str_radix(digits, radix).ok())
    };
    if let Some(i) = radix("0x", 16).or_else(|| radix("0o", 8)) {
        return NodeValue::Int(i);
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = text.parse::<i64>() {
            return NodeValue::Int(i);
        }
        if let Ok(u) = digits.parse::<u64>() {
            if !text.starts_with('-') {
                return NodeValue::UInt(u);
            }
        }
    }
    let numeric = digits.bytes().any(|b| b.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if numeric {
        if let Ok(f) = text.parse::<f64>() {
            if f.is_finite() {
                return NodeValue::Float(f);
            }
        }
    }
    NodeValue::Str(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        parse(text).unwrap().root.unwrap()
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let node = root("name: x\nsteps:\n  - id: a\n    needs: [b]\n");
        let NodeValue::Map(entries) = &node.value else {
            panic!("not a map")
        };
        assert_eq!(entries[1].key, "steps");
        assert_eq!(entries[1].key_pos, Pos { line: 2, column: 1 });
        let NodeValue::Seq(steps) = &entries[1].value.value else {
            panic!("not a seq")
        };
        let NodeValue::Map(step) = &steps[0].value else {
            panic!("not a map")
        };
        assert_eq!(step[0].value.pos, Pos { line: 3, column: 9 });
        assert_eq!(step[1].key_pos, Pos { line: 4, column: 5 });
        assert_eq!(steps[0].pos, Pos { line: 3, column: 5 });
        assert_eq!(entries[1].value.pos.line, 3);
        let flow = root("{a: [1, 2]}");
        assert_eq!(flow.pos, Pos { line: 1, column: 1 });
    }

    #[test]
    fn resolves_scalars() {
        assert_eq!(plain("42"), NodeValue::Int(42));
        assert_eq!(plain("-7"), NodeValue::Int(-7));
        assert_eq!(plain("18446744073709551615"), NodeValue::UInt(u64::MAX));
        assert_eq!(plain("1.5"), NodeValue::Float(1.5));
        assert_eq!(plain("0x1F"), NodeValue::Int(31));
        assert_eq!(plain("yes"), NodeValue::Str("yes".into()));
        assert_eq!(plain("inf"), NodeValue::Str("inf".into()));
        assert_eq!(plain(".inf"), NodeValue::Str(".inf".into()));
        assert_eq!(plain("~"), NodeValue::Null);
        let quoted = root("a: '42'\n");
        let NodeValue::Map(e) = quoted.value else {
            panic!()
        };
        assert_eq!(e[0].value.value, NodeValue::Str("42".into()));
    }

    #[test]
    fn reports_duplicates_and_syntax_errors() {
        let parsed = parse("a: 1\na: 2\n").unwrap();
        assert_eq!(parsed.problems.len(), 1);
        assert_eq!(parsed.problems[0].pos, Pos { line: 2, column: 1 });
        let err = parse("a: [1, 2\n").unwrap_err();
        assert!(err.message.starts_with("invalid YAML"), "{err:?}");
        assert!(parse("").unwrap().root.is_none());
    }

    #[test]
    fn expands_aliases_within_limits() {
        let node = root("a: &x {k: 1}\nb: *x\n");
        let NodeValue::Map(e) = node.value else {
            panic!()
        };
        assert_eq!(e[0].value.value, e[1].value.value);
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        assert!(parse(&bomb).is_err());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).is_err());
    }
}
