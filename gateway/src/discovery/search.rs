//! Ranked search over pooled tools (SPEC §7): BM25F, the field-weighted
//! BM25, over four fields of each tool — its name, its toolkit's name, its
//! description and its parameters' names — tokenised alike: identifiers
//! split on `_`, `-`, `.`, `/` and camelCase, lower-cased, common English
//! words dropped, and a light stemmer folding plurals and verb endings
//! (`invoices` → `invoic`, `listing` → `list`, `sends` → `send`), so a
//! query in plain words meets `GetInvoices` or `chat.postMessage`.
//!
//! Written here rather than taken from a crate: a few thousand short
//! documents need no on-disk index, the field weights are the part that
//! matters, and the index is built once per agent in well under a second.

use std::collections::HashMap;

/// The searchable text of one tool.
#[derive(Debug, Clone, Default)]
pub struct SearchDoc {
    pub name: String,
    pub toolkit: String,
    pub description: String,
    pub params: Vec<String>,
}

/// The fields, their weights and length normalisation.
const FIELDS: usize = 4;
const WEIGHTS: [f64; FIELDS] = [3.0, 1.5, 1.0, 0.6];
const B: [f64; FIELDS] = [0.5, 0.3, 0.75, 0.5];
const K1: f64 = 1.2;

/// An index over documents, by position.
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// Per document, per field: term → frequency, and the field's length.
    docs: Vec<[(HashMap<String, u32>, u32); FIELDS]>,
    /// Documents containing each term (in any field).
    df: HashMap<String, u32>,
    avg_len: [f64; FIELDS],
}

/// One match: the document's position and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f64,
}

impl SearchIndex {
    pub fn new(docs: &[SearchDoc]) -> SearchIndex {
        let mut index = SearchIndex::default();
        let mut total = [0u64; FIELDS];
        for doc in docs {
            let fields = [
                tokens(&doc.name),
                tokens(&doc.toolkit),
                tokens(&first_sentences(&doc.description)),
                doc.params.iter().flat_map(|p| tokens(p)).collect(),
            ];
            let mut seen: Vec<&String> = Vec::new();
            let mut entry: [(HashMap<String, u32>, u32); FIELDS] = Default::default();
            for (f, terms) in fields.iter().enumerate() {
                total[f] += terms.len() as u64;
                entry[f].1 = terms.len() as u32;
                for t in terms {
                    *entry[f].0.entry(t.clone()).or_default() += 1;
                }
            }
            for field in &entry {
                for t in field.0.keys() {
                    if !seen.contains(&t) {
                        seen.push(t);
                    }
                }
            }
            for t in seen {
                *index.df.entry(t.clone()).or_default() += 1;
            }
            index.docs.push(entry);
        }
        let n = docs.len().max(1) as f64;
        for f in 0..FIELDS {
            index.avg_len[f] = (total[f] as f64 / n).max(1.0);
        }
        index
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The best `limit` documents for `query`, best first (ties by
    /// position); documents sharing no term with it are left out.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut terms = tokens(query);
        terms.sort();
        terms.dedup();
        let n = self.docs.len() as f64;
        let mut hits: Vec<Hit> = Vec::new();
        for (i, doc) in self.docs.iter().enumerate() {
            let mut score = 0.0;
            for t in &terms {
                let Some(&df) = self.df.get(t) else { continue };
                let mut tf = 0.0;
                for f in 0..FIELDS {
                    let (freqs, len) = &doc[f];
                    if let Some(&c) = freqs.get(t) {
                        let norm = 1.0 - B[f] + B[f] * f64::from(*len) / self.avg_len[f];
                        tf += WEIGHTS[f] * f64::from(c) / norm;
                    }
                }
                if tf > 0.0 {
                    let idf = ((n - f64::from(df) + 0.5) / (f64::from(df) + 0.5) + 1.0).ln();
                    score += idf * tf / (K1 + tf);
                }
            }
            if score > 0.0 {
                hits.push(Hit { doc: i, score });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        hits.truncate(limit);
        hits
    }
}

/// The description's opening, where what a tool does is said: long
/// descriptions (whole manuals, some of them) would drown the rest.
fn first_sentences(text: &str) -> String {
    text.chars().take(400).collect()
}

/// Words too common to tell tools apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "its",
    "of", "on", "or", "that", "the", "this", "to", "with", "me", "my", "all", "i", "you", "your",
    "can", "will", "which", "their", "these", "those", "some", "any", "using", "via",
];

/// The terms of `text`: identifiers split, lower-cased, stopwords out,
/// stemmed.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in words(text) {
        let lower = word.to_lowercase();
        if lower.len() < 2 && !lower.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if STOPWORDS.contains(&lower.as_str()) {
            continue;
        }
        out.push(stem(&lower));
    }
    out
}

/// Splits on anything not a letter or digit, and inside identifiers at
/// camelCase and letter/digit boundaries (`getHTTPResponse2` → get, HTTP,
/// Response, 2).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = chars_of(chunk);
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                || (prev.is_alphabetic() != cur.is_alphabetic());
            if boundary {
                out.push(chars[start..i].iter().collect());
                start = i;
            }
        }
        if start < chars.len() {
            out.push(chars[start..].iter().collect());
        }
    }
    out
}

fn chars_of(s: &str) -> Vec<char> {
    s.chars().collect()
}

/// A light suffix stemmer: plurals, `-ing`, `-ed`, `-ly`, `-es` and a
/// final `e`, never below three letters.
fn stem(word: &str) -> String {
    let mut w = word.to_string();
    for (suffix, keep) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
        ("ly", ""),
    ] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) && !w.ends_with("ss") {
            w.truncate(w.len() - suffix.len());
            w.push_str(keep);
            break;
        }
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_and_stem_like_plain_words() {
        assert_eq!(tokens("chat.postMessage"), ["chat", "post", "messag"]);
        assert_eq!(tokens("post a message"), ["post", "messag"]);
        assert_eq!(tokens("GetInvoices"), ["get", "invoic"]);
        assert_eq!(tokens("list invoices"), ["list", "invoic"]);
        assert_eq!(tokens("list_repositories"), ["list", "repository"]);
        assert_eq!(tokens("getHTTPResponse2"), ["get", "http", "respons", "2"]);
        assert_eq!(tokens("the sending of emails"), ["send", "email"]);
    }

    #[test]
    fn the_name_outweighs_a_mention_in_a_description() {
        let docs = [
            SearchDoc {
                name: "list_customers".into(),
                description: "Lists every customer.".into(),
                ..SearchDoc::default()
            },
            SearchDoc {
                name: "create_invoice".into(),
                description: "Creates an invoice for a customer.".into(),
                ..SearchDoc::default()
            },
            SearchDoc {
                name: "delete_webhook".into(),
                description: "Deletes a webhook.".into(),
                ..SearchDoc::default()
            },
        ];
        let index = SearchIndex::new(&docs);
        let hits = index.search("customers", 5);
        assert_eq!(hits[0].doc, 0);
        assert_eq!(hits.len(), 2, "the webhook shares no term");
        assert_eq!(index.search("new invoice", 1)[0].doc, 1);
        assert!(index.search("zebra", 5).is_empty());
    }
}
