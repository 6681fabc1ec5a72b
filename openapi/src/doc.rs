//! The document being imported: its source name, its root value, its
//! version, RFC 6901 JSON pointers into it and local `$ref` lookup. Every
//! import error is built here, so each one names the file and a pointer.

use serde_json::Value;

use dragnet_core::error::Error;

/// Longest chain of `$ref`s to `$ref`s followed before giving up.
const MAX_REF_HOPS: usize = 32;

/// Which family of document this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    Swagger2,
    OpenApi3,
}

/// A parsed document and where it came from.
pub(crate) struct Doc<'a> {
    pub source: &'a str,
    pub root: &'a Value,
    pub version: Version,
}

/// Where a `$ref` led.
#[derive(Debug)]
pub(crate) enum Resolved<'a> {
    /// The value it names, with that value's pointer.
    Found(&'a Value, String),
    /// A reference outside this document (another file, a URL) or a
    /// plain-name fragment (`#anchor`): not followed, the caller stands in
    /// an empty schema.
    Elsewhere,
}

/// `pointer` extended by one object key, escaped per RFC 6901.
pub(crate) fn child(pointer: &str, key: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + key.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `pointer` extended by an array index.
pub(crate) fn index(pointer: &str, i: usize) -> String {
    format!("{pointer}/{i}")
}

impl<'a> Doc<'a> {
    /// An `InvalidDocument` error at `pointer`.
    pub fn invalid(&self, pointer: &str, message: impl Into<String>) -> Error {
        Error::InvalidDocument {
            file: self.source.to_string(),
            pointer: pointer.to_string(),
            message: message.into(),
        }
    }

    /// Follows `value` (at `pointer`) through any chain of `$ref`s to the
    /// value that is not a reference. A value without `$ref` is returned as
    /// is. A local reference that names nothing is an error at the pointer of
    /// the `$ref` member.
    pub fn deref(&self, value: &'a Value, pointer: &str) -> Result<Resolved<'a>, Error> {
        let mut current = value;
        let mut at = pointer.to_string();
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = current.get("$ref") else {
                return Ok(Resolved::Found(current, at));
            };
            let ref_pointer = child(&at, "$ref");
            let Some(reference) = reference.as_str() else {
                return Err(self.invalid(&ref_pointer, "`$ref` must be a string"));
            };
            match self.lookup(reference, &ref_pointer)? {
                Resolved::Found(next, next_at) => {
                    current = next;
                    at = next_at;
                }
                Resolved::Elsewhere => return Ok(Resolved::Elsewhere),
            }
        }
        Err(self.invalid(
            pointer,
            format!("`$ref` chain is longer than {MAX_REF_HOPS} links or loops on itself"),
        ))
    }

    /// Looks up one reference string found at `ref_pointer`.
    fn lookup(&self, reference: &str, ref_pointer: &str) -> Result<Resolved<'a>, Error> {
        let Some(fragment) = reference.strip_prefix('#') else {
            return Ok(Resolved::Elsewhere);
        };
        let fragment = percent_decode(fragment);
        if fragment.is_empty() {
            return Ok(Resolved::Found(self.root, String::new()));
        }
        let Some(rest) = fragment.strip_prefix('/') else {
            return Ok(Resolved::Elsewhere);
        };
        let mut current = self.root;
        let mut at = String::new();
        for token in rest.split('/') {
            let key = token.replace("~1", "/").replace("~0", "~");
            let next = match current {
                Value::Object(map) => map.get(&key),
                Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            let Some(next) = next else {
                let place = if at.is_empty() {
                    "the document root"
                } else {
                    &at
                };
                return Err(self.invalid(
                    ref_pointer,
                    format!("`$ref` `{reference}` does not resolve: no `{key}` in {place}"),
                ));
            };
            current = next;
            at = child(&at, &key);
        }
        Ok(Resolved::Found(current, at))
    }
}

/// Decodes `%XX` escapes (URI fragments may carry them); bad escapes stay.
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(root: &Value) -> Doc<'_> {
        Doc {
            source: "d.json",
            root,
            version: Version::OpenApi3,
        }
    }

    #[test]
    fn pointers_escape() {
        assert_eq!(child("/paths", "/a~b/{id}"), "/paths/~1a~0b~1{id}");
        assert_eq!(index("/p", 3), "/p/3");
    }

    #[test]
    fn follows_chains_and_escapes() {
        let root = json!({"components":{"schemas":{
            "A":{"$ref":"#/components/schemas/B"},
            "B":{"type":"string"},
            "a/b c":{"type":"integer"}}}});
        let d = doc(&root);
        let start = json!({"$ref":"#/components/schemas/A"});
        let Resolved::Found(v, at) = d.deref(&start, "/x").unwrap() else {
            panic!()
        };
        assert_eq!(v["type"], "string");
        assert_eq!(at, "/components/schemas/B");
        let escaped = json!({"$ref":"#/components/schemas/a~1b%20c"});
        let Resolved::Found(v, _) = d.deref(&escaped, "/y").unwrap() else {
            panic!()
        };
        assert_eq!(v["type"], "integer");
    }

    #[test]
    fn dangling_and_looping_refs_are_errors() {
        let root = json!({"components":{"schemas":{
            "L":{"$ref":"#/components/schemas/M"},
            "M":{"$ref":"#/components/schemas/L"}}}});
        let d = doc(&root);
        let dangling = json!({"$ref":"#/components/schemas/Nope"});
        match d.deref(&dangling, "/paths/~1a/get") {
            Err(Error::InvalidDocument {
                pointer, message, ..
            }) => {
                assert_eq!(pointer, "/paths/~1a/get/$ref");
                assert!(message.contains("#/components/schemas/Nope"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let looping = json!({"$ref":"#/components/schemas/L"});
        assert!(d.deref(&looping, "/z").is_err());
    }

    #[test]
    fn remote_refs_are_elsewhere() {
        let root = json!({});
        let d = doc(&root);
        let remote = json!({"$ref":"other.yaml#/components/schemas/A"});
        assert!(matches!(d.deref(&remote, ""), Ok(Resolved::Elsewhere)));
        assert!(matches!(
            d.deref(&json!({"$ref":"#anchor"}), ""),
            Ok(Resolved::Elsewhere)
        ));
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%C3%A9"), "é");
    }
}
