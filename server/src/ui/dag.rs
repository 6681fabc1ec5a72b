//! A workflow's DAG drawn as SVG: steps laid out in layers by dependency
//! depth (a step sits one layer below the deepest step it depends on), in
//! workflow order within a layer; edges for `needs`, refs and branch gates,
//! a gate's edge labelled `then` or `else`. Each box is coloured by its
//! step's status and carries its verdict badge (`complete`, `partial:
//! pages`…) when the step has one. Pure: the run page hands it the steps.

use super::html::esc;

/// One step as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: String,
    /// `succeeded`, `running`, `failed`, `skipped`, `pending`…
    pub status: String,
    /// The verdict badge, for a tool step that has a verdict.
    pub badge: Option<String>,
}

/// An edge from the step depended on to the dependant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DagEdge {
    pub from: usize,
    pub to: usize,
    /// `Some(true)` for a branch's `then`, `Some(false)` for its `else`.
    pub gate: Option<bool>,
}

const BOX_W: usize = 230;
const BOX_H: usize = 54;
const GAP_X: usize = 30;
const GAP_Y: usize = 46;
const MARGIN: usize = 12;

/// Each step's layer: 0 for steps that depend on nothing, else one more
/// than the deepest step it depends on. Edges that do not point to an
/// earlier layer (there are none in a DAG) are ignored.
pub fn layers(n: usize, edges: &[DagEdge]) -> Vec<usize> {
    let mut depth = vec![0usize; n];
    // A DAG settles in at most n rounds.
    for _ in 0..n {
        let mut changed = false;
        for e in edges {
            if e.from < n && e.to < n && depth[e.to] <= depth[e.from] {
                depth[e.to] = depth[e.from] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    depth
}

/// The SVG of `nodes` and `edges`.
pub fn svg(nodes: &[Node], edges: &[DagEdge]) -> String {
    let depth = layers(nodes.len(), edges);
    let mut slot = vec![0usize; nodes.len()];
    let mut per_layer: Vec<usize> = Vec::new();
    for (i, d) in depth.iter().enumerate() {
        if per_layer.len() <= *d {
            per_layer.resize(d + 1, 0);
        }
        slot[i] = per_layer[*d];
        per_layer[*d] += 1;
    }
    let widest = per_layer.iter().copied().max().unwrap_or(1).max(1);
    let width = MARGIN * 2 + widest * BOX_W + (widest - 1) * GAP_X;
    let height = MARGIN * 2 + per_layer.len().max(1) * (BOX_H + GAP_Y) - GAP_Y;
    let at = |i: usize| {
        (
            MARGIN + slot[i] * (BOX_W + GAP_X),
            MARGIN + depth[i] * (BOX_H + GAP_Y),
        )
    };
    let mut out = format!(
        "<svg class=\"dag\" role=\"img\" aria-label=\"the workflow's steps and their dependencies\" \
         viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for e in edges {
        if e.from >= nodes.len() || e.to >= nodes.len() {
            continue;
        }
        let (fx, fy) = at(e.from);
        let (tx, ty) = at(e.to);
        let (x1, y1, x2, y2) = (fx + BOX_W / 2, fy + BOX_H, tx + BOX_W / 2, ty);
        out.push_str(&format!(
            "<line class=\"edge\" x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\"/>"
        ));
        if let Some(then) = e.gate {
            let label = if then { "then" } else { "else" };
            out.push_str(&format!(
                "<text class=\"gate\" x=\"{}\" y=\"{}\">{label}</text>",
                (x1 + x2) / 2 + 4,
                (y1 + y2) / 2
            ));
        }
    }
    for (i, node) in nodes.iter().enumerate() {
        let (x, y) = at(i);
        let status = esc(&node.status);
        // A step that succeeded with a partial walk is drawn partial.
        let class = match node.badge.as_deref() {
            Some(b) if node.status == "succeeded" && b.starts_with("partial") => {
                "partial".to_string()
            }
            _ => status.clone(),
        };
        out.push_str(&format!(
            "<g class=\"step status-{class}\" data-step=\"{id}\"><rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"6\"/>\
             <text x=\"{}\" y=\"{}\" class=\"name\">{id}</text><text x=\"{}\" y=\"{}\" class=\"what\">{status}{badge}</text></g>",
            x + 10,
            y + 22,
            x + 10,
            y + 42,
            id = esc(&node.id),
            badge = node
                .badge
                .as_deref()
                .map(|b| format!(" · {}", esc(b)))
                .unwrap_or_default(),
        ));
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str) -> Node {
        Node {
            id: id.into(),
            status: "succeeded".into(),
            badge: None,
        }
    }

    #[test]
    fn steps_sit_one_layer_below_their_deepest_dependency() {
        // a → b → d, a → c, c → d, gate b → e (else)
        let edges = [
            DagEdge {
                from: 0,
                to: 1,
                gate: None,
            },
            DagEdge {
                from: 1,
                to: 3,
                gate: None,
            },
            DagEdge {
                from: 0,
                to: 2,
                gate: None,
            },
            DagEdge {
                from: 2,
                to: 3,
                gate: None,
            },
            DagEdge {
                from: 1,
                to: 4,
                gate: Some(false),
            },
        ];
        assert_eq!(layers(5, &edges), [0, 1, 1, 2, 2]);
        let nodes: Vec<Node> = ["a", "b", "c", "d", "e"].into_iter().map(node).collect();
        let drawn = svg(&nodes, &edges);
        assert_eq!(drawn.matches("<line").count(), 5);
        assert_eq!(drawn.matches(">else<").count(), 1);
        assert!(drawn.contains("data-step=\"d\""));
    }

    #[test]
    fn names_and_badges_are_escaped() {
        let mut n = node("<b>");
        n.badge = Some("partial: pages & more".into());
        let drawn = svg(&[n], &[]);
        assert!(drawn.contains("&lt;b&gt;") && !drawn.contains("<b>"));
        assert!(drawn.contains("partial: pages &amp; more"));
    }
}
