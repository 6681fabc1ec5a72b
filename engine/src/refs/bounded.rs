//! A JSONPath evaluator whose work is bounded. jsonpath-rust builds every
//! intermediate node list in full, with a path string per node, and cannot
//! be told to stop: `$..*..*..*..*` over a deep document runs for tens of
//! seconds and gigabytes. Here the segments (names, indexes, wildcards,
//! slices, descendants `..`, lists of selectors) are evaluated one at a time
//! over lists of `&Value` (each with a compact record of where it is), every
//! node taken into a list is counted, and the evaluation stops as soon as a
//! limit is passed.
//!
//! Filter selectors `[?…]` are delegated to jsonpath-rust one node at a
//! time (the node whose children are filtered, reached from the root by its
//! singular path so that `$` inside the filter is the document), so their
//! semantics stay the library's. A filter may itself hold queries (`@..x`,
//! `$.a[*]`, `count(@.*)`): before jsonpath-rust evaluates one, every such
//! query is first run here, for each candidate, in an over-approximating
//! mode (nested filters let everything through), so the work jsonpath-rust
//! then does is already counted against the same limit.
//!
//! Results (values and their order) are jsonpath-rust's own for every path
//! that stays within the limits; the tests compare the two.

use jsonpath_rust::parser::model::{
    Comparable, Comparison, Filter, FilterAtom, FnArg, JpQuery, Segment, Selector, Test,
    TestFunction,
};
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

/// At most this many nodes are visited by one ref (every node taken into an
/// intermediate or final list, every array and object a `..` enumerates,
/// every filter candidate, and the nodes a filter's own queries visit).
pub const MAX_NODES_VISITED: usize = 1_000_000;

/// At most this many values are produced by one ref.
pub const MAX_VALUES_PRODUCED: usize = 100_000;

/// The bounds of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub nodes_visited: usize,
    pub values_produced: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            nodes_visited: MAX_NODES_VISITED,
            values_produced: MAX_VALUES_PRODUCED,
        }
    }
}

/// Which limit an evaluation passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Exceeded {
    #[error("visits more than {limit} nodes, the limit for one ref")]
    NodesVisited { limit: usize },
    #[error("produces more than {limit} values, the limit for one ref")]
    ValuesProduced { limit: usize },
}

/// Evaluates `path` over `root`, returning the matches in jsonpath-rust's
/// order, or which limit was passed.
pub fn query<'a>(
    path: &JpQuery,
    root: &'a Value,
    limits: Limits,
) -> Result<Vec<&'a Value>, Exceeded> {
    let mut eval = Eval {
        root,
        visited: 0,
        limit: limits.nodes_visited,
        steps: Vec::new(),
    };
    eval.charge(1)?;
    let start = vec![Node {
        value: root,
        at: ROOT,
    }];
    let found = eval.segments(&path.segments, start, Mode::Exact)?;
    if found.len() > limits.values_produced {
        return Err(Exceeded::ValuesProduced {
            limit: limits.values_produced,
        });
    }
    Ok(found.into_iter().map(|n| n.value).collect())
}

/// How filters are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The ref itself: filters decide, through jsonpath-rust.
    Exact,
    /// A query inside a filter, run only to count its work: every filter
    /// lets every candidate through, and is charged for the node itself as
    /// well as its children, so the count is at least jsonpath-rust's.
    Upper,
}

/// A node of the document and where it is.
#[derive(Debug, Clone, Copy)]
struct Node<'a> {
    value: &'a Value,
    /// Its last step in `Eval::steps`, or `ROOT`.
    at: usize,
}

const ROOT: usize = usize::MAX;

/// One step down from a parent.
#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Name(&'a str),
    Index(usize),
}

struct Eval<'a> {
    root: &'a Value,
    visited: usize,
    limit: usize,
    /// Where every node taken is: its parent's entry and the step from it.
    steps: Vec<(usize, Step<'a>)>,
}

impl<'a> Eval<'a> {
    fn charge(&mut self, n: usize) -> Result<(), Exceeded> {
        self.visited = self.visited.saturating_add(n);
        if self.visited > self.limit {
            return Err(Exceeded::NodesVisited { limit: self.limit });
        }
        Ok(())
    }

