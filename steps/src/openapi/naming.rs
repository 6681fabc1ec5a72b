//! Tool names and descriptions: an `operationId` sanitised to
//! `^[A-Za-z0-9_-]{1,64}$`, else method + path; names made unique within a
//! toolkit with `_2`, `_3`… suffixes; descriptions from `summary` and
//! `description`, trimmed and kept short.

use std::collections::HashSet;

use crate::tool::Method;

/// Longest tool name.
pub(crate) const MAX_NAME: usize = 64;
/// Longest tool description, in characters.
pub(crate) const MAX_DESCRIPTION: usize = 300;

/// `raw` with every character outside `[A-Za-z0-9_-]` replaced by `_`,
/// runs of `_` collapsed, `_` trimmed from both ends, cut to 64 characters.
/// Empty when nothing usable is left.
pub(crate) fn sanitise(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(MAX_NAME * 2));
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
    let trimmed = out.trim_matches('_');
    // Only ASCII is left, so byte and character counts agree.
    let cut = trimmed.get(..MAX_NAME).unwrap_or(trimmed);
    cut.trim_end_matches('_').to_string()
}

/// The name of an operation without a usable `operationId`:
/// `get /orders/{order_id}` → `get_orders_order_id`.
pub(crate) fn from_method_path(method: Method, path: &str) -> String {
    let name = sanitise(&format!("{}_{}", method.key(), path));
    if name.is_empty() {
        method.key().to_string()
    } else {
        name
    }
}

/// The names already given in one toolkit.
#[derive(Default)]
pub(crate) struct Names {
    used: HashSet<String>,
}

impl Names {
    /// Reserves `base` (non-empty, at most 64 characters), or the first of
    /// `base_2`, `base_3`… that is free, cutting `base` so the suffix fits.
    pub fn claim(&mut self, base: &str) -> String {
        if self.used.insert(base.to_string()) {
            return base.to_string();
        }
        let mut n: u64 = 2;
        loop {
            let suffix = format!("_{n}");
            let room = MAX_NAME.saturating_sub(suffix.len());
            let stem = base.get(..room).unwrap_or(base);
            let candidate = format!("{stem}{suffix}");
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
    fn names_are_unique_within_64_chars() {
        let mut names = Names::default();
        assert_eq!(names.claim("list"), "list");
        assert_eq!(names.claim("list"), "list_2");
        assert_eq!(names.claim("list"), "list_3");
        let long = "n".repeat(64);
        assert_eq!(names.claim(&long), long);
        let second = names.claim(&long);
        assert_eq!(second, format!("{}_2", "n".repeat(62)));
        assert!(valid(&second));
        // A taken suffixed name is skipped.
        assert_eq!(names.claim("list_2"), "list_2_2");
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
