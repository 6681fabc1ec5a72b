//! Which of an agent's tools are direct (in its tool list) and which are
//! pooled (found with `search_tools`, loaded with `load_tool`), SPEC §7.
//! Computed once per agent from its bindings, in this order:
//!
//! 1. Tools of the agent's own providers (`openapi`, `mcp`) are direct and
//!    counted, always: an agent's own API is never hidden.
//! 2. A connected-app tool bound with `discovery: false` is direct and
//!    counted; with `discovery: true` it is pooled.
//! 3. The other connected-app tools go by toolkit (their provider), kept
//!    whole: smallest toolkit first (ties by name), each is direct while
//!    it fits what is left of the budget; the first that does not fit, and
//!    every one after it, is pooled whole.
//!
//! `list_connections`, `connect_toolkit`, the retrieval tools and the
//! discovery meta-tools are always direct and never counted.

use std::collections::BTreeMap;

/// The default number of tools listed directly.
pub const DEFAULT_BUDGET: usize = 15;

/// A bound tool as the split sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub tool_id: String,
    pub provider: String,
    /// A connected-app toolkit's tool (an `app` provider).
    pub app: bool,
    pub discovery: Option<bool>,
}

/// Where a tool went, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    Direct(Why),
    Pooled(Why),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The agent's own API or MCP server.
    OwnProvider,
    /// `discovery: false` / `discovery: true` on the binding.
    Override,
    /// Its toolkit of `size` tools fit, with `left` of the budget left.
    ToolkitFits { size: usize, left: usize },
    /// Its toolkit of `size` tools did not fit in `left` (or a smaller one
    /// before it did not).
    ToolkitTooLarge { size: usize, left: usize },
}

impl Why {
    pub fn explain(&self, provider: &str) -> String {
        match self {
            Why::OwnProvider => format!("`{provider}` is the agent's own provider: always direct"),
            Why::Override => "set by the binding's `discovery`".to_string(),
            Why::ToolkitFits { size, left } => format!(
                "toolkit `{provider}` ({size} tools) fits the {left} left of the budget"
            ),
            Why::ToolkitTooLarge { size, left } => format!(
                "toolkit `{provider}` ({size} tools) does not fit the {left} left of the budget: pooled whole"
            ),
        }
    }
}

/// The split of one agent's tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub budget: usize,
    /// Per candidate, in the order given.
    pub placements: Vec<Placement>,
    /// Direct tools counted against the budget (may exceed it when the
    /// agent's own tools alone do).
    pub counted: usize,
}

impl Split {
    pub fn is_direct(&self, i: usize) -> bool {
        matches!(self.placements.get(i), Some(Placement::Direct(_)))
    }

    /// Whether anything is pooled (the agent gets the discovery tools).
    pub fn has_pool(&self) -> bool {
        self.placements
            .iter()
            .any(|p| matches!(p, Placement::Pooled(_)))
    }
}