    /// The child of `parent` reached by `step`, recorded but not counted.
    fn child(&mut self, parent: Node<'a>, step: Step<'a>, value: &'a Value) -> Node<'a> {
        self.steps.push((parent.at, step));
        Node {
            value,
            at: self.steps.len() - 1,
        }
    }

    /// Counts the child of `parent` reached by `step` and adds it to `list`.
    fn take(
        &mut self,
        list: &mut Vec<Node<'a>>,
        parent: Node<'a>,
        step: Step<'a>,
        value: &'a Value,
    ) -> Result<(), Exceeded> {
        self.charge(1)?;
        let node = self.child(parent, step, value);
        list.push(node);
        Ok(())
    }

    /// Counts every child of `node` and adds it to `list`, in order.
    fn take_children(&mut self, list: &mut Vec<Node<'a>>, node: Node<'a>) -> Result<(), Exceeded> {
        match node.value {
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.take(list, node, Step::Index(i), v)?;
                }
            }
            Value::Object(map) => {
                for (k, v) in map {
                    self.take(list, node, Step::Name(k), v)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn segments(
        &mut self,
        segments: &[Segment],
        start: Vec<Node<'a>>,
        mode: Mode,
    ) -> Result<Vec<Node<'a>>, Exceeded> {
        let mut list = start;
        for segment in segments {
            list = self.segment(segment, &list, mode)?;
        }
        Ok(list)
    }

    fn segment(
        &mut self,
        segment: &Segment,
        list: &[Node<'a>],
        mode: Mode,
    ) -> Result<Vec<Node<'a>>, Exceeded> {
        match segment {
            Segment::Selector(selector) => self.selector(selector, list, mode),
            // Each selector over the whole list, one after the other.
            Segment::Selectors(selectors) => {
                let mut out = Vec::new();
                for selector in selectors {
                    out.extend(self.selector(selector, list, mode)?);
                }
                Ok(out)
            }
            Segment::Descendant(inner) => {
                let nodes = self.descendants(list)?;
                self.segment(inner, &nodes, mode)
            }
        }
    }

    /// Every array and object at or below each node, depth first, parents
    /// before their children (scalars hold nothing a selector could pick).
    fn descendants(&mut self, list: &[Node<'a>]) -> Result<Vec<Node<'a>>, Exceeded> {
        let mut out = Vec::new();
        let mut stack: Vec<Node<'a>> = Vec::new();
        for &node in list {
            if !is_container(node.value) {
                continue;
            }
            stack.push(node);
            while let Some(n) = stack.pop() {
                self.charge(1)?;
                out.push(n);
                match n.value {
                    Value::Array(items) => {
                        for (i, v) in items.iter().enumerate().rev() {
                            if is_container(v) {
                                let c = self.child(n, Step::Index(i), v);
                                stack.push(c);
                            }
                        }
                    }
                    Value::Object(map) => {
                        for (k, v) in map.iter().rev() {
                            if is_container(v) {
                                let c = self.child(n, Step::Name(k), v);
                                stack.push(c);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(out)
    }

    fn selector(
        &mut self,
        selector: &Selector,
        list: &[Node<'a>],
        mode: Mode,
    ) -> Result<Vec<Node<'a>>, Exceeded> {
        let mut out = Vec::new();
        for &node in list {
            match (selector, node.value) {
                (Selector::Name(name), Value::Object(map)) => {
                    if let Some((k, v)) = map.get_key_value(name.as_str()) {
                        self.take(&mut out, node, Step::Name(k), v)?;
                    }
                }
                (Selector::Index(index), Value::Array(items)) => {
                    if let Some(i) = resolve_index(*index, items.len()) {
                        self.take(&mut out, node, Step::Index(i), &items[i])?;
                    }
                }
                (Selector::Wildcard, _) => self.take_children(&mut out, node)?,
                (Selector::Slice(start, end, step), Value::Array(items)) => {
                    for i in slice_indexes(*start, *end, *step, items.len()) {
                        self.take(&mut out, node, Step::Index(i), &items[i])?;
                    }
                }
                (Selector::Filter(filter), _) => self.filter(filter, node, mode, &mut out)?,
                _ => {}
            }
        }
        Ok(out)
    }

    /// The children of `node` that pass `filter`.
    fn filter(
        &mut self,
        filter: &Filter,
        node: Node<'a>,
        mode: Mode,
        out: &mut Vec<Node<'a>>,
    ) -> Result<(), Exceeded> {
        if !is_container(node.value) {
            return Ok(());
        }
        if mode == Mode::Upper {
            self.filter_work(filter, node.value)?;
        }
        let mut candidates = Vec::new();
        self.take_children(&mut candidates, node)?;
        for c in &candidates {
            self.filter_work(filter, c.value)?;
        }
        match mode {
            Mode::Upper => out.extend(candidates),
            Mode::Exact => {
                // jsonpath-rust filters the node's children, reached from
                // the root so that `$` in the filter is the document.
                let mut segments = self.location(node.at);
                self.charge(segments.len())?;
                segments.push(Segment::Selector(Selector::Filter(filter.clone())));
                let passed = js_path_process(&JpQuery::new(segments), self.root)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|r| r.val());
                // They come in the children's order: keep the same nodes.
                let mut remaining = candidates.into_iter();
                for v in passed {
                    if let Some(c) = remaining.find(|c| std::ptr::eq(c.value, v)) {
                        out.push(c);
                    }
                }
            }
        }
        Ok(())
    }

    /// The singular path from the root to the node at `at`.
    fn location(&self, mut at: usize) -> Vec<Segment> {
        let mut path = Vec::new();
        while at != ROOT {
            let (parent, step) = self.steps[at];
            path.push(Segment::Selector(match step {
                Step::Name(k) => Selector::Name(k.to_string()),
                Step::Index(i) => Selector::Index(i64::try_from(i).unwrap_or(i64::MAX)),
            }));
            at = parent;
        }
        path.reverse();
        path
    }

    /// Counts the work of the queries inside `filter` for one candidate.
    fn filter_work(&mut self, filter: &Filter, candidate: &'a Value) -> Result<(), Exceeded> {
        match filter {
            Filter::Or(parts) | Filter::And(parts) => {
                for part in parts {
                    self.filter_work(part, candidate)?;
                }
                Ok(())
            }
            Filter::Atom(FilterAtom::Filter { expr, .. }) => self.filter_work(expr, candidate),
            Filter::Atom(FilterAtom::Test { expr, .. }) => self.test_work(expr, candidate),
            Filter::Atom(FilterAtom::Comparison(cmp)) => {
                let (left, right) = comparison_sides(cmp);
                self.comparable_work(left, candidate)?;
                self.comparable_work(right, candidate)
            }
        }
    }

    fn comparable_work(&mut self, c: &Comparable, candidate: &'a Value) -> Result<(), Exceeded> {
        match c {
            Comparable::Function(f) => self.function_work(f, candidate),
            // A literal, or a singular query: a few steps, no lists.
            Comparable::Literal(_) | Comparable::SingularQuery(_) => self.charge(1),
        }
    }

    fn test_work(&mut self, test: &Test, candidate: &'a Value) -> Result<(), Exceeded> {
        let (segments, from) = match test {
            Test::RelQuery(segments) => (segments, candidate),
            Test::AbsQuery(q) => (&q.segments, self.root),
            Test::Function(f) => return self.function_work(f, candidate),
        };
        // Locations are not needed to count: start a fresh record and drop
        // what this query added to it afterwards.
        let mark = self.steps.len();
        let start = vec![Node {
            value: from,
            at: ROOT,
        }];
        self.segments(segments, start, Mode::Upper)?;
        self.steps.truncate(mark);
        Ok(())
    }

    fn function_work(&mut self, f: &TestFunction, candidate: &'a Value) -> Result<(), Exceeded> {
        let args: Vec<&FnArg> = match f {
            TestFunction::Custom(_, args) => args.iter().collect(),
            TestFunction::Length(a) => vec![a.as_ref()],
            TestFunction::Value(a) | TestFunction::Count(a) => vec![a],
            TestFunction::Search(a, b) | TestFunction::Match(a, b) => vec![a, b],
        };
        self.charge(1)?;
        for arg in args {
            match arg {
                FnArg::Literal(_) => {}
                FnArg::Test(t) => self.test_work(t, candidate)?,
                FnArg::Filter(inner) => self.filter_work(inner, candidate)?,
            }
        }
        Ok(())
    }
}

fn is_container(v: &Value) -> bool {
    matches!(v, Value::Array(_) | Value::Object(_))
}

fn comparison_sides(cmp: &Comparison) -> (&Comparable, &Comparable) {
    match cmp {
        Comparison::Eq(l, r)
        | Comparison::Ne(l, r)
        | Comparison::Gt(l, r)
        | Comparison::Gte(l, r)
        | Comparison::Lt(l, r)
        | Comparison::Lte(l, r) => (l, r),
    }
}

/// An index counted from the start (`0`) or the end (`-1`).
fn resolve_index(index: i64, len: usize) -> Option<usize> {
    if index >= 0 {
        usize::try_from(index).ok().filter(|&i| i < len)
    } else {
        let back = usize::try_from(index.unsigned_abs()).ok()?;
        len.checked_sub(back)
    }
}

/// The positions `[start:end:step]` selects in an array of `len` elements,
/// as RFC 9535 §2.3.4.2 defines them (a zero step selects nothing).
fn slice_indexes(
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> impl Iterator<Item = usize> {
    let len = i128::try_from(len).unwrap_or(i128::MAX);
    let step = i128::from(step.unwrap_or(1));
    let normal = |i: i64| {
        let i = i128::from(i);
        if i >= 0 {
            i
        } else {
            len + i
        }
    };
    // (first, stop before, step): positions first, first+step, … not reaching stop.
    let (first, stop) = if step > 0 {
        let lower = normal(start.unwrap_or(0)).clamp(0, len);
        let upper = end.map_or(len, normal).clamp(0, len);
        (lower, upper)
    } else if step < 0 {
        let upper = start.map_or(len - 1, normal).clamp(-1, len - 1);
        let lower = end.map_or(-1, normal).clamp(-1, len - 1);
        (upper, lower)
    } else {
        (0, 0)
    };
    let mut at = first;
    std::iter::from_fn(move || {
        let inside = if step > 0 { at < stop } else { at > stop };
        if step == 0 || !inside {
            return None;
        }
        let here = at;
        at += step;
        usize::try_from(here).ok()
    })
}
