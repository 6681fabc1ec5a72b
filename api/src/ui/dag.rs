//! A workflow's DAG drawn as SVG, laid out in layers the way Graphviz's
//! `dot` does, in small: a step sits one layer below the deepest step it
//! depends on (longest path); an edge that spans several layers passes
//! through a virtual point in each layer between, so it runs in a gap
//! between boxes and never through one; the order within each layer is
//! chosen by barycentre sweeps (the one with the fewest crossings kept),
//! and x positions are pulled towards each box's neighbours without
//! overlap. Edges are cubic curves between layers and straight lines
//! through a layer's band, each with an arrowhead; a branch gate's edge is
//! labelled `then` or `else`; a skipped step is drawn dashed and muted,
//! and so are the edges into it. Each box is coloured by its step's status
//! and carries its verdict badge (`complete`, `partial: pages`…) when the
//! step has one. Pure: the run page hands it the steps.

use maud::{html, Markup};

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

const BOX_H: i64 = 54;
const BOX_MIN_W: i64 = 150;
const BOX_MAX_W: i64 = 320;
const GAP_X: i64 = 32;
/// The space between a virtual point and its neighbours in a layer.
const GAP_VIRTUAL: i64 = 18;
const GAP_Y: i64 = 60;
const MARGIN: i64 = 12;
/// Rounds of barycentre sweeps (each one down and one up).
const SWEEPS: usize = 12;
/// Rounds of pulling x positions towards neighbours.
const PULLS: usize = 8;

/// A box on the drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

/// One edge's route: its first point is on the bottom side of the step
/// depended on, its last on the top side of the dependant; between them,
/// pairs of points where it enters and leaves each layer it passes
/// (joined by a straight line), the legs between layers being curves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The index of the edge in the edges given.
    pub edge: usize,
    pub points: Vec<(i64, i64)>,
}

/// Where everything goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub width: i64,
    pub height: i64,
    /// One per node, in the nodes' order.
    pub boxes: Vec<Rect>,
    /// One per drawable edge (both ends known, pointing down).
    pub routes: Vec<Route>,
}

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

/// A box's width from the text it holds (13 px names, 12 px status).
fn box_width(node: &Node) -> i64 {
    let name = node.id.chars().count() as i64 * 8;
    let what = what_of(node).chars().count() as i64 * 7;
    (name.max(what) + 22).clamp(BOX_MIN_W, BOX_MAX_W)
}

fn what_of(node: &Node) -> String {
    match &node.badge {
        Some(b) => format!("{} · {b}", node.status),
        None => node.status.clone(),
    }
}

/// One item of a layer: a step's box, or a virtual point of a long edge.
struct Item {
    layer: usize,
    w: i64,
    real: bool,
}

