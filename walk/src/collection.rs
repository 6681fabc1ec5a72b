//! Finding the collection in a response (SPEC §3.2).

mod split;
pub mod stream;

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::top_scan;
use dragnet_core::json::{self, Kind, RawObject};
use dragnet_core::paging::keys::{COLLECTION_KEYS, METADATA_KEYS};
use dragnet_core::payload::{Envelope, EnvelopeField};
pub use split::{split_keeping_fields, split_keeping_fields_on, split_text, PARALLEL_BYTES};

/// Keys that declare how many rows the collection has in all.
pub const TOTAL_KEYS: [&str; 6] = [
    "total",
    "total_count",
    "totalCount",
    "count",
    "totalResults",
    "@odata.count",
];
/// Envelope objects that may hold a total.
const TOTAL_HOLDERS: [&str; 2] = ["meta", "pagination"];
/// Where the collection sits: `[]` for a top-level array, else object keys.
pub type ItemsPath = Vec<String>;

pub fn path_text(path: &[String]) -> String {
    if path.is_empty() {
        "$".to_string()
    } else {
        path.join(".")
    }
}

/// One page of a response, split into its parts.
#[derive(Debug)]
pub struct Page<'a> {
    pub items: Vec<&'a RawValue>,
    /// The total the page declares, if any.
    pub total: Option<u64>,
    /// What the page says about the rows after it: `Some(false)` is an
    /// explicit end signal, `Some(true)` says more follow, `None` says
    /// nothing (`end_signal` lists the keys).
    pub next_hint: Option<bool>,
}

/// What the tool's response schema says about the collection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Declared<'a> {
    /// The schema declares the array at this path.
    At(&'a [String]),
    /// The schema declares a single resource: no collection.
    Resource,
    /// Nothing to go on; `list_like` says the tool has paging parameters,
    /// which allows the "single array of objects" rule.
    Unknown { list_like: bool },
}

/// Finds the collection on page one (SPEC §3.2, in order): an explicit path,
/// the path the response schema declares, a top-level array, a known key at
/// the top, a known key one level down, the single array of objects near the
/// top (for list operations only). `None` when the response has no
/// collection.
pub fn locate(
    root: &RawValue,
    explicit: Option<&[String]>,
    declared: Declared,
) -> Option<ItemsPath> {
    if json::kind(root) == Kind::Array {
        let wants_inside = explicit.is_some_and(|p| !p.is_empty());
        return (!wants_inside && declared != Declared::Resource).then(Vec::new);
    }
    locate_in(&json::object(root)?, explicit, declared)
}

/// `locate` over an object whose top level is already parsed.
pub fn locate_in(
    top: &RawObject,
    explicit: Option<&[String]>,
    declared: Declared,
) -> Option<ItemsPath> {
    if let Some(path) = explicit {
        return resolve_in(top, path).map(|_| path.to_vec());
    }
    let list_like = match declared {
        // A declared collection that is not there is never guessed at.
        Declared::At(path) => return resolve_in(top, path).map(|_| path.to_vec()),
        Declared::Resource => return None,
        Declared::Unknown { list_like } => list_like,
    };
    if let Some(key) = known_array_key(top) {
        return Some(vec![key]);
    }
    for (key, value) in &top.fields {
        if is_metadata(&key.0) {
            continue;
        }
        if let Some(inner) = json::object(value) {
            if let Some(inner_key) = known_array_key(&inner) {
                return Some(vec![key.0.to_string(), inner_key]);
            }
        }
    }
    if list_like {
        single_array_of_objects(top)
    } else {
        None
    }
}

