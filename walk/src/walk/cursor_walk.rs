//! The cursor walk (SPEC §3.3; issue 14): the walk of `walk.rs` for tools
//! that page by a cursor read from the body (`next_cursor`,
//! `nextPageToken`, `response_metadata.next_cursor`, `iterator`…) or from
//! the last item (`starting_after` with `has_more`), or by a next-page URL
//! (a body field such as `next_page_uri` or `@odata.nextLink`, or the
//! `Link` header's `rel="next"`). Each page takes the page walk's step
//! (`page_step`: fetched, journalled, its rows kept as ranges, progress,
//! bounds); its own are the next request (a cursor argument or a URL) and
//! what ends it. It ends complete only when the API says there is no next
//! page — the cursor or URL null, empty or absent, `has_more: false`,
//! `done: true`, no `rel="next"` — and stops partial on a cursor or URL it has
//! followed before (`repeated_cursor`), on a page that repeats the one
//! before (an API ignoring the cursor: `repeated_page`), on a next URL
//! off the provider's origin (`off_origin`: never followed), or on a bound
//! while a next page exists. A next URL is followed as given, with the
//! call's header parameters, body and credentials; the walk adds nothing
//! to it, so reserved arguments never reach it.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::page_step::{LastPage, Repeats, Rows, Step};
use crate::collection::Page;
use crate::top_scan;
use crate::walk::{Outcome, Walker};
use dragnet_core::args::{get_path, set_path};
use dragnet_core::json::RawObject;
use dragnet_core::paging::cursor::{CursorPaging, NextSource};
use dragnet_core::verdict::StopReason;
use dragnet_core::UpstreamError;
use dragnet_http::{LinkRefused, Target, Upstream};

/// What a page says comes after it.
pub(super) enum Next {
    End,
    Cursor(String),
    /// A next-page URL, as the page wrote it.
    Link(String),
}

impl<U: Upstream> Walker<'_, U> {
    /// Fetches one collection by following its cursor. `Err` only when the
    /// first request failed and nothing was fetched.
    pub(super) async fn collect_cursor(
        &mut self,
        mut args: Map<String, Value>,
        value: Option<&Value>,
        paging: &CursorPaging,
    ) -> Result<Outcome, UpstreamError> {
        let mut out = Outcome::default();
        // Unless the call set it, pages are as large as the API declares
        // it serves (as page walks ask); the links it gives carry it on.
        if let Some(size) = &paging.size {
            let largest = size.maximum.filter(|m| *m > 0);
            if let (None, Some(largest)) = (get_path(&args, &size.arg_path), largest) {
                set_path(&mut args, &size.arg_path, Value::from(largest));
            }
        }
        let mut seen: HashSet<String> = HashSet::new();
        let mut last = LastPage::default();
        // The next page's URL, once a page gave one.
        let mut link: Option<String> = None;
        loop {
            let target = match &link {
                None => Target::Arguments(&args),
                Some(url) => Target::Link {
                    arguments: &args,
                    url,
                },
            };
            let fetched = match self.fetch_page(target, &mut out, false).await {
                Step::Go(fetched) => fetched,
                Step::Ended(end) => return end,
            };
            let text = fetched.body.as_str();
            let page = match self.read_page(text, fetched.status, &mut out, value) {
                Step::Go(page) => page,
                Step::Ended(end) => return end,
            };
            let next = next_of(text, &page, &paging.next, fetched.link);
            // An API that ignores the cursor serves the same rows again.
            let rows = Rows::of(text, &page, fetched.streamed);
            drop(page);
            let repeats = Repeats::PagesWithRows;
            let body = fetched.body;
            if let Some(stop) = self.keep_page(body, rows, &mut last, repeats, value, &mut out) {
                return Ok(stop);
            }
            let (position, what) = match &next {
                Next::End => return Ok(out.done()),
                Next::Cursor(c) => (c, "cursor"),
                Next::Link(l) => (l, "next-page URL"),
            };
            if !seen.insert(position.clone()) {
                let detail = format!(
                    "page {} gave back a {what} already followed; the walk stopped there",
                    out.pages
                );
                return Ok(out.stop(StopReason::RepeatedCursor, Some(detail)));
            }
            // Only the provider's own origin is followed.
            let url = match &next {
                Next::Link(text) => match self.upstream.link_target(text) {
                    Ok(url) => Some(url),
                    Err(refused) => {
                        let detail = format!("after page {}, {}", out.pages, refused.describe());
                        let reason = match refused {
                            LinkRefused::Unusable => StopReason::MalformedPage,
                            LinkRefused::OffOrigin(_) | LinkRefused::Scheme(_) => {
                                StopReason::OffOrigin
                            }
                        };
                        return Ok(out.stop(reason, Some(detail)));
                    }
                },
                _ => None,
            };
            if let Some(stop) = self.bounded(&mut out) {
                return Ok(stop);
            }
            match (next, url) {
                (_, Some(url)) => link = Some(url),
                (Next::Cursor(cursor), None) => {
                    let Some(param) = paging.param.as_ref() else {
                        return Ok(out.stop(StopReason::NotWalked, None));
                    };
                    set_path(&mut args, &param.arg_path, Value::String(cursor));
                }
                // Ended above: a link has its URL, an end returned.
                (Next::Link(_) | Next::End, None) => return Ok(out.done()),
            }
        }
    }
}

