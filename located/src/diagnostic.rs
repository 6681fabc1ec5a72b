//! Located errors in a workflow file: one `Diagnostic` per problem, with the
//! file, 1-based line and column and the YAML path, and `Diagnostics`, the
//! sorted set a failed load returns. Also the "did you mean" helper every
//! unknown-name message uses.

use std::fmt;
use std::path::PathBuf;

/// One problem in a workflow file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    /// 1-based.
    pub column: usize,
    /// The YAML path of the offending node, e.g. `steps[2].needs[0]`
    /// (empty for the document itself).
    pub path: String,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

/// Every problem found in one workflow file, sorted by line and column.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Sorts by position (stable, so problems at one spot keep their order)
    /// and drops exact repeats.
    pub fn sorted(mut list: Vec<Diagnostic>) -> Diagnostics {
        list.sort_by_key(|d| (d.line, d.column));
        list.dedup();
        Diagnostics(list)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The candidates close to `wanted` (edit distance or case), best first,
/// at most three.
pub fn close_matches<'a, I>(wanted: &str, candidates: I) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let wanted_lower = wanted.to_lowercase();
    let limit = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let lower = c.to_lowercase();
            let d = if lower == wanted_lower {
                0
            } else {
                distance(&wanted_lower, &lower)
            };
            (d <= limit).then_some((d, c))
        })
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    let best = scored.first().map_or(0, |(d, _)| *d);
    let mut out: Vec<String> = Vec::new();
    for (d, c) in scored {
        if d <= best + 1 && !out.iter().any(|o| o == c) && out.len() < 3 {
            out.push(c.to_string());
        }
    }
    out
}

/// `"; did you mean a, b?"`, or `fallback` when nothing is close.
pub fn suggest<'a, I>(wanted: &str, candidates: I, fallback: impl FnOnce() -> String) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    let close = close_matches(wanted, candidates);
    if close.is_empty() {
        fallback()
    } else {
        format!("; did you mean {}?", close.join(", "))
    }
}

/// A list for messages: `a, b, c`, or `(none)`, cut after 20 names.
pub fn list<S: AsRef<str>>(names: &[S]) -> String {
    if names.is_empty() {
        return "(none)".into();
    }
    let shown: Vec<&str> = names.iter().take(20).map(AsRef::as_ref).collect();
    let mut out = shown.join(", ");
    if names.len() > shown.len() {
        out.push_str(&format!(" and {} more", names.len() - shown.len()));
    }
    out
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        let tools = ["listOrders", "listOrdersOData", "getOrder", "createAlert"];
        assert_eq!(close_matches("listOrdrs", tools), vec!["listOrders"]);
        assert_eq!(close_matches("GETORDER", tools), vec!["getOrder"]);
        assert!(close_matches("zzz", tools).is_empty());
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn displays_one_per_line_sorted() {
        let d = |line, column, message: &str| Diagnostic {
            file: "w.yaml".into(),
            line,
            column,
            path: String::new(),
            message: message.into(),
        };
        let all = Diagnostics::sorted(vec![d(3, 1, "b"), d(1, 5, "a"), d(3, 1, "b")]);
        assert_eq!(all.to_string(), "w.yaml:1:5: a\nw.yaml:3:1: b");
    }
}