/// Lays the steps and edges out.
pub fn layout(nodes: &[Node], edges: &[DagEdge]) -> Layout {
    let n = nodes.len();
    let depth = layers(n, edges);
    let mut items: Vec<Item> = (0..n)
        .map(|i| Item {
            layer: depth[i],
            w: box_width(&nodes[i]),
            real: true,
        })
        .collect();
    // Each drawable edge as a chain of items, one per layer it touches.
    let mut chains: Vec<(usize, Vec<usize>)> = Vec::new();
    for (k, e) in edges.iter().enumerate() {
        if e.from >= n || e.to >= n || depth[e.to] <= depth[e.from] {
            continue;
        }
        let mut chain = vec![e.from];
        for layer in depth[e.from] + 1..depth[e.to] {
            items.push(Item {
                layer,
                w: 0,
                real: false,
            });
            chain.push(items.len() - 1);
        }
        chain.push(e.to);
        chains.push((k, chain));
    }
    let layer_count = depth.iter().copied().max().map_or(0, |d| d + 1);
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); layer_count];
    for (i, item) in items.iter().enumerate() {
        order[item.layer].push(i);
    }
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
    for (_, chain) in &chains {
        for pair in chain.windows(2) {
            down[pair[0]].push(pair[1]);
            up[pair[1]].push(pair[0]);
        }
    }
    let order = arrange(order, &up, &down, items.len());
    let x = place(&order, &items, &up, &down);

    let y_of = |layer: usize| MARGIN + layer as i64 * (BOX_H + GAP_Y);
    let boxes: Vec<Rect> = (0..n)
        .map(|i| Rect {
            x: x[i],
            y: y_of(depth[i]),
            w: items[i].w,
            h: BOX_H,
        })
        .collect();
    let centre = |i: usize| x[i] + items[i].w / 2;
    // Ports: the edges leaving (entering) a box spread along its bottom
    // (top) side, in the order of where they go (come from).
    let mut out_port = vec![0i64; chains.len()];
    let mut in_port = vec![0i64; chains.len()];
    for (node, item) in items.iter().enumerate().take(n) {
        let mut leaving: Vec<(i64, usize)> = Vec::new();
        let mut entering: Vec<(i64, usize)> = Vec::new();
        for (c, (_, chain)) in chains.iter().enumerate() {
            if chain[0] == node {
                leaving.push((centre(chain[1]), c));
            }
            if chain[chain.len() - 1] == node {
                entering.push((centre(chain[chain.len() - 2]), c));
            }
        }
        for (ports, list) in [(&mut out_port, &mut leaving), (&mut in_port, &mut entering)] {
            list.sort();
            let k = list.len() as i64;
            let spacing = if k > 1 {
                ((item.w - 24) / (k - 1)).min(16)
            } else {
                0
            };
            for (j, (_, c)) in list.iter().enumerate() {
                ports[*c] = centre(node) + (2 * j as i64 - (k - 1)) * spacing / 2;
            }
        }
    }
    let routes = chains
        .iter()
        .enumerate()
        .map(|(c, (edge, chain))| {
            let mut points = vec![(out_port[c], y_of(items[chain[0]].layer) + BOX_H)];
            for &v in &chain[1..chain.len() - 1] {
                let y = y_of(items[v].layer);
                points.push((centre(v), y));
                points.push((centre(v), y + BOX_H));
            }
            let last = chain[chain.len() - 1];
            points.push((in_port[c], y_of(items[last].layer)));
            Route {
                edge: *edge,
                points,
            }
        })
        .collect();
    let width = (0..items.len())
        .map(|i| x[i] + items[i].w)
        .max()
        .unwrap_or(0)
        + MARGIN;
    let height = MARGIN * 2 + layer_count.max(1) as i64 * (BOX_H + GAP_Y) - GAP_Y;
    Layout {
        width,
        height,
        boxes,
        routes,
    }
}

/// The order within each layer: barycentre sweeps down and up, keeping
/// the order with the fewest crossings seen.
fn arrange(
    mut order: Vec<Vec<usize>>,
    up: &[Vec<usize>],
    down: &[Vec<usize>],
    count: usize,
) -> Vec<Vec<usize>> {
    let mut best = order.clone();
    let mut fewest = crossings(&order, down, count);
    for _ in 0..SWEEPS {
        if fewest == 0 {
            break;
        }
        for l in 1..order.len() {
            sort_by_barycentre(&mut order, l, up, count);
        }
        for l in (0..order.len().saturating_sub(1)).rev() {
            sort_by_barycentre(&mut order, l, down, count);
        }
        let now = crossings(&order, down, count);
        if now < fewest {
            fewest = now;
            best = order.clone();
        }
    }
    best
}

fn positions(order: &[Vec<usize>], count: usize) -> Vec<usize> {
    let mut pos = vec![0usize; count];
    for layer in order {
        for (p, &i) in layer.iter().enumerate() {
            pos[i] = p;
        }
    }
    pos
}

