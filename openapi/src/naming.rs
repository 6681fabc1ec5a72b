//! Tool names and descriptions. A tool is named by its `operationId` when
//! that is already a valid name (`^[A-Za-z0-9_-]{1,64}$`). An ASCII
//! `operationId` with other characters has them replaced by `_`
//! (`orders.list` → `orders_list`). One that sanitising would cut (over 64
//! characters) or rob of non-ASCII letters (`café`, `列出订单`) becomes its
//! sanitised form plus `_` and 8 hex digits of the SHA-256 of the
//! `operationId` (method + path stands in when nothing is left), so the
//! name is stable and two such ids never meet. Operations without an
//! `operationId` are named by method + path. Exact ids are claimed first,
//! then sanitised ones, then method + path; a name already taken gets the
//! hash of the operation's method and path key instead (`_2`, `_3`… only
//! if even that is taken). The toolkit keeps each original `operationId`
//! so callers can use it. Descriptions come from `summary` and
//! `description`, trimmed and short.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use super::operation::Built;
use dragnet_core::tool::{Method, Tool};

/// Longest tool name.
pub(crate) const MAX_NAME: usize = 64;
/// Longest tool description, in characters.
pub(crate) const MAX_DESCRIPTION: usize = 300;
/// Hex digits of the hash that tells a changed or clashing name apart.
const TAG: usize = 8;

