//! Checks over all steps together: ids unique, every step named in `needs`,
//! `then`, `else` or a `$.steps.<id>` ref exists (with a "did you mean"),
//! no step waits for itself, and no cycle over needs, refs and branch
//! edges. A cycle is printed `a -> b -> a` ("a waits for b") and located at
//! its first step in file order.

use std::collections::{HashMap, VecDeque};

use petgraph::graph::{DiGraph, NodeIndex};

use super::context::Ctx;
use super::diagnostic::{list, suggest};
use super::steps::Draft;
use super::yaml::Pos;

pub fn check(cx: &mut Ctx, drafts: &[Draft]) {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, d) in drafts.iter().enumerate() {
        let Some(id) = d.id.as_deref() else { continue };
        match first.get(id) {
            Some(&j) => {
                let other = &drafts[j];
                cx.at(
                    d.id_pos,
                    format!("{}.id", d.location.path),
                    format!(
                        "duplicate step id `{id}`: {} (line {}) and {} (line {}) both use it; rename one",
                        other.location.path, other.id_pos.line, d.location.path, d.id_pos.line
                    ),
                );
            }
            None => {
                first.insert(id, i);
            }
        }
    }
    let ids: Vec<&str> = drafts.iter().filter_map(|d| d.id.as_deref()).collect();
    let mut graph: DiGraph<usize, ()> = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..drafts.len()).map(|i| graph.add_node(i)).collect();
    for (i, d) in drafts.iter().enumerate() {
        let me = d.id.as_deref();
        let mut edge = |cx: &mut Ctx,
                        name: &str,
                        pos: Pos,
                        path: &dyn std::fmt::Display,
                        what: String,
                        waiter: bool| {
            match first.get(name) {
                None => {
                    let hint = suggest(name, ids.iter().copied(), || {
                        format!("; step ids are: {}", list(&ids))
                    });
                    cx.at(
                        pos,
                        path,
                        format!("{what} names unknown step `{name}`{hint}"),
                    );
                }
                Some(_) if Some(name) == me => {
                    cx.at(
                        pos,
                        path,
                        format!("step `{name}` cannot depend on itself ({what})"),
                    );
                }
                Some(&j) if first.get(me.unwrap_or_default()) == Some(&i) => {
                    let (from, to) = if waiter { (i, j) } else { (j, i) };
                    graph.update_edge(nodes[from], nodes[to], ());
                }
                Some(_) => {}
            }
        };
        for n in &d.needs {
            edge(cx, &n.name, n.pos, &n.path, "`needs`".into(), true);
        }
        for r in &d.refs {
            edge(
                cx,
                &r.step,
                r.pos,
                &r.path,
                format!("ref `{}`", r.text),
                true,
            );
        }
        for t in &d.targets {
            edge(cx, &t.name, t.pos, &t.path, format!("`{}`", t.role), false);
        }
    }
    for component in petgraph::algo::tarjan_scc(&graph) {
        if component.len() < 2 {
            continue;
        }
        let Some(&start) = component.iter().min_by_key(|n| graph[**n]) else {
            continue;
        };
        let cycle = shortest_cycle(&graph, start, &component);
        let names: Vec<&str> = cycle
            .iter()
            .map(|n| drafts[graph[*n]].id.as_deref().unwrap_or("?"))
            .collect();
        let d = &drafts[graph[start]];
        cx.at(
            d.location_pos(),
            &d.location.path,
            format!(
                "dependency cycle: {} (each step waits for the next); remove one of these needs, refs or branch targets",
                names.join(" -> ")
            ),
        );
    }
}

impl Draft<'_> {
    fn location_pos(&self) -> Pos {
        Pos {
            line: self.location.line,
            column: self.location.column,
        }
    }
}

/// The shortest path from `start` back to itself inside `component`, both
/// ends included.
fn shortest_cycle(
    graph: &DiGraph<usize, ()>,
    start: NodeIndex,
    component: &[NodeIndex],
) -> Vec<NodeIndex> {
    let mut parent: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        let mut next: Vec<NodeIndex> = graph.neighbors(n).collect();
        next.sort_by_key(|m| graph[*m]);
        for m in next {
            if !component.contains(&m) {
                continue;
            }
            if m == start {
                let mut path = vec![start, n];
                let mut at = n;
                while let Some(&up) = parent.get(&at) {
                    at = up;
                    path.push(at);
                }
                path.reverse();
                let mut cycle = vec![start];
                cycle.extend(path.into_iter().skip(1));
                return cycle;
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = parent.entry(m) {
                slot.insert(n);
                queue.push_back(m);
            }
        }
    }
    vec![start, start]
}
