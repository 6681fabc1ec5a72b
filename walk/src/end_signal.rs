//! What a page says about the rows after it (SPEC §3.3): an explicit end
//! signal ends a walk as complete with no further request; an explicit
//! "more follow" keeps a walk going past a short page.
//!
//! The keys read, first match wins, at the top level and then inside the
//! envelope objects `meta`, `pagination`, `paging` and `response_metadata`:
//! - `has_more` / `hasMore`: a boolean;
//! - `is_last` / `isLast` / `last`: a boolean (`true` ends the walk);
//! - `next`, `next_cursor`, `nextCursor`, `next_page_token`,
//!   `nextPageToken`, `nextLink`, `@odata.nextLink`: present and `null` or
//!   `""` ends the walk, any other value says more follow (a key that is
//!   absent says nothing);
//! - `links` / `_links` (JSON:API, HAL): when the object carries other
//!   paging links (`first`, `last`, `prev`, `previous`) and no `next` (or a
//!   `null` one), the walk ends; a `next` link says more follow. A `links`
//!   object with only `self` says nothing, so a resource link is never
//!   taken for an end signal.

use dragnet_core::json::{self, Kind, RawObject};

const MORE_FLAGS: [&str; 2] = ["has_more", "hasMore"];
const LAST_FLAGS: [&str; 3] = ["is_last", "isLast", "last"];
const NEXT_KEYS: [&str; 7] = [
    "next",
    "next_cursor",
    "nextCursor",
    "next_page_token",
    "nextPageToken",
    "nextLink",
    "@odata.nextLink",
];
const LINK_OBJECTS: [&str; 2] = ["links", "_links"];
const OTHER_PAGING_LINKS: [&str; 4] = ["first", "last", "prev", "previous"];
/// Envelope objects that may hold the signal.
const HOLDERS: [&str; 4] = ["meta", "pagination", "paging", "response_metadata"];

/// `Some(false)`: this is the last page. `Some(true)`: more rows follow.
/// `None`: the page says nothing.
pub fn more_follow(top: &RawObject) -> Option<bool> {
    read(top).or_else(|| {
        HOLDERS
            .iter()
            .find_map(|holder| json::object(top.get(holder)?).and_then(|o| read(&o)))
    })
}

fn read(obj: &RawObject) -> Option<bool> {
    let flag = |keys: &[&str]| {
        keys.iter().find_map(|k| {
            let v = obj.get(k)?;
            (json::kind(v) == Kind::Bool).then(|| v.get().trim() == "true")
        })
    };
    if let Some(more) = flag(&MORE_FLAGS) {
        return Some(more);
    }
    if let Some(last) = flag(&LAST_FLAGS) {
        return Some(!last);
    }
    if let Some(more) = NEXT_KEYS
        .iter()
        .find_map(|k| obj.get(k).map(|v| !is_nothing(v)))
    {
        return Some(more);
    }
    LINK_OBJECTS.iter().find_map(|k| {
        let links = json::object(obj.get(k)?)?;
        match links.get("next") {
            Some(next) if !is_nothing(next) => Some(true),
            _ if OTHER_PAGING_LINKS.iter().any(|l| links.contains_key(l)) => Some(false),
            _ => None,
        }
    })
}

/// `null` or an empty string: no next page.
fn is_nothing(v: &serde_json::value::RawValue) -> bool {
    match json::kind(v) {
        Kind::Null => true,
        Kind::String => v.get().trim() == "\"\"",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(text: &str) -> Option<bool> {
        let top: RawObject = serde_json::from_str(text).unwrap();
        more_follow(&top)
    }

    #[test]
    fn every_end_signal_in_the_list() {
        for end in [
            r#"{"results":[],"next":null,"count":3}"#,
            r#"{"data":[],"has_more":false}"#,
            r#"{"data":[],"hasMore":false}"#,
            r#"{"data":[],"is_last":true}"#,
            r#"{"data":[],"isLast":true}"#,
            r#"{"content":[],"last":true}"#,
            r#"{"data":[],"links":{"self":"/x?page=3","first":"/x?page=1","prev":"/x?page=2"}}"#,
            r#"{"data":[],"links":{"first":"/x","next":null}}"#,
            r#"{"_embedded":{},"_links":{"self":{"href":"/x"},"first":{"href":"/x"}}}"#,
            r#"{"data":[],"meta":{"has_more":false}}"#,
            r#"{"data":[],"response_metadata":{"next_cursor":""}}"#,
            r#"{"value":[],"@odata.nextLink":null}"#,
        ] {
            assert_eq!(signal(end), Some(false), "{end}");
        }
    }

    #[test]
    fn more_follow_and_silence() {
        for more in [
            r#"{"results":[],"next":"http://h/x?page=2"}"#,
            r#"{"data":[],"has_more":true}"#,
            r#"{"content":[],"last":false}"#,
            r#"{"data":[],"links":{"next":"/x?page=2","first":"/x"}}"#,
            r#"{"data":[],"paging":{"next":"https://h/next"}}"#,
        ] {
            assert_eq!(signal(more), Some(true), "{more}");
        }
        for silent in [
            r#"{"data":[]}"#,
            r#"{"data":[],"links":{"self":"/x"}}"#,
            r#"{"data":[],"last":"2026-01-01"}"#,
            r#"{"data":[],"meta":{"total":3}}"#,
        ] {
            assert_eq!(signal(silent), None, "{silent}");
        }
    }
}
