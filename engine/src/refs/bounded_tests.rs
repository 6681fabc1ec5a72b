//! The bounded evaluator against jsonpath-rust: identical results over a
//! set of paths and documents, and refs past a limit failing with the ref
//! and the limit named.

use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::JsonPath;
use serde_json::{json, Value};

use super::bounded::{query, Exceeded, Limits};
use super::{query_with, RefExpr, Scope};
use crate::step_id::StepId;

fn documents() -> Vec<Value> {
    vec![
        json!({
            "data": [
                {"id": 1, "total": 600, "status": "open",
                 "customer": {"name": "A", "tags": ["x", "y"]},
                 "lines": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 1}]},
                {"id": 2, "total": 120.5, "status": "closed",
                 "customer": {"name": "Bo", "tags": []}, "lines": []},
                {"id": 3, "total": 900, "status": "open",
                 "customer": {"name": "C", "tags": ["y"]},
                 "lines": [{"sku": "c", "qty": 5}]},
                {"id": 4, "total": null, "status": "open", "customer": null}
            ],
            "meta": {"total": 4, "page": 1, "next": null},
            "_loop": {"complete": true, "itemCount": 4}
        }),
        json!({"store": {
            "book": [
                {"category": "reference", "author": "Rees", "price": 8.95},
                {"category": "fiction", "author": "Waugh", "price": 12.99},
                {"category": "fiction", "author": "Melville", "isbn": "0-553", "price": 8.99}
            ],
            "bicycle": {"color": "red", "price": 19.95}
        }, "expensive": 10}),
        json!([[1, 2], [3, [4, 5]], {"a": [6, 7], "b": {"a": 8}}, "s", null, []]),
        json!({"e": [], "o": {}, "n": null, "s": "str", "z": 0, "deep": {"a": {"a": {"a": {"a": {"x": 1, "a": [1, {"x": 2}]}}}}}}),
        json!({"data": (0..40).map(|i| json!({"id": i, "v": i % 7, "tags": [i % 3, i % 5]})).collect::<Vec<_>>()}),
    ]
}

const PATHS: &[&str] = &[
    "$",
    "$.*",
    "$..*",
    "$[*]",
    "$.data[*].id",
    "$.data[*]",
    "$.data[0,2].id",
    "$.data[*]['id','total']",
    "$.data[2,0,2]",
    "$['data'][*]['id']",
    "$.data[-1]",
    "$.data[-5]",
    "$.data[-40]",
    "$.data[5]",
    "$.data[1:]",
    "$.data[:2]",
    "$.data[::-1].id",
    "$.data[::2]",
    "$.data[-2:]",
    "$.data[5:1:-2]",
    "$.data[10:2:-3].id",
    "$.data[-100:100]",
    "$.data[100:-100:-1]",
    "$.data[::0]",
    "$.data[?@.total > 500].id",
    "$.data[?(@.total > 500)].id",
    "$.data[?@.status == 'open' && @.total < 1000]",
    "$.data[?@.id == 1 || @.id == 3].total",
    "$.data[?!@.lines]",
    "$.data[?@.customer.tags]",
    "$.data[?@.customer.tags[0] == 'y'].id",
    "$.data[?@.lines[?@.qty > 1]].id",
    "$.data[?count(@.lines[*]) > 1].id",
    "$.data[?length(@.customer.name) == 1].id",
    "$.data[?length(@.lines) == 0].id",
    "$.data[?match(@.status, 'op.*')].id",
    "$.data[?search(@.customer.name, 'B')].id",
    "$.data[?value(@..sku) == 'c'].id",
    "$.data[?@.total > $.meta.total].id",
    "$.data[?@.id > $.data[0].id].id",
    "$.data[?count($..sku) == 3].id",
    "$.data[?@.v == 3].id",
    "$.data[?@.tags[?@ == 0]].id",
    "$.data[*].lines[*][?@ == 'a']",
    "$.data[*].customer[*]",
    "$..id",
    "$..[?@.qty]",
    "$..[?@.qty > 1].sku",
    "$..lines[*].sku",
    "$..*..id",
    "$..['a','x']",
    "$..a",
    "$..a[*]",
    "$..[0]",
    "$..[-1]",
    "$..[1:]",
    "$..[?@ > 1]",
    "$..[?@..x]",
    "$..[?@.x == 2]",
    "$.meta.*",
    "$.*[*]",
    "$.*.*",
    "$.store.book[?@.isbn].author",
    "$.store.book[?@.price < $.expensive].author",
    "$.store..price",
    "$..book[0,1].author",
    "$..book[:2]",
    "$.o[*]",
    "$.e[*]",
    "$.n[*]",
    "$.s[0]",
    "$.z[?@]",
    "$.deep..a",
    "$.deep..x",
    "$[0][*]",
    "$[1][1][0]",
    "$[?@[0] == 1]",
    "$[?@.a]",
    "$[*][?@ > 2]",
    "$[?@[?@ > 1]]",
    "$.data[?@[?@ == 2]]",
    "$..[?@..[?@ > 5]]",
    "$..[?@..x]..x",
    "$.data[?$.meta.next == null].id",
    "$.data[?@.id == $.meta.total].id",
    "$.data[?@.id > 2, 0].id",
    "$.data[1, ?@.v == 3, -1].id",
    "$['_loop']['complete']",
    "$[\"meta\"].*",
    "$..[?@.id > 35][?@ == 0]",
];

