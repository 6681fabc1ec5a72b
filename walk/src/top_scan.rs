//! A quick look at a page's top level before parsing it: the keys of the
//! top-level object and the kind of each value, found by a byte scan that
//! tracks only strings and nesting. It does not validate (the one-pass split
//! that follows does) and gives up — returning `None` — on anything it does
//! not expect, such as an escaped key, so callers fall back to the full read.

use dragnet_core::json::Kind;
use dragnet_core::json_scan::{skip_ws, value_end};

/// The index of the closing quote of the string opening at `start`.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    dragnet_core::json_scan::string_end(b, start).map(|(end, _)| end)
}

/// The top-level keys, in order, with the kind of each value.
pub fn top_level_kinds(text: &str) -> Option<Vec<(&str, Kind)>> {
    scan_until(text, |_, _| false)
}

/// The top-level keys up to and including the first one for which `stop`
/// holds (its value is not scanned), or all of them.
pub fn scan_until(text: &str, stop: impl Fn(&str, Kind) -> bool) -> Option<Vec<(&str, Kind)>> {
    let mut out = Vec::new();
    scan(text, |key, kind, _| {
        out.push((key, kind));
        stop(key, kind)
    })?;
    Some(out)
}

/// Where the value of the first top-level `key` holding an array starts
/// (its `[`), as a one-pass split along `[key]` would find it. `None` when
/// there is none, or the scan gives up (an escaped key, a broken page).
pub fn array_value_at(text: &str, key: &str) -> Option<usize> {
    let mut at = None;
    scan(text, |name, kind, value| {
        let found = name == key && kind == Kind::Array;
        if found {
            at = Some(value);
        }
        found
    })?;
    at
}

/// The raw text of the top-level `key`'s value (a repeated key reads as
/// its last value, as everywhere dragnet reads an object): `Some(None)`
/// when the key is absent, `None` when the scan gives up. For text a
/// validating read has already accepted (a page the walk split).
pub fn value_text<'t>(text: &'t str, key: &str) -> Option<Option<&'t str>> {
    let mut start = None;
    scan(text, |name, _, value| {
        if name == key {
            start = Some(value);
        }
        false
    })?;
    let Some(start) = start else {
        return Some(None);
    };
    let end = value_end(text.as_bytes(), start)?;
    Some(Some(&text[start..end]))
}

/// Visits the top-level keys in order with the kind of each value and
/// where it starts, until `visit` says stop (`Some(true)`) or the object
/// ends (`Some(false)`); `None` when the scan gives up.
fn scan<'t>(text: &'t str, mut visit: impl FnMut(&'t str, Kind, usize) -> bool) -> Option<bool> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(false);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let end = string_end(b, i)?;
        let key = &text[i + 1..end];
        if key.contains('\\') {
            return None;
        }
        i = skip_ws(b, end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let kind = match b.get(i)? {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b'"' => Kind::String,
            b't' | b'f' => Kind::Bool,
            b'n' => Kind::Null,
            _ => Kind::Number,
        };
        if visit(key, kind, i) {
            return Some(true);
        }
        i = skip_ws(b, value_end(b, i)?);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some(false),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_kinds_in_order() {
        let text = r#" { "meta" : {"total": 3, "s": "a}\"b"}, "data": [ {"x": "]"} ], "n": -1.5e3, "ok": true, "z": null, "t": "x" } "#;
        let kinds = top_level_kinds(text).unwrap();
        assert_eq!(
            kinds,
            vec![
                ("meta", Kind::Object),
                ("data", Kind::Array),
                ("n", Kind::Number),
                ("ok", Kind::Bool),
                ("z", Kind::Null),
                ("t", Kind::String)
            ]
        );
        assert_eq!(top_level_kinds("{}").unwrap(), vec![]);
        let until = scan_until(text, |k, _| k == "data").unwrap();
        assert_eq!(until.last(), Some(&("data", Kind::Array)));
        assert_eq!(until.len(), 2);
    }

    #[test]
    fn where_an_array_value_starts() {
        let text = r#"{"data": 5, "meta": {"data": []}, "data" : [1]}"#;
        assert_eq!(array_value_at(text, "data"), text.find("[1]"));
        assert_eq!(array_value_at(text, "rows"), None);
        assert_eq!(array_value_at(r#"{"a\"b": 1, "data": []}"#, "data"), None);
        assert_eq!(array_value_at("[1]", "data"), None);
    }

    #[test]
    fn a_values_text_is_its_last_occurrence() {
        let text = r#"{"next": "a", "meta": {"next": null}, "next" : {"x": [1, "}"]} , "n": 7}"#;
        assert_eq!(value_text(text, "next"), Some(Some(r#"{"x": [1, "}"]}"#)));
        assert_eq!(value_text(text, "n"), Some(Some("7")));
        assert_eq!(value_text(text, "none"), Some(None));
        assert_eq!(value_text(r#"{"a\"b": 1, "n": 2}"#, "n"), None);
        assert_eq!(value_text("[1]", "n"), None);
    }

    #[test]
    fn gives_up_rather_than_guess() {
        assert!(top_level_kinds("[1]").is_none());
        assert!(top_level_kinds(r#"{"a\"b": 1}"#).is_none());
        assert!(top_level_kinds(r#"{"a": [1, 2"#).is_none());
        assert!(top_level_kinds(r#"{"a" 1}"#).is_none());
        assert!(top_level_kinds("").is_none());
    }
}