/// Page one in one pass when the top-level rules settle where the
/// collection is: a quick scan of the top-level keys finds it, then the page
/// is split along it. `Ok(None)` when only the full read can tell.
fn first_page_fast<'a>(
    text: &'a str,
    explicit: Option<&[String]>,
    declared: Declared,
) -> Result<Option<(ItemsPath, Envelope, Page<'a>)>, serde_json::Error> {
    // The key a caller or the schema names, else the first collection key
    // holding an array: the scan stops there, before the collection itself.
    let target: Option<&str> = match (explicit, declared) {
        (Some([key]), _) | (None, Declared::At([key])) => Some(key.as_str()),
        (Some(_), _) | (None, Declared::Resource) | (None, Declared::At(_)) => return Ok(None),
        (None, Declared::Unknown { .. }) => None,
    };
    let found = top_scan::scan_until(text, |key, kind| match target {
        Some(t) => key == t,
        None => kind == Kind::Array && COLLECTION_KEYS.contains(&key) && !is_metadata(key),
    });
    let settled = |key: &str| match target {
        Some(t) => key == t,
        None => COLLECTION_KEYS.contains(&key) && !is_metadata(key),
    };
    let path: Vec<String> = match found.as_deref().and_then(<[_]>::last) {
        Some((key, Kind::Array)) if settled(key) => vec![(*key).to_string()],
        _ => return Ok(None),
    };
    let Some((page, top, position)) = split_keeping_fields(text, &path)? else {
        return Ok(None);
    };
    let envelope = envelope_around(&top, &path[0], position);
    Ok(Some((path, envelope, page)))
}

/// The envelope of a page split along a one-key path: the other top-level
/// fields (as `split_keeping_fields` returned them) with the collection put
/// back at `position`.
pub fn envelope_around(top: &RawObject, key: &str, position: usize) -> Envelope {
    let mut fields: Vec<(String, EnvelopeField)> = top
        .fields
        .iter()
        .map(|(k, v)| (k.0.to_string(), EnvelopeField::Raw((*v).to_owned())))
        .collect();
    fields.insert(
        position.min(fields.len()),
        (key.to_string(), EnvelopeField::Collection),
    );
    Envelope::Object(fields)
}

/// The array at a non-empty `path` under a parsed top level.
fn resolve_in<'a>(top: &RawObject<'a>, path: &[String]) -> Option<Vec<&'a RawValue>> {
    let (first, rest) = path.split_first()?;
    let mut current = top.get(first)?;
    for key in rest {
        current = json::object(current)?.get(key)?;
    }
    json::array(current)
}

/// Page one, read in two passes (the top level, then the collection): where
/// the collection is, the envelope around it, and the page itself. `Ok(None)`
/// when the response has no collection; `Err` when it is not JSON.
pub fn first_page<'a>(
    text: &'a str,
    explicit: Option<&[String]>,
    declared: Declared,
) -> Result<Option<(ItemsPath, Envelope, Page<'a>)>, serde_json::Error> {
    match text.trim_start().as_bytes().first() {
        Some(b'[') => {
            let wants_inside = explicit.is_some_and(|p| !p.is_empty());
            if wants_inside || declared == Declared::Resource {
                let _: IgnoredAny = serde_json::from_str(text)?;
                return Ok(None);
            }
            Ok(split_text(text, &[])?.map(|page| (Vec::new(), Envelope::Bare, page)))
        }
        Some(b'{') => {
            if let Some(found) = first_page_fast(text, explicit, declared)? {
                return Ok(Some(found));
            }
            let top: RawObject<'a> = serde_json::from_str(text)?;
            let Some(path) = locate_in(&top, explicit, declared) else {
                return Ok(None);
            };
            let Some(items) = resolve_in(&top, &path) else {
                return Ok(None);
            };
            let envelope = Envelope::Object(fields_of(&top, &path));
            let page = Page {
                items,
                total: declared_total(&top),
                next_hint: next_hint(&top),
            };
            Ok(Some((path, envelope, page)))
        }
        _ => {
            let _: IgnoredAny = serde_json::from_str(text)?;
            Ok(None)
        }
    }
}

/// The array at `path`, parsed one level; `None` if the path does not lead
/// to an array.
pub fn resolve<'a>(root: &'a RawValue, path: &[String]) -> Option<Vec<&'a RawValue>> {
    let mut current = root;
    for key in path {
        current = json::object(current)?.get(key)?;
    }
    json::array(current)
}