#[test]
fn every_path_matches_jsonpath_rust_on_every_document() {
    let mut compared = 0;
    for doc in documents() {
        for path in PATHS {
            let parsed = parse_json_path(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let ours = query(&parsed, &doc, Limits::default())
                .unwrap_or_else(|e| panic!("{path} on {doc}: {e}"));
            let theirs = doc.query(path).unwrap();
            assert_eq!(ours, theirs, "{path} on {doc}");
            compared += usize::from(!theirs.is_empty());
        }
    }
    assert!(compared > 140, "most paths match something: {compared}");
}

/// A small deterministic generator of documents (no dependency needed).
struct Gen(u64);

impl Gen {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }

    fn value(&mut self, depth: u32) -> Value {
        const KEYS: [&str; 6] = ["a", "x", "id", "qty", "sku", "data"];
        let kind = if depth == 0 {
            self.next(4)
        } else {
            self.next(7)
        };
        match kind {
            0 => json!(self.next(8)),
            1 => json!(["a", "b", "c"][self.next(3) as usize]),
            2 => Value::Null,
            3 => json!(self.next(2) == 0),
            4 | 5 => (0..self.next(5)).map(|_| self.value(depth - 1)).collect(),
            _ => {
                let mut map = serde_json::Map::new();
                for _ in 0..self.next(5) {
                    let k = KEYS[self.next(KEYS.len() as u64) as usize];
                    let v = self.value(depth - 1);
                    map.insert(k.to_string(), v);
                }
                Value::Object(map)
            }
        }
    }
}

#[test]
fn generated_documents_give_the_same_answers() {
    let mut generator = Gen(7);
    let mut compared = 0;
    for _ in 0..300 {
        let doc = generator.value(5);
        for path in PATHS {
            let parsed = parse_json_path(path).unwrap();
            let ours = query(&parsed, &doc, Limits::default()).unwrap();
            let theirs = doc.query(path).unwrap();
            assert_eq!(ours, theirs, "{path} on {doc}");
            compared += usize::from(!theirs.is_empty());
        }
    }
    assert!(compared > 1_200, "most paths match something: {compared}");
}

/// `{"a": {"a": … {"a": 1}}}`, `depth` objects deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| json!({ "a": inner }))
}

fn scope_with(step: &str, output: &Value) -> Scope {
    let mut s = Scope::default();
    s.steps.insert(
        StepId(step.into()),
        dragnet_core::Document::from_value(output),
    );
    s
}

#[test]
fn a_path_that_explodes_over_a_deep_output_fails_naming_the_ref() {
    let s = scope_with("a", &nested(60));
    for text in ["$.steps.a..*..*..*..*", "$.steps.a..*..*..*..*..*..*"] {
        let err = s.resolve(&RefExpr::parse(text).unwrap()).unwrap_err().0;
        assert_eq!(
            err,
            format!(
                "`{text}` visits more than 1000000 nodes, the limit for one ref; narrow the \
                 path (fewer `..` and wildcards) or read a smaller part of the output"
            )
        );
    }
    // the same output is fine read with a path that stays in bounds
    let r = RefExpr::parse("$.steps.a..*..*").unwrap();
    let found = s.resolve(&r).unwrap();
    let expected = nested(60).query("$..*..*").unwrap().len();
    assert_eq!(found.as_array().unwrap().len(), expected);
}

#[test]
fn too_many_values_fail_naming_the_ref_and_the_limit() {
    let output = json!({"data": (0..100_001).collect::<Vec<_>>()});
    let s = scope_with("x", &output);
    let err = s
        .resolve(&RefExpr::parse("$.steps.x.data[*]").unwrap())
        .unwrap_err()
        .0;
    assert!(
        err.starts_with(
            "`$.steps.x.data[*]` produces more than 100000 values, the limit for one ref"
        ),
        "{err}"
    );
    // one fewer is within the limit
    let output = json!({"data": (0..100_000).collect::<Vec<_>>()});
    let s = scope_with("x", &output);
    let found = s.resolve(&RefExpr::parse("$.steps.x.data[*]").unwrap());
    assert_eq!(found.unwrap().as_array().unwrap().len(), 100_000);
}

#[test]
fn the_queries_inside_a_filter_count_too() {
    // Each of the 200 candidates makes the filter walk the whole document:
    // cheap per candidate, 200 × 800 nodes in all.
    let doc =
        json!({"data": (0..200).map(|i| json!({"id": i, "x": [1, 2, 3]})).collect::<Vec<_>>()});
    let r = RefExpr::parse("$.inputs.data[?count($..*) > 0]").unwrap();
    let tight = Limits {
        nodes_visited: 10_000,
        values_produced: 100_000,
    };
    let err = query_with(&doc, &r, tight).unwrap_err().0;
    assert!(err.contains("visits more than 10000 nodes"), "{err}");
    // a plain filter over the same candidates is well within that limit,
    // and gives jsonpath-rust's answer
    let r = RefExpr::parse("$.inputs.data[?@.id > 195].id").unwrap();
    assert_eq!(
        query_with(&doc, &r, tight).unwrap(),
        json!([196, 197, 198, 199])
    );
    // and with the default limits the expensive one is answered
    let path = parse_json_path("$.data[?count($..*) > 0].id").unwrap();
    let ours = query(&path, &doc, Limits::default()).unwrap();
    assert_eq!(ours, doc.query("$.data[?count($..*) > 0].id").unwrap());
}

#[test]
fn the_limit_is_reported_by_kind() {
    let doc = nested(30);
    let path = parse_json_path("$..*..*..*").unwrap();
    let limits = Limits {
        nodes_visited: 500,
        values_produced: 10,
    };
    assert_eq!(
        query(&path, &doc, limits),
        Err(Exceeded::NodesVisited { limit: 500 })
    );
    let limits = Limits {
        nodes_visited: 1_000_000,
        values_produced: 10,
    };
    assert_eq!(
        query(&path, &doc, limits),
        Err(Exceeded::ValuesProduced { limit: 10 })
    );
}
