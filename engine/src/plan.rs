//! The plan: a petgraph DAG over a workflow's steps. Edges come from
//! `needs`, from every ref to another step's output, and from a branch to
//! each step it gates. Independent steps are those with no path between.

use petgraph::algo::toposort;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::workflow::model::{StepId, StepKind, Workflow};

/// Why a step depends on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Needs,
    Ref,
    /// The dependant is in the branch's `then` (true) or `else` (false).
    Gate {
        then: bool,
    },
}

/// The DAG of a workflow; node weights are indexes into `workflow.steps`.
#[derive(Debug, Clone)]
pub struct Plan {
    graph: DiGraph<usize, Edge>,
    nodes: Vec<NodeIndex>,
    /// A topological order of step indexes.
    pub order: Vec<usize>,
}

/// A cycle, as step ids `a -> b -> a`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cycle: {}", .0.iter().map(StepId::as_str).collect::<Vec<_>>().join(" -> "))]
pub struct Cycle(pub Vec<StepId>);

impl Plan {
    pub fn new(workflow: &Workflow) -> Result<Plan, Cycle> {
        let mut graph = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..workflow.steps.len())
            .map(|i| graph.add_node(i))
            .collect();
        let positions: std::collections::HashMap<&StepId, usize> = workflow
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (&s.id, i))
            .collect();
        let index_of = |id: &StepId| positions.get(id).copied();
        for (i, step) in workflow.steps.iter().enumerate() {
            let mut add = |from: usize, edge: Edge| {
                if graph.find_edge(nodes[from], nodes[i]).is_none() {
                    graph.add_edge(nodes[from], nodes[i], edge);
                }
            };
            for need in &step.needs {
                if let Some(j) = index_of(need) {
                    add(j, Edge::Needs);
                }
            }
            for r in step.refs() {
                if let Some(j) = r.step().and_then(index_of) {
                    add(j, Edge::Ref);
                }
            }
        }
        for (i, step) in workflow.steps.iter().enumerate() {
            if let StepKind::Branch(b) = &step.kind {
                for (targets, then) in [(&b.then, true), (&b.otherwise, false)] {
                    for target in targets {
                        if let Some(j) = index_of(target) {
                            // The gate is what matters; it replaces a plain edge.
                            if let Some(e) = graph.find_edge(nodes[i], nodes[j]) {
                                graph.remove_edge(e);
                            }
                            graph.add_edge(nodes[i], nodes[j], Edge::Gate { then });
                        }
                    }
                }
            }
        }
        let order = match toposort(&graph, None) {
            Ok(order) => order.into_iter().map(|n| graph[n]).collect(),
            Err(cycle) => {
                let start = graph[cycle.node_id()];
                return Err(Cycle(find_cycle(&graph, &nodes, start, workflow)));
            }
        };
        Ok(Plan {
            graph,
            nodes,
            order,
        })
    }

    /// The steps `index` depends on, with why.
    pub fn dependencies(&self, index: usize) -> Vec<(usize, Edge)> {
        self.graph
            .edges_directed(self.nodes[index], petgraph::Direction::Incoming)
            .map(|e| {
                (
                    self.graph[petgraph::visit::EdgeRef::source(&e)],
                    *e.weight(),
                )
            })
            .collect()
    }

    /// Step `index` and every step that depends on it, directly or not.
    pub fn downstream(&self, index: usize) -> Vec<usize> {
        let mut dfs = petgraph::visit::Dfs::new(&self.graph, self.nodes[index]);
        let mut out = Vec::new();
        while let Some(node) = dfs.next(&self.graph) {
            out.push(self.graph[node]);
        }
        out.sort_unstable();
        out
    }

    /// Whether there is a path between two steps, either way.
    pub fn ordered(&self, a: usize, b: usize) -> bool {
        petgraph::algo::has_path_connecting(&self.graph, self.nodes[a], self.nodes[b], None)
            || petgraph::algo::has_path_connecting(&self.graph, self.nodes[b], self.nodes[a], None)
    }
}

/// The cycle through `start`, as ids with the first repeated at the end.
fn find_cycle(
    graph: &DiGraph<usize, Edge>,
    nodes: &[NodeIndex],
    start: usize,
    workflow: &Workflow,
) -> Vec<StepId> {
    let mut path = vec![start];
    let mut seen = vec![false; nodes.len()];
    if dfs(graph, nodes, start, start, &mut path, &mut seen) {
        path.iter().map(|&i| workflow.steps[i].id.clone()).collect()
    } else {
        vec![workflow.steps[start].id.clone()]
    }
}

fn dfs(
    graph: &DiGraph<usize, Edge>,
    nodes: &[NodeIndex],
    start: usize,
    at: usize,
    path: &mut Vec<usize>,
    seen: &mut [bool],
) -> bool {
    for next in graph.neighbors(nodes[at]) {
        let j = graph[next];
        if j == start {
            path.push(j);
            return true;
        }
        if !seen[j] {
            seen[j] = true;
            path.push(j);
            if dfs(graph, nodes, start, j, path, seen) {
                return true;
            }
            path.pop();
        }
    }
    false
}
