//! The verdict's first property over generated cursor-paged upstreams:
//! whenever a cursor walk says complete, its rows are exactly the
//! upstream's rows, once each, in order; and a walk that got every row
//! from an upstream that answered every page as it should is complete —
//! also when a bound is reached at that same moment.
//!
//! The upstream is generated in-process in the four cursor styles (a body
//! cursor `next_cursor`, Stripe's last item with `has_more`, a next URL in
//! the body, a `Link` header) with page sizes, empty pages that still
//! point onward, short pages, a cursor given back again, an API that
//! ignores the cursor, a cursor that expires (400), transient and
//! persistent errors, malformed pages, next URLs on another origin, and
//! small bounds or bounds set exactly where the walk ends, and totals in
//! the body — right, or lying low (a count of the page, a cap below the
//! rows, a stale one): a cursor walk ends only where the API says no next
//! page follows, whatever a total says (SPEC §3.3, §3.8). Some calls are
//! not walked (one page): a complete verdict means every row there too.
//! It answers through the same `Upstream` seam the HTTP client uses
//! (`send`, `link_target`, `send_link`).
//!
//! One contract is assumed of the upstream, since no walker can see past
//! it: a cursor it gives leads to the rows right after the page (it never
//! skips rows), and it says there is no next page only at the end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use dragnet_core::paging::cursor::{CursorPaging, NextSource};
use dragnet_core::paging::detect::{PagingParam, Walkability};
use dragnet_core::tool::{Method, Param, ParamLocation};
use dragnet_core::{Tool, UpstreamError};
use dragnet_http::{LinkRefused, RawResponse, Upstream};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    BodyCursor,
    LastItem,
    NextUrl,
    LinkHeader,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// Page N points onward with the cursor that reached it.
    RepeatCursor,
    /// Every page serves the first rows, whatever the cursor.
    IgnoreCursor,
    /// Page N answers 400 (the cursor expired).
    Expired,
    Transient500,
    Persistent500,
    Malformed,
    /// Page N's next URL is on another origin (URL styles).
    Foreign,
}

/// The total a page declares (body styles; a `Link`-header page is a bare
/// array and declares none).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Total {
    Absent,
    Correct,
    /// The rows on the page.
    PageCount,
    /// At most this many, however many rows.
    Capped(usize),
    /// This much below the truth.
    Stale(usize),
}

/// A bound set exactly to what the walk needs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum OnEnd {
    Items,
    Pages,
    Requests,
}

#[derive(Debug, Clone)]
struct Behaviour {
    rows: usize,
    style: Style,
    size: usize,
    /// Page N holds no rows but points onward (its window moves on).
    empty_page: Option<u64>,
    /// Page N holds only its first half, and points after what it served.
    short_page: Option<u64>,
    fault: Option<(u64, Fault)>,
    max_pages: u32,
    max_items: usize,
    max_requests: u32,
    total: Total,
    /// Every page walked (`_all_pages`), or one page asked for.
    walked: bool,
}

struct Sim {
    b: Behaviour,
    served_faults: Mutex<HashMap<u64, u32>>,
}

/// A position in the chain: the next row, and the page number it starts.
fn cursor(start: usize, page: u64) -> String {
    format!("c{start}p{page}")
}

fn parse_cursor(text: &str) -> Option<(usize, u64)> {
    let rest = text.strip_prefix('c')?;
    let (start, page) = rest.split_once('p')?;
    Some((start.parse().ok()?, page.parse().ok()?))
}

const ORIGIN: &str = "http://sim";