/// Splits a page along `path` (found on page one) into items, total and
/// next-page hint. `None` when the page lacks the collection.
pub fn split<'a>(root: &'a RawValue, path: &[String]) -> Option<Page<'a>> {
    split_text(root.get(), path).ok().flatten()
}

/// Builds the envelope of page one around `path`.
pub fn envelope(root: &RawValue, path: &[String]) -> Envelope {
    match path.split_first() {
        None => Envelope::Bare,
        Some(_) => Envelope::Object(fields_around(root, path)),
    }
}

fn fields_around(raw: &RawValue, path: &[String]) -> Vec<(String, EnvelopeField)> {
    match json::object(raw) {
        Some(obj) => fields_of(&obj, path),
        None => Vec::new(),
    }
}

fn fields_of(obj: &RawObject, path: &[String]) -> Vec<(String, EnvelopeField)> {
    obj.fields
        .iter()
        .map(|(key, value)| {
            let field = match path.split_first() {
                Some((head, rest)) if *head == key.0 => {
                    if rest.is_empty() {
                        EnvelopeField::Collection
                    } else {
                        EnvelopeField::Nested(fields_around(value, rest))
                    }
                }
                _ => EnvelopeField::Raw((*value).to_owned()),
            };
            (key.0.to_string(), field)
        })
        .collect()
}

/// The declared total at the top level or in `meta`/`pagination`.
pub fn declared_total(top: &RawObject) -> Option<u64> {
    let direct = TOTAL_KEYS
        .iter()
        .find_map(|k| top.get(k).and_then(as_count));
    direct.or_else(|| {
        TOTAL_HOLDERS.iter().find_map(|holder| {
            let inner = json::object(top.get(holder)?)?;
            TOTAL_KEYS
                .iter()
                .find_map(|k| inner.get(k).and_then(as_count))
        })
    })
}

/// What the page says about the rows after it (see `end_signal`).
pub fn next_hint(top: &RawObject) -> Option<bool> {
    crate::end_signal::more_follow(top)
}

fn as_count(raw: &RawValue) -> Option<u64> {
    let text = raw.get().trim();
    let text = text.trim_matches('"');
    text.parse::<u64>().ok().or_else(|| {
        text.parse::<f64>()
            .ok()
            .filter(|f| *f >= 0.0)
            .map(|f| f as u64)
    })
}

fn is_metadata(key: &str) -> bool {
    METADATA_KEYS.contains(&key)
}

fn known_array_key(obj: &RawObject) -> Option<String> {
    obj.fields
        .iter()
        .find(|(k, v)| {
            COLLECTION_KEYS.contains(&k.0.as_ref())
                && !is_metadata(&k.0)
                && json::kind(v) == Kind::Array
        })
        .map(|(k, _)| k.0.to_string())
}

/// The one array of objects at the top or one level down, if exactly one.
fn single_array_of_objects(top: &RawObject) -> Option<ItemsPath> {
    let mut found: Vec<ItemsPath> = Vec::new();
    for (key, value) in &top.fields {
        if is_metadata(&key.0) {
            continue;
        }
        if is_array_of_objects(value) {
            found.push(vec![key.0.to_string()]);
        } else if let Some(inner) = json::object(value) {
            for (inner_key, inner_value) in &inner.fields {
                if !is_metadata(&inner_key.0) && is_array_of_objects(inner_value) {
                    found.push(vec![key.0.to_string(), inner_key.0.to_string()]);
                }
            }
        }
        if found.len() > 1 {
            return None;
        }
    }
    found.pop()
}

