//! Reading JSON text that is already known to be valid — an item of a set
//! (`crate::items`: every item was cut from text a parser accepted, or
//! written here from validated parts) — without validating it a second
//! time. The top level of an object or array is found by skipping strings
//! and brackets with `memchr`, several times faster than a validating parse;
//! this is what lets shaping read each item once, cheaply, after the split
//! already checked it. On text that is not valid JSON the results are
//! meaningless but safe: no panic, no loop without end, no read past the
//! text; `None` where the structure does not hold together.

use std::borrow::Cow;

use memchr::{memchr2, memchr3};

use crate::json::{JsonText, Key, Object};

/// An object's top level read without a check: keys (unescaped) and value
/// texts, in order. A repeated key is listed each time; `get` gives its last
/// value, as `RawObject` does (merging costs more than shaping needs).
pub type Fields<'a> = Object<'a, &'a str>;

/// The top level of a valid JSON object; `None` when the text is not one.
pub fn object<T: JsonText + ?Sized>(raw: &T) -> Option<Fields<'_>> {
    let text = raw.json();
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    // Most items have a few to a dozen fields: one allocation for them.
    let mut fields = Vec::with_capacity(16);
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(Fields { fields });
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let (end, escaped) = string_end(b, i)?;
        let key = key_text(text.get(i..=end)?, escaped)?;
        i = skip_ws(b, end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let value_end = value_end(b, i)?;
        fields.push((key, text.get(i..value_end)?));
        i = skip_ws(b, value_end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some(Fields { fields }),
            _ => return None,
        }
    }
}

/// The elements of a valid JSON array; `None` when the text is not one.
pub fn array<T: JsonText + ?Sized>(raw: &T) -> Option<Vec<&str>> {
    let text = raw.json();
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let mut out = Vec::new();
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        let end = value_end(b, i)?;
        out.push(text.get(i..end)?);
        i = skip_ws(b, end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b']' => return Some(out),
            _ => return None,
        }
    }
}

/// A key's text without its quotes, unescaped only when it has escapes.
fn key_text(quoted: &str, escaped: bool) -> Option<Key<'_>> {
    if !escaped {
        let inner = quoted.get(1..quoted.len().checked_sub(1)?)?;
        return Some(Key(Cow::Borrowed(inner)));
    }
    serde_json::from_str::<String>(quoted)
        .ok()
        .map(|s| Key(Cow::Owned(s)))
}

pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// The index of the closing quote of the string opening at `start`, and
/// whether the string has escapes.
pub fn string_end(b: &[u8], start: usize) -> Option<(usize, bool)> {
    /// Strings shorter than this are scanned byte by byte: for keys and
    /// short values that is faster than setting up a vector search.
    const SHORT: usize = 24;
    let mut i = start + 1;
    let mut escaped = false;
    loop {
        let short_end = (i + SHORT).min(b.len());
        while i < short_end {
            match b[i] {
                b'"' => return Some((i, escaped)),
                // An escape: the next byte is part of it, whatever it is.
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => i += 1,
            }
        }
        let at = i + memchr2(b'"', b'\\', b.get(i..)?)?;
        match b[at] {
            b'"' => return Some((at, escaped)),
            _ => {
                escaped = true;
                i = at + 2;
            }
        }
    }
}

/// The index just past the value starting at `start`.
pub fn value_end(b: &[u8], start: usize) -> Option<usize> {
    match *b.get(start)? {
        b'"' => string_end(b, start).map(|(e, _)| e + 1),
        open @ (b'{' | b'[') => {
            // In valid JSON brackets nest properly, so only this kind of
            // bracket needs counting (strings are skipped whole).
            let close = if open == b'{' { b'}' } else { b']' };
            let mut depth = 0usize;
            let mut i = start;
            loop {
                let at = i + memchr3(b'"', open, close, b.get(i..)?)?;
                match b[at] {
                    b'"' => i = string_end(b, at)?.0 + 1,
                    c if c == open => {
                        depth += 1;
                        i = at + 1;
                    }
                    _ => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                        i = at + 1;
                    }
                }
            }
        }
        _ => {
            let mut i = start;
            while !matches!(
                b.get(i),
                None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
            ) {
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, RawObject};
    use serde_json::value::RawValue;

    /// What a validating parse gives for the same text.
    fn by_serde(text: &str) -> Vec<(String, String)> {
        let obj: RawObject = serde_json::from_str(text).unwrap();
        obj.fields
            .iter()
            .map(|(k, v)| (k.0.to_string(), v.get().to_string()))
            .collect()
    }

    /// The scan's fields with repeated keys merged as `RawObject` merges
    /// them (shaping reads them through `get`, which takes the last value).
    fn by_scan(text: &str) -> Vec<(String, String)> {
        let mut fields = object(text).unwrap().fields;
        json::merge_duplicates(&mut fields);
        fields
            .iter()
            .map(|(k, v)| (k.0.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn agrees_with_a_validating_parse() {
        for text in [
            r#"{}"#,
            r#" { } "#,
            r#"{"a":1}"#,
            r#"{ "a" : -1.5e3 , "b":"x}\"]{[" ,"c":[1,[2,{"d":"]"}]],"e":{"f":{"g":[]}}}"#,
            r#"{"k\"q":true,"\u00e9":null,"t":"\\","u":"\\\"","v":"é✓"}"#,
            r#"{"dup":1,"dup":2}"#,
            "{\n\t\"a\" :\r\n [ 1 , 2 ] \n}",
        ] {
            assert_eq!(by_scan(text), by_serde(text), "{text}");
        }
        let dup = object(r#"{"dup":1,"dup":2}"#).unwrap();
        assert_eq!(dup.get("dup"), Some("2"));
        let escaped = object(r#"{"k\"q":true}"#).unwrap();
        assert_eq!(escaped.keys().collect::<Vec<_>>(), vec!["k\"q"]);
    }

    #[test]
    fn arrays_agree_too() {
        for text in [r#"[]"#, r#"[1, "a,]", [2, [3]], {"x": "]"}, null ]"#] {
            let raw: &RawValue = serde_json::from_str(text).unwrap();
            let want: Vec<&str> = json::array(raw).unwrap().iter().map(|v| v.get()).collect();
            assert_eq!(array(text).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn not_an_object_or_broken_text_is_none_never_a_panic() {
        assert!(object("[1]").is_none());
        assert!(object("3").is_none());
        assert!(array("{}").is_none());
        for broken in [
            "",
            "{",
            "{\"a",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,",
            "{\"a\" 1}",
            "{\"a\":[1,2}",
            "{\"a\":\"\\",
            "[1,",
            "[",
            "[1 2]",
            "{\"a\":}",
            "}",
            "]]]",
        ] {
            let _ = object(broken);
            let _ = array(broken);
        }
        assert!(object("{\"a\":}").is_none());
        assert!(array("[1 2]").is_none());
    }
}