fn sort_by_barycentre(
    order: &mut [Vec<usize>],
    layer: usize,
    neighbours: &[Vec<usize>],
    count: usize,
) {
    let pos = positions(order, count);
    let mut keyed: Vec<(f64, usize)> = order[layer]
        .iter()
        .map(|&i| {
            let near = &neighbours[i];
            let key = if near.is_empty() {
                pos[i] as f64
            } else {
                near.iter().map(|&j| pos[j] as f64).sum::<f64>() / near.len() as f64
            };
            (key, i)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    order[layer] = keyed.into_iter().map(|(_, i)| i).collect();
}

/// Pairs of links between adjacent layers that cross.
fn crossings(order: &[Vec<usize>], down: &[Vec<usize>], count: usize) -> usize {
    let pos = positions(order, count);
    let mut total = 0;
    for layer in order {
        let links: Vec<(usize, usize)> = layer
            .iter()
            .flat_map(|&u| down[u].iter().map(move |&v| (u, v)))
            .map(|(u, v)| (pos[u], pos[v]))
            .collect();
        for (a, &(u1, v1)) in links.iter().enumerate() {
            for &(u2, v2) in &links[a + 1..] {
                if (u1 < u2 && v1 > v2) || (u1 > u2 && v1 < v2) {
                    total += 1;
                }
            }
        }
    }
    total
}

/// The space kept between two neighbours in a layer.
fn gap(a: &Item, b: &Item) -> i64 {
    if a.real && b.real {
        GAP_X
    } else {
        GAP_VIRTUAL
    }
}

/// Each item's left x: packed first, then pulled towards the mean centre
/// of its neighbours above (going down) and below (going up), each layer
/// placed as the mean of a left-packed and a right-packed placement of
/// those wishes (both keep the order and the gaps, so their mean does).
fn place(order: &[Vec<usize>], items: &[Item], up: &[Vec<usize>], down: &[Vec<usize>]) -> Vec<i64> {
    let mut x = vec![0i64; items.len()];
    for layer in order {
        let mut at = 0;
        for (p, &i) in layer.iter().enumerate() {
            if p > 0 {
                at += gap(&items[layer[p - 1]], &items[i]);
            }
            x[i] = at;
            at += items[i].w;
        }
    }
    for _ in 0..PULLS {
        for layer in order.iter().skip(1) {
            settle(layer, items, up, &mut x);
        }
        for layer in order.iter().rev().skip(1) {
            settle(layer, items, down, &mut x);
        }
    }
    let least = x.iter().copied().min().unwrap_or(0);
    x.iter().map(|v| v - least + MARGIN).collect()
}

fn settle(layer: &[usize], items: &[Item], neighbours: &[Vec<usize>], x: &mut [i64]) {
    let wish: Vec<i64> = layer
        .iter()
        .map(|&i| {
            let near = &neighbours[i];
            if near.is_empty() {
                x[i]
            } else {
                let mean = near.iter().map(|&j| x[j] * 2 + items[j].w).sum::<i64>()
                    / (2 * near.len() as i64);
                mean - items[i].w / 2
            }
        })
        .collect();
    let k = layer.len();
    let mut left = wish.clone();
    for p in 1..k {
        let floor =
            left[p - 1] + items[layer[p - 1]].w + gap(&items[layer[p - 1]], &items[layer[p]]);
        left[p] = left[p].max(floor);
    }
    let mut right = wish;
    for p in (0..k.saturating_sub(1)).rev() {
        let ceiling =
            right[p + 1] - gap(&items[layer[p]], &items[layer[p + 1]]) - items[layer[p]].w;
        right[p] = right[p].min(ceiling);
    }
    for p in 0..k {
        x[layer[p]] = (left[p] + right[p]).div_euclid(2);
    }
}

/// The SVG path of a route: curves between layers, lines through them.
pub fn path_of(points: &[(i64, i64)]) -> String {
    let mut d = String::new();
    for (k, &(x, y)) in points.iter().enumerate() {
        if k == 0 {
            d.push_str(&format!("M{x},{y}"));
        } else if k % 2 == 1 {
            let (px, py) = points[k - 1];
            let mid = (py + y) / 2;
            d.push_str(&format!(" C{px},{mid} {x},{mid} {x},{y}"));
        } else {
            d.push_str(&format!(" L{x},{y}"));
        }
    }
    d
}

/// The class of a step's box: its status, or `partial` for a step that
/// succeeded with a partial walk.
fn class_of(node: &Node) -> &str {
    match node.badge.as_deref() {
        Some(b) if node.status == "succeeded" && b.starts_with("partial") => "partial",
        _ => &node.status,
    }
}

/// The SVG of `nodes` and `edges`.
pub fn svg(nodes: &[Node], edges: &[DagEdge]) -> String {
    markup(nodes, edges).into_string()
}

/// The SVG of `nodes` and `edges`, as markup.
pub fn markup(nodes: &[Node], edges: &[DagEdge]) -> Markup {
    let at = layout(nodes, edges);
    let (w, h) = (at.width, at.height);
    html! {
        svg.dag role="img" aria-label="the workflow's steps and their dependencies"
            viewBox=(format!("0 0 {w} {h}")) width=(w) height=(h) xmlns="http://www.w3.org/2000/svg" {
            defs {
                marker #dag-arrow viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8"
                    orient="auto-start-reverse" markerUnits="userSpaceOnUse" {
                    path.arrow d="M0,0 L10,5 L0,10 z" {}
                }
            }
            @for route in &at.routes {
                @let e = edges[route.edge];
                @let skipped = nodes[e.to].status == "skipped";
                path.edge.skipped[skipped] d=(path_of(&route.points)) marker-end="url(#dag-arrow)"
                    data-from=(nodes[e.from].id) data-to=(nodes[e.to].id) {}
                @if let Some(then) = e.gate {
                    @let ((x1, y1), (x2, y2)) = (route.points[0], route.points[1]);
                    text.gate x=((x1 + x2) / 2 + 5) y=((y1 + y2) / 2 + 4) {
                        (if then { "then" } else { "else" })
                    }
                }
            }
            @for (node, b) in nodes.iter().zip(&at.boxes) {
                g class={ "step status-" (class_of(node)) } data-step=(node.id) {
                    title { (node.id) ": " (what_of(node)) }
                    rect x=(b.x) y=(b.y) width=(b.w) height=(b.h) rx="6" {}
                    text.name x=(b.x + 10) y=(b.y + 22) { (node.id) }
                    text.what x=(b.x + 10) y=(b.y + 42) { (what_of(node)) }
                }
            }
        }
    }
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

    fn edge(from: usize, to: usize) -> DagEdge {
        DagEdge {
            from,
            to,
            gate: None,
        }
    }

    #[test]
    fn steps_sit_one_layer_below_their_deepest_dependency() {
        // a → b → d, a → c, c → d, gate b → e (else)
        let mut edges = vec![edge(0, 1), edge(1, 3), edge(0, 2), edge(2, 3), edge(1, 4)];
        edges[4].gate = Some(false);
        assert_eq!(layers(5, &edges), [0, 1, 1, 2, 2]);
        let nodes: Vec<Node> = ["a", "b", "c", "d", "e"].into_iter().map(node).collect();
        let drawn = svg(&nodes, &edges);
        assert_eq!(drawn.matches("<path class=\"edge").count(), 5);
        assert_eq!(drawn.matches("marker-end=\"url(#dag-arrow)\"").count(), 5);
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

    #[test]
    fn a_skipped_step_and_the_edges_into_it_are_marked() {
        let mut nodes: Vec<Node> = ["gate", "alert"].into_iter().map(node).collect();
        nodes[1].status = "skipped".into();
        let drawn = svg(&nodes, &[edge(0, 1)]);
        assert!(drawn.contains("class=\"step status-skipped\""), "{drawn}");
        assert!(drawn.contains("class=\"edge skipped\""), "{drawn}");
    }

    /// A point of a route, `t` of the way along leg `k`.
    fn point_on(points: &[(i64, i64)], k: usize, t: f64) -> (f64, f64) {
        let (a, b) = (points[k - 1], points[k]);
        let (ax, ay, bx, by) = (a.0 as f64, a.1 as f64, b.0 as f64, b.1 as f64);
        if k % 2 == 1 {
            // The cubic from a to b with control points at mid height.
            let my = (ay + by) / 2.0;
            let u = 1.0 - t;
            let x = u * u * u * ax + 3.0 * u * u * t * ax + 3.0 * u * t * t * bx + t * t * t * bx;
            let y = u * u * u * ay + 3.0 * u * u * t * my + 3.0 * u * t * t * my + t * t * t * by;
            (x, y)
        } else {
            (ax + (bx - ax) * t, ay + (by - ay) * t)
        }
    }

    fn strictly_inside(r: &Rect, (x, y): (f64, f64)) -> bool {
        x > r.x as f64 && x < (r.x + r.w) as f64 && y > r.y as f64 && y < (r.y + r.h) as f64
    }

    /// A small deterministic generator (no dependency for a test).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    fn check(nodes: &[Node], edges: &[DagEdge]) -> Result<(), String> {
        let at = layout(nodes, edges);
        for (i, a) in at.boxes.iter().enumerate() {
            for (j, b) in at.boxes.iter().enumerate().skip(i + 1) {
                let apart =
                    a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
                if !apart {
                    return Err(format!("boxes {i} and {j} overlap: {a:?} {b:?}"));
                }
            }
            if a.x < 0 || a.x + a.w > at.width || a.y + a.h > at.height {
                return Err(format!("box {i} is off the drawing"));
            }
        }
        let drawable = edges
            .iter()
            .filter(|e| e.from < nodes.len() && e.to < nodes.len())
            .count();
        if at.routes.len() != drawable {
            return Err(format!("{} routes for {drawable} edges", at.routes.len()));
        }
        for route in &at.routes {
            let e = edges[route.edge];
            let (from, to) = (at.boxes[e.from], at.boxes[e.to]);
            let first = route.points[0];
            let last = route.points[route.points.len() - 1];
            if first.1 != from.y + from.h || first.0 <= from.x || first.0 >= from.x + from.w {
                return Err(format!(
                    "edge {e:?} does not leave its box's bottom: {first:?} {from:?}"
                ));
            }
            if last.1 != to.y || last.0 <= to.x || last.0 >= to.x + to.w {
                return Err(format!(
                    "edge {e:?} does not enter its box's top: {last:?} {to:?}"
                ));
            }
            for k in 1..route.points.len() {
                for s in 0..=64 {
                    let p = point_on(&route.points, k, s as f64 / 64.0);
                    for (i, r) in at.boxes.iter().enumerate() {
                        if strictly_inside(r, p) {
                            return Err(format!(
                                "edge {e:?} crosses box {i} {r:?} at {p:?}: {:?}",
                                route.points
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn no_edge_crosses_a_box_in_generated_dags() {
        let mut rng = Lcg(0x5eed);
        for case in 0..400 {
            let n = 1 + (rng.next() % 14) as usize;
            let density = 1 + rng.next() % 4;
            let mut edges = Vec::new();
            for to in 1..n {
                for from in 0..to {
                    if rng.next() % 10 < density {
                        edges.push(DagEdge {
                            from,
                            to,
                            gate: rng
                                .next()
                                .is_multiple_of(5)
                                .then(|| rng.next().is_multiple_of(2)),
                        });
                    }
                }
            }
            let nodes: Vec<Node> = (0..n)
                .map(|i| {
                    node(&format!(
                        "{}{i}",
                        "s".repeat(1 + (rng.next() % 30) as usize)
                    ))
                })
                .collect();
            if let Err(why) = check(&nodes, &edges) {
                panic!("case {case} ({n} steps, edges {edges:?}): {why}");
            }
        }
    }

    #[test]
    fn the_issue_s_workflow_routes_fetch_ok_to_alert_around_gate() {
        // fetch → fetch_ok → gate → alert, and fetch_ok → alert directly:
        // the long edge passes gate's layer beside it, not through it.
        let nodes: Vec<Node> = ["fetch", "fetch_ok", "gate", "alert"]
            .into_iter()
            .map(node)
            .collect();
        let mut edges = vec![edge(0, 1), edge(1, 2), edge(2, 3), edge(1, 3)];
        edges[2].gate = Some(true);
        check(&nodes, &edges).unwrap();
        let at = layout(&nodes, &edges);
        let long = at.routes.iter().find(|r| r.edge == 3).unwrap();
        assert_eq!(long.points.len(), 4, "one virtual point in gate's layer");
        let gate = at.boxes[2];
        let passing = long.points[1].0;
        assert!(passing < gate.x || passing > gate.x + gate.w);
    }

    #[test]
    fn cycles_self_edges_and_unknown_steps_are_drawn_without_panicking() {
        let nodes: Vec<Node> = ["a", "b"].into_iter().map(node).collect();
        let drawn = svg(&nodes, &[edge(0, 1), edge(1, 0), edge(1, 1), edge(0, 7)]);
        assert!(drawn.contains("data-step=\"b\""));
        assert!(svg(&[], &[edge(0, 1)]).starts_with("<svg"));
    }

    #[test]
    fn barycentre_sweeps_undo_a_crossing() {
        // a, b on top; c, d below; a → d and b → c cross in workflow order.
        let nodes: Vec<Node> = ["a", "b", "c", "d"].into_iter().map(node).collect();
        let edges = [edge(0, 3), edge(1, 2)];
        let at = layout(&nodes, &edges);
        let (a, b, c, d) = (at.boxes[0], at.boxes[1], at.boxes[2], at.boxes[3]);
        assert_eq!(a.x < b.x, d.x < c.x, "{a:?} {b:?} {c:?} {d:?}");
    }
}