fn is_array_of_objects(raw: &RawValue) -> bool {
    if json::kind(raw) != Kind::Array {
        return false;
    }
    let inner = raw.get().trim_start();
    inner[1..].trim_start().starts_with('{')
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: Declared = Declared::Unknown { list_like: true };

    fn raw(text: &str) -> Box<RawValue> {
        serde_json::from_str(text).unwrap()
    }
    fn path(p: &[&str]) -> Option<ItemsPath> {
        Some(p.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn order_of_rules() {
        assert_eq!(locate(&raw("[1,2]"), None, ANY), path(&[]));
        assert_eq!(
            locate(&raw(r#"{"meta":{"total":3},"data":[{"a":1}]}"#), None, ANY),
            path(&["data"])
        );
        // metadata keys never hold the collection
        assert_eq!(
            locate(&raw(r#"{"links":[{"a":1}],"errors":[{"a":1}]}"#), None, ANY),
            None
        );
        assert_eq!(
            locate(
                &raw(r#"{"response":{"hits":[{"a":1}]},"meta":{}}"#),
                None,
                ANY
            ),
            path(&["response", "hits"])
        );
        assert_eq!(
            locate(&raw(r#"{"orders":[{"a":1}],"tags":["x"]}"#), None, ANY),
            path(&["orders"])
        );
        // two candidate arrays of objects: ambiguous, no collection
        assert_eq!(
            locate(&raw(r#"{"orders":[{"a":1}],"users":[{"b":1}]}"#), None, ANY),
            None
        );
        assert_eq!(locate(&raw(r#"{"id":1}"#), None, ANY), None);
        // a single resource with one nested array is not a collection
        let order = raw(r#"{"id":1,"lines":[{"sku":"A"}]}"#);
        assert_eq!(locate(&order, None, Declared::Resource), None);
        assert_eq!(
            locate(&order, None, Declared::Unknown { list_like: false }),
            None
        );
        assert_eq!(locate(&order, None, ANY), path(&["lines"]));
    }

    #[test]
    fn explicit_and_declared_paths_win() {
        let doc = raw(r#"{"data":[1],"other":{"rows":[{"x":1}]}}"#);
        let explicit = vec!["other".to_string(), "rows".to_string()];
        assert_eq!(locate(&doc, Some(&explicit), ANY), Some(explicit.clone()));
        assert_eq!(locate(&doc, None, Declared::At(&explicit)), Some(explicit));
        // a declared path that is not there is not guessed at
        assert_eq!(
            locate(&doc, None, Declared::At(&["nope".to_string()])),
            None
        );
        assert_eq!(locate(&doc, Some(&["nope".to_string()]), ANY), None);
    }

    #[test]
    fn totals_and_hints() {
        let doc = raw(r#"{"data":[],"meta":{"total":"42"},"has_more":false}"#);
        let page = split(&doc, &["data".to_string()]).unwrap();
        assert_eq!(page.total, Some(42));
        assert_eq!(page.next_hint, Some(false));
        let doc = raw(r#"{"value":[],"@odata.count":7,"next_cursor":"abc"}"#);
        let page = split(&doc, &["value".to_string()]).unwrap();
        assert_eq!(page.total, Some(7));
        assert_eq!(page.next_hint, Some(true));
        assert!(split(&doc, &["data".to_string()]).is_none());
    }

    #[test]
    fn one_pass_split_and_first_page() {
        let text = r#"{"meta":{"total":3},"data":[{"a":1},{"a":2}],"has_more":true}"#;
        let page = split_text(text, &["data".to_string()]).unwrap().unwrap();
        assert_eq!(page.items.len(), 2);
        assert_eq!(page.total, Some(3));
        assert_eq!(page.next_hint, Some(true));
        assert!(split_text(text, &["rows".to_string()]).unwrap().is_none());
        assert!(split_text("[1,2", &[]).is_err(), "not JSON");
        assert!(split_text("[1] x", &[]).is_err(), "trailing text");
        assert!(split_text("7", &["data".to_string()]).unwrap().is_none());
        let nested = r#"{"r":{"hits":[1,2,3],"n":1}}"#;
        let path = vec!["r".to_string(), "hits".to_string()];
        assert_eq!(split_text(nested, &path).unwrap().unwrap().items.len(), 3);
        let (path, envelope, page) = first_page(text, None, ANY).unwrap().unwrap();
        assert_eq!(path, vec!["data"]);
        assert!(matches!(envelope, Envelope::Object(_)));
        assert_eq!(page.items.len(), 2);
        let (path, envelope, _) = first_page("[1,2]", None, ANY).unwrap().unwrap();
        assert!(path.is_empty() && matches!(envelope, Envelope::Bare));
        assert!(first_page(r#"{"id":1}"#, None, ANY).unwrap().is_none());
        assert!(first_page(r#"{"id":1"#, None, ANY).is_err());
    }

    #[test]
    fn the_fast_first_page_keeps_the_rules() {
        // a lone array under another key is only taken by the full rules
        let doc = r#"{"meta":{},"orders":[{"a":1}]}"#;
        let not_list = Declared::Unknown { list_like: false };
        assert!(first_page(doc, None, not_list).unwrap().is_none());
        assert_eq!(
            first_page(doc, None, ANY).unwrap().unwrap().0,
            vec!["orders"]
        );
        // a declared path wins over an earlier collection key
        let doc = r#"{"data":[1],"rows":[{"a":1},{"a":2}],"n":2}"#;
        let rows = vec!["rows".to_string()];
        let (path, envelope, page) = first_page(doc, None, Declared::At(&rows)).unwrap().unwrap();
        assert_eq!(path, rows);
        assert_eq!(page.items.len(), 2);
        let Envelope::Object(fields) = envelope else {
            panic!()
        };
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            vec!["data", "rows", "n"],
            "the envelope keeps the field order"
        );
        assert!(matches!(fields[1].1, EnvelopeField::Collection));
        // no declared path: the first collection key holding an array
        assert_eq!(first_page(doc, None, ANY).unwrap().unwrap().0, vec!["data"]);
    }

    /// Found by the `collection` fuzz target: page one read the last of two
    /// `""` keys (one item), the split of later pages the first (none).
    #[test]
    fn a_repeated_key_is_read_alike_on_page_one_and_later_pages() {
        let text = r#"{"meta-x":{"t":6000,"":[],"u":6000,"":[{"id":1}],"n":2},"c":9}"#;
        let (path, _, page) = first_page(text, None, Declared::Unknown { list_like: true })
            .unwrap()
            .unwrap();
        assert_eq!(path, vec!["meta-x".to_string(), String::new()]);
        assert_eq!(page.items.len(), 1);
        let again = split_text(text, &path).unwrap().unwrap();
        assert_eq!(
            again.items.len(),
            1,
            "the last value of a repeated key, both ways"
        );
        // At the top: the last value, at the first key's place.
        let flat = r#"{"data":[],"n":1,"data":[{"id":1},{"id":2}],"n":2}"#;
        let data = vec!["data".to_string()];
        let (page, top, position) = split_keeping_fields(flat, &data).unwrap().unwrap();
        assert_eq!(page.items.len(), 2);
        assert_eq!(position, 0);
        assert_eq!(top.fields.len(), 1);
        assert_eq!(top.get("n").map(|v| v.get()), Some("2"));
        let (_, envelope, first) = first_page(flat, None, Declared::Unknown { list_like: true })
            .unwrap()
            .unwrap();
        assert_eq!(first.items.len(), 2);
        match envelope {
            Envelope::Object(fields) => assert_eq!(fields.len(), 2, "{fields:?}"),
            Envelope::Bare => panic!("an object page"),
        }
    }

    #[test]
    fn envelope_marks_the_collection() {
        let doc = raw(r#"{"a":1,"wrap":{"items":[1],"n":2}}"#);
        let Envelope::Object(fields) = envelope(&doc, &["wrap".into(), "items".into()]) else {
            panic!()
        };
        assert!(matches!(fields[0].1, EnvelopeField::Raw(_)));
        let EnvelopeField::Nested(inner) = &fields[1].1 else {
            panic!()
        };
        assert!(matches!(inner[0].1, EnvelopeField::Collection));
    }
}