/// Splits `candidates` under `budget` direct tools.
pub fn split(candidates: &[Candidate], budget: usize) -> Split {
    let mut placements: Vec<Option<Placement>> = vec![None; candidates.len()];
    let mut counted = 0;
    for (i, c) in candidates.iter().enumerate() {
        if !c.app {
            placements[i] = Some(Placement::Direct(Why::OwnProvider));
            counted += 1;
        } else if c.discovery == Some(false) {
            placements[i] = Some(Placement::Direct(Why::Override));
            counted += 1;
        } else if c.discovery == Some(true) {
            placements[i] = Some(Placement::Pooled(Why::Override));
        }
    }
    // The rest by toolkit, kept whole, smallest first.
    let mut toolkits: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in candidates.iter().enumerate() {
        if placements[i].is_none() {
            toolkits.entry(c.provider.as_str()).or_default().push(i);
        }
    }
    let mut order: Vec<(&str, Vec<usize>)> = toolkits.into_iter().collect();
    order.sort_by(|a, b| a.1.len().cmp(&b.1.len()).then(a.0.cmp(b.0)));
    let mut pooling = false;
    for (_, members) in order {
        let size = members.len();
        let left = budget.saturating_sub(counted);
        pooling = pooling || size > left;
        let placement = if pooling {
            Placement::Pooled(Why::ToolkitTooLarge { size, left })
        } else {
            counted += size;
            Placement::Direct(Why::ToolkitFits { size, left })
        };
        for i in members {
            placements[i] = Some(placement.clone());
        }
    }
    Split {
        budget,
        placements: placements
            .into_iter()
            .map(|p| p.unwrap_or(Placement::Direct(Why::OwnProvider)))
            .collect(),
        counted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(id: &str) -> Candidate {
        Candidate {
            tool_id: id.into(),
            provider: "own".into(),
            app: false,
            discovery: None,
        }
    }

    /// `n` tools of app toolkit `kit`.
    fn kit(kit: &str, n: usize) -> Vec<Candidate> {
        (0..n)
            .map(|i| Candidate {
                tool_id: format!("{kit}_{i}"),
                provider: kit.into(),
                app: true,
                discovery: None,
            })
            .collect()
    }

    fn direct_of(split: &Split, candidates: &[Candidate], provider: &str) -> usize {
        candidates
            .iter()
            .enumerate()
            .filter(|(i, c)| c.provider == provider && split.is_direct(*i))
            .count()
    }

    #[test]
    fn toolkits_are_kept_whole_smallest_first_until_one_does_not_fit() {
        // 3 own + mail (60) + calendar (8) + drive (5) under 15: drive (5)
        // fits in 12, calendar (8) does not fit in 7 → calendar and mail
        // are pooled whole.
        let mut c = vec![own("a"), own("b"), own("c")];
        c.extend(kit("mail", 60));
        c.extend(kit("calendar", 8));
        c.extend(kit("drive", 5));
        let s = split(&c, DEFAULT_BUDGET);
        assert_eq!(direct_of(&s, &c, "own"), 3);
        assert_eq!(direct_of(&s, &c, "drive"), 5);
        assert_eq!(direct_of(&s, &c, "calendar"), 0);
        assert_eq!(direct_of(&s, &c, "mail"), 0);
        assert_eq!(s.counted, 8);
        assert!(s.has_pool());
        // The first that does not fit stops the rest, even one that would
        // fit after it: with a budget of 9, calendar (8) does not fit in 4,
        // and nothing after it is tried.
        let s = split(&c, 9);
        assert_eq!(
            (direct_of(&s, &c, "drive"), direct_of(&s, &c, "calendar")),
            (5, 0)
        );
        // A large budget takes all.
        let s = split(&c, 100);
        assert!(!s.has_pool());
        assert_eq!(s.counted, 76);
    }

    #[test]
    fn own_providers_are_never_pooled_and_overrides_win() {
        let mut c: Vec<Candidate> = (0..20).map(|i| own(&format!("o{i}"))).collect();
        c.extend(kit("drive", 2));
        let s = split(&c, DEFAULT_BUDGET);
        assert_eq!(direct_of(&s, &c, "own"), 20, "over budget, still direct");
        assert_eq!(direct_of(&s, &c, "drive"), 0);
        assert_eq!(s.counted, 20);
        // discovery: false keeps a tool direct (counted); true pools it.
        let mut c = kit("mail", 30);
        c[0].discovery = Some(false);
        c[1].discovery = Some(true);
        c.extend(kit("drive", 3));
        c[31].discovery = Some(true);
        let s = split(&c, DEFAULT_BUDGET);
        assert!(s.is_direct(0));
        assert_eq!(s.placements[0], Placement::Direct(Why::Override));
        assert_eq!(s.placements[1], Placement::Pooled(Why::Override));
        assert!(!s.is_direct(31));
        // drive's other two fit (14 left), mail's other 28 do not (12 left).
        assert_eq!(direct_of(&s, &c, "drive"), 2);
        assert_eq!(direct_of(&s, &c, "mail"), 1);
        assert_eq!(s.counted, 3);
        assert_eq!(
            s.placements[2],
            Placement::Pooled(Why::ToolkitTooLarge { size: 28, left: 12 })
        );
    }
}
