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
//! The fifth field is what the tool does, in verbs of its HTTP method
//! (`POST` → create, add, send, open…), so "open a pull request" meets
//! `Pull Requests_Create` and "remove a user" a `DELETE`. A tool whose name
//! the request covers gains up to half its score again: names are short
//! and say what a tool does.

use std::collections::HashMap;

/// The searchable text of one tool.
#[derive(Debug, Clone, Default)]
pub struct SearchDoc {
    pub name: String,
    pub toolkit: String,
    pub description: String,
    pub params: Vec<String>,
    /// What the tool does to its resource, in verbs: `verbs_of` its HTTP
    /// method, for tools that have one.
    pub action: String,
}

/// The verbs a request may use for what an HTTP method does.
pub fn verbs_of(method: &str) -> &'static str {
    match method.to_ascii_uppercase().as_str() {
        "GET" => "get list fetch show",
        "POST" => "create add new open",
        "PUT" | "PATCH" => "update set edit change modify replace",
        "DELETE" => "delete remove",
        _ => "",
    }
}

/// The fields (name, toolkit, description, parameters, action), their
/// weights and length normalisation.
const FIELDS: usize = 5;
const WEIGHTS: [f64; FIELDS] = [3.0, 1.5, 1.0, 0.6, 0.8];
const B: [f64; FIELDS] = [0.5, 0.3, 0.75, 0.5, 0.0];
const K1: f64 = 1.2;
/// How much a name wholly covered by the request adds (a share of it).
const COVERAGE: f64 = 0.5;

/// An index over documents, by position: postings per term.
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// Per term: the documents holding it, with its frequency per field.
    postings: HashMap<String, Vec<(u32, [u16; FIELDS])>>,
    /// Per document: each field's length, and its name's distinct terms.
    lengths: Vec<[u32; FIELDS]>,
    names: Vec<Vec<String>>,
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
        for (i, doc) in docs.iter().enumerate() {
            let fields = [
                tokens(&doc.name),
                tokens(&doc.toolkit),
                tokens(&first_sentences(&doc.description)),
                doc.params.iter().flat_map(|p| tokens(p)).collect(),
                tokens(&doc.action),
            ];
            let mut freqs: HashMap<&str, [u16; FIELDS]> = HashMap::new();
            let mut lengths = [0u32; FIELDS];
            for (f, terms) in fields.iter().enumerate() {
                total[f] += terms.len() as u64;
                lengths[f] = u32::try_from(terms.len()).unwrap_or(u32::MAX);
                for t in terms {
                    let tf = &mut freqs.entry(t.as_str()).or_default()[f];
                    *tf = tf.saturating_add(1);
                }
            }
            let doc_id = u32::try_from(i).unwrap_or(u32::MAX);
            for (t, tf) in freqs {
                index
                    .postings
                    .entry(t.to_string())
                    .or_default()
                    .push((doc_id, tf));
            }
            let mut name = fields[0].clone();
            name.sort();
            name.dedup();
            index.names.push(name);
            index.lengths.push(lengths);
        }
        let n = docs.len().max(1) as f64;
        for (avg, total) in index.avg_len.iter_mut().zip(total) {
            *avg = (total as f64 / n).max(1.0);
        }
        index
    }

    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// The best `limit` documents for `query`, best first (ties by
    /// position); documents sharing no term with it are left out.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut terms = tokens(query);
        terms.sort();
        terms.dedup();
        let n = self.lengths.len() as f64;
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for t in &terms {
            let Some(list) = self.postings.get(t) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for (doc, freqs) in list {
                let lengths = &self.lengths[*doc as usize];
                let mut tf = 0.0;
                for f in 0..FIELDS {
                    if freqs[f] > 0 {
                        let norm = 1.0 - B[f] + B[f] * f64::from(lengths[f]) / self.avg_len[f];
                        tf += WEIGHTS[f] * f64::from(freqs[f]) / norm;
                    }
                }
                *scores.entry(*doc).or_default() += idf * tf / (K1 + tf);
            }
        }
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .map(|(doc, score)| {
                // A name the request covers is the tool it describes:
                // `CreatePost` for "create a post in a channel" rather
                // than `GetPostsForChannel`.
                let name = &self.names[doc as usize];
                let covered = name.iter().filter(|t| terms.contains(t)).count();
                let coverage = covered as f64 / name.len().max(1) as f64;
                Hit {
                    doc: doc as usize,
                    score: score * (1.0 + COVERAGE * coverage),
                }
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        hits.truncate(limit);
        hits
    }
}

/// The description's first sentence (its summary, for imported tools),
/// where what a tool does is said: the rest (whole manuals, some of them)
/// would drown it.
fn first_sentences(text: &str) -> String {
    let end = text
        .find(['\n'])
        .into_iter()
        .chain(text.find(". "))
        .min()
        .unwrap_or(text.len());
    text[..end].chars().take(200).collect()
}

/// Words too common to tell tools apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "with", "me", "my", "all", "i", "you",
    "your", "can", "will", "which", "their", "these", "those", "some", "any", "using", "via",
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
