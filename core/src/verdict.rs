//! The verdict (SPEC §3.4): whether a result is complete, and if not, why,
//! in plain words the caller (a person or a model) can act on.

/// Why a walk stopped before it was complete. Closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopReason {
    Pages,
    Requests,
    Items,
    Bytes,
    WallClock,
    ForEachValues,
    RepeatedPage,
    /// A cursor or next link repeated one already followed.
    RepeatedCursor,
    /// The next page's URL is on another origin than the provider's.
    OffOrigin,
    TotalMismatch,
    UpstreamError,
    /// A page contradicted its own response schema or declared total, or
    /// was not JSON.
    MalformedPage,
    /// Only one page was fetched because `_all_pages` was not set.
    NotWalked,
    Cancelled,
}

impl StopReason {
    /// Every reason.
    pub const ALL: [StopReason; 14] = [
        StopReason::Pages,
        StopReason::Requests,
        StopReason::Items,
        StopReason::Bytes,
        StopReason::WallClock,
        StopReason::ForEachValues,
        StopReason::RepeatedPage,
        StopReason::RepeatedCursor,
        StopReason::OffOrigin,
        StopReason::TotalMismatch,
        StopReason::UpstreamError,
        StopReason::MalformedPage,
        StopReason::NotWalked,
        StopReason::Cancelled,
    ];

    /// The reason spelled `text` (as `as_str` spells it).
    pub fn parse(text: &str) -> Option<StopReason> {
        StopReason::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// The `stoppedBy` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Pages => "pages",
            StopReason::Requests => "requests",
            StopReason::Items => "items",
            StopReason::Bytes => "bytes",
            StopReason::WallClock => "wall_clock",
            StopReason::ForEachValues => "for_each_values",
            StopReason::RepeatedPage => "repeated_page",
            StopReason::RepeatedCursor => "repeated_cursor",
            StopReason::OffOrigin => "off_origin",
            StopReason::TotalMismatch => "total_mismatch",
            StopReason::UpstreamError => "upstream_error",
            StopReason::MalformedPage => "malformed_page",
            StopReason::NotWalked => "not_walked",
            StopReason::Cancelled => "cancelled",
        }
    }

    /// What happened, in words.
    pub fn explain(self) -> &'static str {
        match self {
            StopReason::Pages => "the pages-per-collection bound was reached",
            StopReason::Requests => "the requests-per-call bound was reached",
            StopReason::Items => "the items bound was reached",
            StopReason::Bytes => "the raw-bytes bound was reached",
            StopReason::WallClock => "the wall-clock bound was reached",
            StopReason::ForEachValues => "there were more _for_each values than the bound allows",
            StopReason::RepeatedPage => {
                "a page repeated the previous one (the API seems to ignore the page parameter)"
            }
            StopReason::RepeatedCursor => {
                "the API gave back a cursor it had given before (following it would loop)"
            }
            StopReason::OffOrigin => {
                "the next page's URL is not on the provider's origin, so it was not followed (credentials go nowhere else)"
            }
            StopReason::TotalMismatch => {
                "the API declared more rows than it served before an empty page"
            }
            StopReason::UpstreamError => "the upstream failed mid-walk",
            StopReason::MalformedPage => {
                "a page was malformed (not JSON, or contradicting its own schema or declared total)"
            }
            StopReason::NotWalked => "only one page was fetched",
            StopReason::Cancelled => "the call was cancelled",
        }
    }

    /// What to do about it.
    pub fn advice(self) -> &'static str {
        match self {
            StopReason::Pages
            | StopReason::Requests
            | StopReason::Items
            | StopReason::Bytes
            | StopReason::WallClock => {
                "Narrow the query with the API's own filters (status, dates, ids), or raise the bound, and call again."
            }
            StopReason::ForEachValues => "Split the values over several calls.",
            StopReason::OffOrigin => {
                "Narrow the query so fewer pages are needed, or give this host its own provider if it is trusted."
            }
            StopReason::RepeatedPage | StopReason::RepeatedCursor => {
                "Do not rely on paging this endpoint; use its filters to get smaller result sets."
            }
            StopReason::TotalMismatch => {
                "Treat the count as \"at least\"; the API may cap how deep it pages, so narrow the query."
            }
            StopReason::UpstreamError | StopReason::MalformedPage => {
                "Call again later, or narrow the query."
            }
            StopReason::NotWalked => "Fetch every page (all pages) before counting or summarising.",
            StopReason::Cancelled => "Run the call again.",
        }
    }
}

/// The statement of completeness of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub complete: bool,
    pub likely_more_rows: bool,
    pub requests: u32,
    pub item_count: usize,
    /// `None` exactly when complete.
    pub stopped_by: Option<StopReason>,
    pub note: String,
}