/// Whether `name` is a tool name as it stands.
pub(crate) fn is_valid(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `raw` with every character outside `[A-Za-z0-9_-]` replaced by `_`,
/// runs of `_` collapsed and `_` trimmed from both ends; not cut.
fn clean(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    out.trim_matches('_').to_string()
}

/// `name` (ASCII) cut to `max` characters, without a trailing `_`.
fn cut(name: &str, max: usize) -> &str {
    name.get(..max).unwrap_or(name).trim_end_matches('_')
}

/// The first 8 hex digits of the SHA-256 of `material`.
fn tag(material: &str) -> String {
    let digest = Sha256::digest(material.as_bytes());
    digest
        .iter()
        .take(TAG / 2)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `stem` cut to leave room for `_` and the tag of `material`, then both.
fn tagged(stem: &str, material: &str) -> String {
    let stem = cut(stem, MAX_NAME - 1 - TAG);
    let tag = tag(material);
    if stem.is_empty() {
        tag
    } else {
        format!("{stem}_{tag}")
    }
}

/// The method + path name: `get /orders/{order_id}` → `get_orders_order_id`,
/// tagged when it had to be cut.
pub(crate) fn from_method_path(method: Method, path: &str) -> String {
    let name = clean(&format!("{}_{}", method.key(), path));
    if name.is_empty() {
        method.key().to_string()
    } else if name.len() > MAX_NAME {
        tagged(&name, &identity(method, path))
    } else {
        name
    }
}

/// What tells an operation apart within its document.
fn identity(method: Method, path: &str) -> String {
    format!("{} {path}", method.key())
}

/// Who gave a name, in the order names are claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Given {
    /// The `operationId` as written.
    Exact,
    /// The `operationId`, sanitised (and tagged when letters were lost).
    Sanitised,
    /// Method + path.
    Fallback,
}

/// The name an operation asks for, before clashes are settled.
fn wanted(b: &Built) -> (String, Given) {
    let method = b.tool.method;
    match b.operation_id.as_deref() {
        Some(id) if is_valid(id) => (id.to_string(), Given::Exact),
        Some(id) => {
            let stem = clean(id);
            if id.is_ascii() && is_valid(&stem) {
                return (stem, Given::Sanitised);
            }
            let stem = if stem.is_empty() {
                clean(&format!("{}_{}", method.key(), b.path_key))
            } else {
                stem
            };
            (tagged(&stem, id), Given::Sanitised)
        }
        None => (from_method_path(method, &b.path_key), Given::Fallback),
    }
}

/// Names every tool of one document, in document order, and returns with
/// them the original `operationId` of each tool that had one, by name.
pub(crate) fn name_tools(built: Vec<Built>) -> (Vec<Tool>, HashMap<String, String>) {
    let wanted: Vec<(String, Given)> = built.iter().map(wanted).collect();
    let mut names = Names::default();
    let mut chosen: Vec<Option<String>> = vec![None; built.len()];
    for turn in [Given::Exact, Given::Sanitised, Given::Fallback] {
        for ((slot, b), (name, given)) in chosen.iter_mut().zip(&built).zip(&wanted) {
            if *given == turn {
                *slot = Some(names.claim(name, &identity(b.tool.method, &b.path_key)));
            }
        }
    }
    let mut originals = HashMap::new();
    let tools = built
        .into_iter()
        .zip(chosen)
        .map(|(b, name)| {
            let mut tool = b.tool;
            tool.name = name.unwrap_or_default();
            if let Some(id) = b.operation_id {
                originals.insert(tool.name.clone(), id);
            }
            tool
        })
        .collect();
    (tools, originals)
}

/// The names already given in one toolkit.
#[derive(Default)]
pub(crate) struct Names {
    used: HashSet<String>,
}

impl Names {
    /// Reserves `base` (a valid name); when it is taken, `base` tagged with
    /// the hash of `identity`; when even that is taken, the first free of
    /// `base_2`, `base_3`…, cut so the suffix fits.
    pub fn claim(&mut self, base: &str, identity: &str) -> String {
        if self.used.insert(base.to_string()) {
            return base.to_string();
        }
        let tagged = tagged(base, identity);
        if self.used.insert(tagged.clone()) {
            return tagged;
        }
        let mut n: u64 = 2;
        loop {
            let suffix = format!("_{n}");
            let room = MAX_NAME.saturating_sub(suffix.len());
            let candidate = format!("{}{suffix}", cut(base, room));
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

/// `summary`, then `description` when it adds something, trimmed and cut
/// to about 300 characters at a word boundary.
pub(crate) fn description(summary: Option<&str>, description: Option<&str>) -> String {
    let summary = summary.map(str::trim).filter(|s| !s.is_empty());
    let description = description.map(str::trim).filter(|s| !s.is_empty());
    let full = match (summary, description) {
        (Some(s), Some(d)) if d.starts_with(s) => d.to_string(),
        (Some(s), Some(d)) => format!("{s}\n\n{d}"),
        (Some(s), None) => s.to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => String::new(),
    };
    shorten(&full, MAX_DESCRIPTION)
}

/// `text` cut to at most `max` characters, preferring a word boundary in
/// the last third, with `…` appended when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let floor = head.len() * 2 / 3;
    let cut = match head.rfind(char::is_whitespace) {
        Some(at) if at >= floor => head.get(..at).unwrap_or(&head),
        _ => &head,
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_NAME).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    fn sanitise(raw: &str) -> String {
        cut(&clean(raw), MAX_NAME).to_string()
    }

    #[test]
    fn sanitises_operation_ids() {
        assert_eq!(sanitise("listOrders"), "listOrders");
        assert_eq!(sanitise("orders.list (v2)"), "orders_list_v2");
        assert_eq!(sanitise("a  //  b"), "a_b");
        assert_eq!(sanitise("Über-größe"), "ber-gr_e");
        assert_eq!(sanitise("..."), "");
        let long = "x".repeat(70) + ".y";
        assert_eq!(sanitise(&long).len(), 64);
        assert!(valid(&sanitise(&("ab.".repeat(40)))));
        assert!(!sanitise(&("a".repeat(63) + ".b")).ends_with('_'));
    }

    #[test]
    fn falls_back_to_method_and_path() {
        assert_eq!(
            from_method_path(Method::Get, "/orders/{order_id}"),
            "get_orders_order_id"
        );
        assert_eq!(from_method_path(Method::Delete, "/"), "delete");
        assert_eq!(
            from_method_path(Method::Post, "/v1/a.b/{c}:run"),
            "post_v1_a_b_c_run"
        );
    }

    #[test]
    fn long_fallbacks_are_tagged() {
        let path = format!("/{}", "segment/".repeat(12));
        let name = from_method_path(Method::Get, &path);
        assert!(valid(&name), "{name}");
        assert_eq!(name.len(), 64);
        assert_eq!(name, from_method_path(Method::Get, &path), "stable");
        assert_ne!(name, from_method_path(Method::Put, &path));
        assert!(name.starts_with("get_segment_segment"));
    }

    #[test]
    fn tags_are_stable_hex() {
        // the first 4 bytes of SHA-256("café")
        assert_eq!(tag("café"), "850f7dc4");
        assert_eq!(tagged("caf", "café"), "caf_850f7dc4");
        assert_eq!(tagged("", "列出订单"), tag("列出订单"));
        let long = tagged(&"x".repeat(64), "x");
        assert_eq!(long.len(), 64);
        assert!(valid(&long));
    }

    #[test]
    fn a_taken_name_is_tagged_with_the_operation() {
        let mut names = Names::default();
        assert_eq!(names.claim("list", "get /a"), "list");
        let second = names.claim("list", "put /a");
        assert_eq!(second, format!("list_{}", tag("put /a")));
        // the same operation asking twice (never happens in a document)
        // still gets a free name
        assert_eq!(names.claim("list", "put /a"), "list_2");
        let long = "n".repeat(64);
        assert_eq!(names.claim(&long, "get /n"), long);
        let again = names.claim(&long, "put /n");
        assert!(valid(&again) && again.len() == 64, "{again}");
        assert!(!is_valid("") && !is_valid("café") && is_valid("a-b_C9"));
    }

    #[test]
    fn descriptions_are_short() {
        assert_eq!(description(Some(" List "), None), "List");
        assert_eq!(
            description(Some("List"), Some("List orders.")),
            "List orders."
        );
        assert_eq!(description(Some("A"), Some("B")), "A\n\nB");
        assert_eq!(description(None, Some("  ")), "");
        let long = "word ".repeat(200);
        let d = description(None, Some(&long));
        assert!(d.chars().count() <= MAX_DESCRIPTION);
        assert!(d.ends_with("word…"));
        let unbroken = "é".repeat(400);
        assert_eq!(
            description(Some(&unbroken), None).chars().count(),
            MAX_DESCRIPTION
        );
    }
}
