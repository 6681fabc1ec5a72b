//! The filter and field-path parsers, then both applied to an item.
//! Input lines: 1) a CLI filter clause `field op value`; 2) comma-separated
//! dot-paths for `_fields`; 3) a JSON filter (`[{field, op, value}]`);
//! the rest) one item as JSON. The item's top level read by the trusted
//! scanner (`json_scan`, used in shaping) must agree with a validating parse.
#![no_main]
#![forbid(unsafe_code)]

use dragnet_walk::fields::Projection;
use dragnet_walk::filter::Filter;
use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(4, '\n');
    let clause_text = lines.next().unwrap_or("");
    let paths_text = lines.next().unwrap_or("");
    let json_filter = lines.next().unwrap_or("");
    let item_text = lines.next().unwrap_or("");

    let mut clauses = Vec::new();
    if let Ok(c) = Filter::clause_from_text(0, clause_text) {
        clauses.push(c);
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(json_filter) {
        if let Ok(f) = Filter::from_json(&v) {
            clauses.extend(f.clauses);
        }
    }
    let filter = Filter { clauses };
    let paths: Vec<String> = if paths_text.is_empty() {
        Vec::new()
    } else {
        paths_text.split(',').map(str::to_string).collect()
    };
    let projection = Projection::new(&paths).ok();

    let Ok(item) = serde_json::from_str::<&RawValue>(item_text) else {
        return;
    };
    let by_serde = dragnet_core::json::object(item);
    let by_scan = dragnet_core::json_scan::object(item.get()).map(|mut f| {
        dragnet_core::json::merge_duplicates(&mut f.fields);
        f
    });
    match (by_serde, by_scan) {
        (None, None) => {}
        (Some(a), Some(b)) => {
            assert_eq!(a.fields.len(), b.fields.len());
            for ((ka, va), (kb, vb)) in a.fields.iter().zip(&b.fields) {
                assert_eq!(ka, kb);
                assert_eq!(va.get(), *vb);
            }
        }
        (a, b) => panic!("the scanner and the parser disagree: {a:?} vs {b:?}"),
    }
    if let Ok(list) = serde_json::from_str::<Vec<&RawValue>>(item.get()) {
        let scanned = dragnet_core::json_scan::array(item.get()).expect("a valid array scans");
        assert!(list.iter().map(|v| v.get()).eq(scanned.iter().copied()));
    }
    let _ = filter.matches(item);
    if let Some(p) = projection {
        let (rows, _unmatched) = p.apply([item.get()]);
        let _ = rows;
    }
});