impl Sim {
    /// The answer for the position `at` (`None`: the first page).
    fn answer(&self, at: Option<&str>) -> RawResponse {
        let b = &self.b;
        let (start, page) = match at {
            None => (0, 1),
            Some(text) => match parse_cursor(text) {
                Some(p) => p,
                None => return status(400, "unknown cursor"),
            },
        };
        let (start, page) = match b.fault {
            Some((_, Fault::IgnoreCursor)) => (0, 1),
            _ => (start, page),
        };
        if let Some((n, fault)) = b.fault {
            if n == page {
                let mut served = self.served_faults.lock().unwrap();
                let count = served.entry(page).or_default();
                *count += 1;
                match fault {
                    Fault::Expired => return status(400, "cursor expired"),
                    Fault::Transient500 if *count == 1 => return status(500, "boom"),
                    Fault::Persistent500 => return status(500, "boom"),
                    Fault::Malformed => {
                        return ok(Bytes::from_static(b"{\"data\": [ {\"id\": 1,"), None)
                    }
                    _ => {}
                }
            }
        }
        let mut end = (start + b.size).min(b.rows);
        if b.empty_page == Some(page) {
            end = start;
        } else if b.short_page == Some(page) && end - start > 1 {
            end = start + (end - start) / 2;
        }
        let ids: Vec<usize> = (start..end).collect();
        let mut items: Vec<Value> = ids.iter().map(|i| json!({"id": i, "v": i * 3})).collect();
        let more = end < b.rows;
        let repeat = b.fault == Some((page, Fault::RepeatCursor)) && at.is_some() && more;
        // Stripe's cursor is the last item: repeated, it is the id the
        // request started after (only while more follow: on the last page
        // it would be a wrong row, not a cursor).
        if let (true, Style::LastItem, Some(last)) = (repeat, b.style, items.last_mut()) {
            last["id"] = json!(start - 1);
        }
        let next = more.then(|| match (repeat, at) {
            (true, Some(at)) => at.to_string(),
            _ => cursor(end, page + 1),
        });
        let foreign = b.fault == Some((page, Fault::Foreign));
        let url = |c: &str| match foreign {
            true => format!("http://elsewhere/list?after={c}"),
            false => format!("/list?after={c}"),
        };
        let total = match b.total {
            Total::Absent => None,
            Total::Correct => Some(b.rows),
            Total::PageCount => Some(items.len()),
            Total::Capped(c) => Some(b.rows.min(c)),
            Total::Stale(d) => Some(b.rows.saturating_sub(d)),
        };
        let (mut body, link) = match b.style {
            Style::BodyCursor => (json!({"data": items, "next_cursor": next}), None),
            Style::LastItem => {
                // The last item's id is the cursor: Stripe's `starting_after`.
                (json!({"data": items, "has_more": more}), None)
            }
            Style::NextUrl => (
                json!({"data": items, "next": next.as_deref().map(url)}),
                None,
            ),
            Style::LinkHeader => (
                Value::Array(items),
                next.as_deref().map(|c| format!("{ORIGIN}{}", url(c))),
            ),
        };
        if let (Some(total), Value::Object(page)) = (total, &mut body) {
            page.insert("total".into(), json!(total));
        }
        ok(Bytes::from(body.to_string()), link)
    }
}

fn ok(body: Bytes, next_link: Option<String>) -> RawResponse {
    RawResponse {
        status: 200,
        retry_after: None,
        rate_limit: None,
        next_link,
        body,
    }
}

fn status(code: u16, message: &str) -> RawResponse {
    RawResponse {
        status: code,
        retry_after: None,
        rate_limit: None,
        next_link: None,
        body: Bytes::from(json!({ "error": message }).to_string()),
    }
}

impl Upstream for Sim {
    async fn send(
        &self,
        _tool: &Tool,
        args: &Map<String, Value>,
        _max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        let at = match self.b.style {
            // Stripe: the row after the id given.
            Style::LastItem => args
                .get("starting_after")
                .and_then(Value::as_str)
                .map(|id| {
                    let id: usize = id.parse().unwrap_or(0);
                    // The page number a real API would not know: derived.
                    cursor(id + 1, (id + 1).div_ceil(self.b.size.max(1)) as u64 + 1)
                }),
            _ => args.get("cursor").and_then(Value::as_str).map(String::from),
        };
        Ok(self.answer(at.as_deref()))
    }

    fn identity(&self) -> String {
        "sim".into()
    }

    fn link_target(&self, link: &str) -> Result<String, LinkRefused> {
        match link.strip_prefix(ORIGIN).unwrap_or(link) {
            rest if rest.starts_with('/') => Ok(format!("{ORIGIN}{rest}")),
            _ => Err(LinkRefused::OffOrigin("http://elsewhere".into())),
        }
    }

    async fn send_link(
        &self,
        _tool: &Tool,
        _arguments: &Map<String, Value>,
        url: &str,
        _max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        assert!(url.starts_with(ORIGIN), "only the origin is sent to: {url}");
        let at = url.split_once("after=").map(|(_, c)| c.to_string());
        Ok(self.answer(at.as_deref()))
    }
}