/// Where the page says the walk goes next (`header_link`: its `Link`
/// header's next target).
pub(super) fn next_of(
    text: &str,
    page: &Page<'_>,
    source: &NextSource,
    header_link: Option<String>,
) -> Next {
    // The body may be a bare array (GitHub): the header alone decides.
    if *source == NextSource::LinkHeader {
        return header_link.map_or(Next::End, Next::Link);
    }
    // Svix and others say so outright.
    if field(text, &["done"]) == Some("true") {
        return Next::End;
    }
    match source {
        NextSource::Body(path) => field(text, path)
            .and_then(cursor_text)
            .map_or(Next::End, Next::Cursor),
        NextSource::LastItem { field: key, more } => {
            let more = field(text, more) == Some("true");
            let last = page
                .items
                .last()
                .and_then(|item| field(item.get(), std::slice::from_ref(key)))
                .and_then(cursor_text);
            match (more, last) {
                (true, Some(id)) => Next::Cursor(id),
                _ => Next::End,
            }
        }
        NextSource::NextUrl(path) => field(text, path)
            .and_then(cursor_text)
            .map_or(Next::End, Next::Link),
        // Read above.
        NextSource::LinkHeader => Next::End,
    }
}

/// The raw text of the value at `path` of the object `text`, read by the
/// byte scan of top-level keys (the page was validated when it was split,
/// so it is not parsed again), or by a parse where the scan gives up.
fn field<'t, K: AsRef<str>>(text: &'t str, path: &[K]) -> Option<&'t str> {
    let mut at = text;
    for key in path {
        let key = key.as_ref();
        at = match top_scan::value_text(at, key) {
            Some(found) => found?,
            None => serde_json::from_str::<RawObject<'t>>(at)
                .ok()?
                .get(key)?
                .get(),
        };
    }
    Some(at)
}

/// A cursor's text: a non-empty string, or a number; `None` for null,
/// `""`, `false` and anything else.
fn cursor_text(raw: &str) -> Option<String> {
    match serde_json::from_str::<Value>(raw).ok()? {
        Value::String(s) if !s.is_empty() => Some(s),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_by_the_scan_or_by_a_parse_where_it_gives_up() {
        let page = r#"{"items": [{"id": 1}], "response_metadata": {"next_cursor": "dXNlcjpV"}, "done": false}"#;
        let path = ["response_metadata", "next_cursor"];
        assert_eq!(field(page, &path), Some(r#""dXNlcjpV""#));
        assert_eq!(field(page, &["done"]), Some("false"));
        assert_eq!(field(page, &["response_metadata", "none"]), None);
        assert_eq!(field(page, &["items", "id"]), None, "not an object");
        // An escaped key stops the scan; the parse reads the same value.
        let escaped = r#"{"a\"b": 1, "response_metadata": {"next_cursor": "x"}}"#;
        assert_eq!(field(escaped, &path), Some(r#""x""#));
        // A repeated key reads as its last value either way.
        let repeated = r#"{"next": "a", "next": "b"}"#;
        assert_eq!(
            field(repeated, &["next"]).and_then(cursor_text).as_deref(),
            Some("b")
        );
        assert_eq!(cursor_text(r#""""#), None);
        assert_eq!(cursor_text("42").as_deref(), Some("42"));
        assert_eq!(cursor_text("null"), None);
    }
}
