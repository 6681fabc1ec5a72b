//! Cursor and next-link paging, detected (SPEC §3.1; issue 14): a tool
//! pages by cursor when its request has a cursor parameter and its
//! response says where the next cursor comes from — a body field
//! (`next_cursor`, `nextPageToken`, `response_metadata.next_cursor`…), the
//! last item's `id` with `has_more` (Stripe's `starting_after`), or an
//! `iterator` with `done` (Svix); it pages by next link when its response
//! has a next URL field (`next`, `nextLink`, `@odata.nextLink`,
//! `next_page_uri`, `links.next`, `links.pages.next`) or declares a `Link`
//! header. Page-number and offset paging win when both apply. Every style
//! is walked by `cursor_walk.rs`; roles the detection cannot see are named
//! by hand (`overrides.rs`).

use super::detect::PagingParam;

/// Request parameters that carry a cursor, exact.
pub const CURSOR_PARAMS: [&str; 17] = [
    "cursor",
    "after",
    "starting_after",
    "page_token",
    "pageToken",
    "PageToken",
    "next_page_token",
    "nextPageToken",
    "continuationToken",
    "continuation_token",
    "iterator",
    "$skiptoken",
    "marker",
    "since_id",
    "pageCursor",
    "page_cursor",
    "page_after",
];

/// Response fields that hold the next cursor, exact (last part of the path).
const NEXT_CURSOR_FIELDS: [&str; 9] = [
    "next_cursor",
    "nextCursor",
    "next_page_token",
    "nextPageToken",
    "continuationToken",
    "continuation_token",
    "next_marker",
    "nextMarker",
    "iterator",
];

/// Response fields that hold the next page's URL, exact.
const NEXT_URL_FIELDS: [&str; 6] = [
    "next",
    "nextLink",
    "@odata.nextLink",
    "next_page_uri",
    "next_page_url",
    "nextPageUrl",
];

/// Where the next position is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextSource {
    /// A body field holding the next cursor.
    Body(Vec<String>),
    /// The last item's field, while the body field `more` says so.
    LastItem { field: String, more: Vec<String> },
    /// A body field holding the next page's URL.
    NextUrl(Vec<String>),
    /// The `Link` header's `rel="next"`.
    LinkHeader,
}

impl NextSource {
    /// `body:<path>`, `last_item:<field>`, `header:link`.
    pub fn describe(&self) -> String {
        match self {
            NextSource::Body(p) | NextSource::NextUrl(p) => format!("body:{}", p.join(".")),
            NextSource::LastItem { field, .. } => format!("last_item:{field}"),
            NextSource::LinkHeader => "header:link".into(),
        }
    }
}

/// How a cursor-style tool pages.
#[derive(Debug, Clone, PartialEq)]
pub struct CursorPaging {
    /// `cursor`, `next_url` or `link_header`.
    pub style: &'static str,
    /// The request parameter the cursor goes in (none when a next URL is
    /// followed as it is).
    pub param: Option<PagingParam>,
    pub next: NextSource,
    /// The page-size parameter, when the request has one: a walk that
    /// does not set it asks for its declared maximum (fewer requests).
    pub size: Option<PagingParam>,
}

/// Page-size parameters of cursor-style requests: those page walks know,
/// and Twilio's `PageSize` (which page detection leaves alone, since
/// Twilio's `Page` only works with its `PageToken`).
pub fn is_size_param(name: &str) -> bool {
    super::detect::PAGE_SIZE_NAMES.contains(&name) || name == "PageSize"
}

/// The cursor paging of a tool whose request has `cursor` (its first
/// cursor parameter, if any) and whose response declares `fields` and
/// perhaps a `Link` header.
pub fn detect(
    cursor: Option<PagingParam>,
    fields: &[Vec<String>],
    link_header: bool,
) -> Option<CursorPaging> {
    let last_is = |names: &[&str]| {
        fields
            .iter()
            .find(|f| f.last().is_some_and(|n| names.contains(&n.as_str())))
            .cloned()
    };
    if let Some(param) = cursor {
        if param.name == "starting_after" {
            if let Some(more) = last_is(&["has_more", "hasMore"]) {
                return Some(CursorPaging {
                    style: "cursor",
                    param: Some(param),
                    next: NextSource::LastItem {
                        field: "id".into(),
                        more,
                    },
                    size: None,
                });
            }
        }
        if let Some(path) = last_is(&NEXT_CURSOR_FIELDS) {
            return Some(CursorPaging {
                style: "cursor",
                param: Some(param),
                next: NextSource::Body(path),
                size: None,
            });
        }
    }
    let url = fields.iter().find(|f| match f.as_slice() {
        [one] => NEXT_URL_FIELDS.contains(&one.as_str()),
        [outer, inner] => {
            matches!(
                outer.as_str(),
                "links" | "_links" | "pagination" | "meta" | "paging"
            ) && NEXT_URL_FIELDS.contains(&inner.as_str())
        }
        _ => false,
    });
    if let Some(path) = url {
        return Some(CursorPaging {
            style: "next_url",
            param: None,
            next: NextSource::NextUrl(path.clone()),
            size: None,
        });
    }
    // DigitalOcean's `links.pages.next` is two levels down.
    if fields
        .iter()
        .any(|f| f == &["links".to_string(), "pages".to_string()])
    {
        return Some(CursorPaging {
            style: "next_url",
            param: None,
            next: NextSource::NextUrl(vec!["links".into(), "pages".into(), "next".into()]),
            size: None,
        });
    }
    link_header.then_some(CursorPaging {
        style: "link_header",
        param: None,
        next: NextSource::LinkHeader,
        size: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str) -> PagingParam {
        PagingParam {
            name: name.into(),
            arg_path: vec![name.into()],
            location: "query".into(),
            minimum: None,
            maximum: None,
            default: None,
        }
    }

    fn paths(list: &[&str]) -> Vec<Vec<String>> {
        list.iter()
            .map(|p| p.split('.').map(String::from).collect())
            .collect()
    }

    #[test]
    fn each_style_is_told_by_where_the_next_position_is() {
        let stripe = detect(
            Some(param("starting_after")),
            &paths(&["data", "has_more", "url"]),
            false,
        )
        .unwrap();
        assert_eq!(stripe.next.describe(), "last_item:id");
        let slack = detect(
            Some(param("cursor")),
            &paths(&[
                "ok",
                "members",
                "response_metadata",
                "response_metadata.next_cursor",
            ]),
            false,
        )
        .unwrap();
        assert_eq!(slack.next.describe(), "body:response_metadata.next_cursor");
        let twilio = detect(
            Some(param("PageToken")),
            &paths(&["messages", "next_page_uri"]),
            false,
        )
        .unwrap();
        assert_eq!(
            (twilio.style, twilio.next.describe().as_str()),
            ("next_url", "body:next_page_uri")
        );
        let github = detect(None, &[], true).unwrap();
        assert_eq!(github.style, "link_header");
        let ocean = detect(None, &paths(&["droplets", "links", "links.pages"]), false).unwrap();
        assert_eq!(ocean.next.describe(), "body:links.pages.next");
        assert!(detect(Some(param("cursor")), &paths(&["data"]), false).is_none());
        assert!(detect(None, &paths(&["data", "total"]), false).is_none());
    }
}