fn tool(b: &Behaviour) -> Tool {
    let param_name = match b.style {
        Style::LastItem => "starting_after",
        _ => "cursor",
    };
    let param = PagingParam {
        name: param_name.into(),
        arg_path: vec![param_name.into()],
        location: "query".into(),
        minimum: None,
        maximum: None,
        default: None,
    };
    let (style, next, param) = match b.style {
        Style::BodyCursor => (
            "cursor",
            NextSource::Body(vec!["next_cursor".into()]),
            Some(param),
        ),
        Style::LastItem => (
            "cursor",
            NextSource::LastItem {
                field: "id".into(),
                more: vec!["has_more".into()],
            },
            Some(param),
        ),
        Style::NextUrl => ("next_url", NextSource::NextUrl(vec!["next".into()]), None),
        Style::LinkHeader => ("link_header", NextSource::LinkHeader, None),
    };
    Tool {
        name: "list".into(),
        description: String::new(),
        method: Method::Get,
        path: "/list".into(),
        params: vec![Param {
            name: param_name.into(),
            location: ParamLocation::Query,
            required: false,
            schema: json!({"type": "string"}),
        }],
        body: None,
        input_schema: json!({"type": "object", "properties": {param_name: {"type": "string"}}}),
        response_items_path: None,
        response_is_resource: false,
        cursor: Some(CursorPaging {
            style,
            param,
            next,
            size: None,
        }),
        walkability: Walkability::Cursor {
            param: param_name.into(),
        },
    }
}

/// Totals of every kind.
fn any_total() -> BoxedStrategy<Total> {
    prop_oneof![Just(Total::Absent), Just(Total::Correct), lying_total()].boxed()
}

/// Totals below the truth: a count of the page, a cap, a stale one.
fn lying_total() -> BoxedStrategy<Total> {
    prop_oneof![
        Just(Total::PageCount),
        (1usize..300).prop_map(Total::Capped),
        (1usize..40).prop_map(Total::Stale),
    ]
    .boxed()
}

fn behaviour_with(
    total: BoxedStrategy<Total>,
    link_header: bool,
) -> impl Strategy<Value = Behaviour> {
    let style = prop_oneof![
        Just(Style::BodyCursor),
        Just(Style::LastItem),
        Just(Style::NextUrl),
        Just(Style::LinkHeader),
    ]
    .prop_filter("a style whose body can declare a total", move |s| {
        link_header || *s != Style::LinkHeader
    });
    let fault = prop_oneof![
        3 => Just(None),
        2 => (
            1u64..8,
            prop_oneof![
                Just(Fault::RepeatCursor),
                Just(Fault::IgnoreCursor),
                Just(Fault::Expired),
                Just(Fault::Transient500),
                Just(Fault::Persistent500),
                Just(Fault::Malformed),
                Just(Fault::Foreign),
            ]
        )
            .prop_map(Some),
    ];
    let on_end = proptest::option::weighted(
        0.3,
        prop_oneof![
            Just(OnEnd::Items),
            Just(OnEnd::Pages),
            Just(OnEnd::Requests)
        ],
    );
    (
        (0usize..300, style, 1usize..40),
        (
            proptest::option::weighted(0.15, 1u64..8),
            proptest::option::weighted(0.15, 1u64..8),
        ),
        fault,
        ((1u32..30, 1usize..400, 1u32..40), on_end),
        (total, proptest::bool::weighted(0.85)),
    )
        .prop_map(
            |(
                (rows, style, size),
                (empty_page, short_page),
                fault,
                (bounds, on_end),
                (total, walked),
            )| {
                let (max_pages, max_items, max_requests) = bounds;
                // Stripe's cursor is the last item: an empty page has none.
                let empty_page = empty_page.filter(|_| style != Style::LastItem);
                let mut b = Behaviour {
                    rows,
                    style,
                    size,
                    empty_page,
                    short_page,
                    fault,
                    max_pages,
                    max_items,
                    max_requests,
                    total,
                    walked,
                };
                if let Some(on_end) = on_end {
                    let pages = pages_needed(&b);
                    match on_end {
                        OnEnd::Items => b.max_items = rows.max(1),
                        OnEnd::Pages => b.max_pages = pages,
                        OnEnd::Requests => b.max_requests = pages,
                    }
                }
                b
            },
        )
}

/// The pages a fault-free walk of `b` takes.
fn pages_needed(b: &Behaviour) -> u32 {
    let (mut start, mut page) = (0usize, 1u64);
    loop {
        let mut end = (start + b.size).min(b.rows);
        if b.empty_page == Some(page) {
            end = start;
        } else if b.short_page == Some(page) && end - start > 1 {
            end = start + (end - start) / 2;
        }
        if end >= b.rows {
            return page as u32;
        }
        start = end;
        page += 1;
    }
}

fn run(b: &Behaviour) -> Option<(bool, Vec<i64>)> {
    let sim = Sim {
        b: b.clone(),
        served_faults: Mutex::new(HashMap::new()),
    };
    let limits = dragnet_e2e::sim_limits(b.max_pages, b.max_items, b.max_requests);
    if b.walked {
        return dragnet_e2e::walk_ids(&tool(b), &sim, limits);
    }
    dragnet_e2e::page_ids(&tool(b), &sim, Map::new(), limits)
}

/// Whether every page came back as it should have (no fault that fired).
fn answered_well(b: &Behaviour) -> bool {
    match b.fault {
        None => true,
        // A failure answered on retry costs a request of the bound.
        Some((page, Fault::Transient500)) => {
            page as u32 > pages_needed(b) || b.max_requests > pages_needed(b)
        }
        // A fault on a page the walk never reaches does not fire.
        Some((page, _)) => page as u32 > pages_needed(b),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn a_complete_cursor_walk_has_exactly_the_upstreams_rows(b in behaviour_with(any_total(), true)) {
        check(&b)?;
    }
}

/// Property 1 of a call; property 2 too when it walked.
fn check(b: &Behaviour) -> Result<(), TestCaseError> {
    if let Some((complete, ids)) = run(b) {
        let want: Vec<i64> = (0..b.rows as i64).collect();
        if complete {
            prop_assert_eq!(
                &ids,
                &want,
                "complete verdict without exactly the rows: {:?}",
                b
            );
        }
        if b.walked && ids == want && answered_well(b) {
            prop_assert!(complete, "every row, the end said, but partial: {:?}", b);
        }
    }
    Ok(())
}

/// The same properties over totals that lie low only, in the styles whose
/// body carries them: 5,000 cases of these shapes, counted.
#[test]
fn totals_below_the_truth_never_end_a_cursor_walk() {
    let counted = AtomicUsize::new(0);
    let config = ProptestConfig {
        cases: 5000,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&behaviour_with(lying_total(), false), |b| {
        let lies = matches!(
            b.total,
            Total::PageCount | Total::Capped(_) | Total::Stale(_)
        );
        if lies && b.style != Style::LinkHeader {
            counted.fetch_add(1, Ordering::Relaxed);
        }
        check(&b)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let counted = counted.into_inner();
    assert!(
        counted >= 5000,
        "only {counted} cases of totals below the truth"
    );
}

/// The generator does produce complete and partial walks of every style.
#[test]
fn every_style_walks_complete_and_every_fault_stops_it() {
    for style in [
        Style::BodyCursor,
        Style::LastItem,
        Style::NextUrl,
        Style::LinkHeader,
    ] {
        let base = Behaviour {
            rows: 95,
            style,
            size: 10,
            empty_page: None,
            short_page: Some(2),
            fault: None,
            max_pages: 20,
            max_items: 5000,
            max_requests: 60,
            total: Total::Absent,
            walked: true,
        };
        let (complete, ids) = run(&base).unwrap();
        assert!(complete, "{style:?}");
        assert_eq!(ids, (0..95).collect::<Vec<i64>>(), "{style:?}");
        let exact = Behaviour {
            max_pages: pages_needed(&base),
            max_requests: pages_needed(&base),
            ..base.clone()
        };
        assert_eq!(
            run(&exact).map(|r| r.0),
            Some(true),
            "{style:?}: bounds met at the end"
        );
        let mut faults = vec![
            Fault::RepeatCursor,
            Fault::IgnoreCursor,
            Fault::Expired,
            Fault::Persistent500,
            Fault::Malformed,
        ];
        if matches!(style, Style::NextUrl | Style::LinkHeader) {
            faults.push(Fault::Foreign);
        }
        for fault in faults {
            let faulty = Behaviour {
                fault: Some((3, fault)),
                ..base.clone()
            };
            assert_eq!(
                run(&faulty).map(|r| r.0),
                Some(false),
                "{style:?} {fault:?}"
            );
        }
        let bounded = Behaviour {
            max_pages: 3,
            ..base.clone()
        };
        assert_eq!(run(&bounded).map(|r| r.0), Some(false), "{style:?}");
        // Totals below the truth on every page change nothing; one page,
        // with a next page said to follow, is not all whatever its total.
        for total in [Total::PageCount, Total::Capped(20), Total::Stale(30)] {
            let lying = Behaviour {
                total,
                ..base.clone()
            };
            let (complete, ids) = run(&lying).unwrap();
            assert!(complete, "{style:?} {total:?}");
            assert_eq!(ids, (0..95).collect::<Vec<i64>>(), "{style:?} {total:?}");
            let one = Behaviour {
                walked: false,
                short_page: None,
                ..lying
            };
            assert_eq!(run(&one).map(|r| r.0), Some(false), "{style:?} {total:?}");
        }
    }
}
