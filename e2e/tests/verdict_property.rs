//! Properties of the verdict over generated upstreams:
//! 1. complete means every row: whenever the verdict says complete, the rows
//!    are exactly the upstream's rows;
//! 2. every row, declared, means complete: when the rows are exactly the
//!    upstream's and the upstream declared the end (a correct total, or an
//!    end signal not contradicted by a wrong total), the verdict is complete
//!    — also when a bound is reached at that same moment.
//!
//! The upstream here is generated in-process (page sizes, silent caps,
//! totals right, high, absent or on page one only, and totals that lie low:
//! a total that counts the page, one capped below the rows, a stale one —
//! SPEC §3.3: a declared total never ends a walk by itself —, end signals
//! of several styles,
//! Django-REST-framework envelopes with a 404 past the end, ignored page
//! parameters, short pages, deep-paging ceilings, transient and persistent
//! errors, malformed pages, small bounds and bounds set exactly where the
//! walk ends) and answers through the same `Upstream` seam the HTTP client
//! uses, so thousands of cases run in seconds. Some calls are not walked
//! (one page): property 1 holds of them too.
//!
//! One contract is assumed of the upstream, because no walker can see past
//! it without extra requests: a page that is short before the end (a short
//! page in the middle, a silent cap, an empty page before the end) comes
//! with a declared total larger than the rows so far, or with no total at
//! all when only the page size is capped (SPEC §3.3: "the walk ends at the
//! first short page"; a short page that meets a declared total is believed).
//! A total below the truth may land anywhere, on a page boundary too: rows
//! equal to a total end nothing. End signals are honest. Cases breaking the
//! contract are not generated.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use dragnet_core::paging::detect::{Paging, PagingParam, Position, Walkability};
use dragnet_core::tool::{Method, Param, ParamLocation};
use dragnet_core::{Tool, UpstreamError};
use dragnet_http::{RawResponse, Upstream};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Total {
    Correct,
    Absent,
    FirstPageOnly,
    /// Declared this much above the truth.
    High(usize),
    /// Declared this much below the truth: stale (never with short pages or
    /// ceilings, nor with a silent cap unless still above the first page).
    Low(usize),
    /// The rows on the page (Jira's `PageOfDashboards.total`, a `count` of
    /// the page): never with short pages, ceilings or silent caps.
    PageCount,
    /// At most this many, however many rows (a search backend's cap); the
    /// same conditions as `Low`.
    Capped(usize),
}

/// How a page says whether more rows follow (`{"data", "meta"}` envelopes).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Signal {
    HasMore,
    IsLast,
    NextNull,
    LinksNext,
}

/// The envelope around the rows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Bare,
    /// `{"data": [...], "meta": {"total"}}`, with an optional end signal.
    Meta(Option<Signal>),
    /// Django REST framework: `{"count", "next", "previous", "results"}`,
    /// and a 404 for a page number past the end.
    Drf,
}

/// A bound set exactly to what a walk that ends on a declaration needs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum OnEnd {
    Items,
    Pages,
    Requests,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Transient500,
    Persistent500,
    Malformed,
}

#[derive(Debug, Clone)]
struct Behaviour {
    rows: usize,
    offset_style: bool,
    shape: Shape,
    declared_max: usize,
    cap: Option<usize>,
    ignore_page: bool,
    total: Total,
    short_page: Option<u64>,
    ceiling: Option<usize>,
    fault: Option<(u64, Fault)>,
    max_pages: u32,
    max_items: usize,
    max_requests: u32,
    /// Every page walked (`_all_pages`), or one page asked for.
    walked: bool,
}

struct Sim {
    b: Behaviour,
    /// Failures already served, per page, for once-only faults.
    served_faults: Mutex<HashMap<u64, u32>>,
}

fn int_arg(args: &Map<String, Value>, name: &str) -> Option<u64> {
    args.get(name).and_then(Value::as_u64)
}

impl Sim {
    fn answer(&self, args: &Map<String, Value>) -> RawResponse {
        let b = &self.b;
        let requested = if b.offset_style {
            int_arg(args, "limit")
        } else {
            int_arg(args, "per_page")
        }
        .unwrap_or(10) as usize;
        let size = requested
            .min(b.declared_max)
            .min(b.cap.unwrap_or(usize::MAX))
            .max(1);
        let (page, start) = if b.offset_style {
            let offset = if b.ignore_page {
                0
            } else {
                int_arg(args, "offset").unwrap_or(0) as usize
            };
            ((offset / size) as u64 + 1, offset)
        } else {
            let page = if b.ignore_page {
                1
            } else {
                int_arg(args, "page").unwrap_or(1).max(1)
            };
            (page, (page as usize - 1) * size)
        };
        if let Some((at, fault)) = b.fault {
            if at == page {
                let mut served = self.served_faults.lock().unwrap();
                let count = served.entry(page).or_default();
                *count += 1;
                match fault {
                    Fault::Transient500 if *count == 1 => return status(500),
                    Fault::Persistent500 => return status(500),
                    Fault::Malformed => {
                        return RawResponse {
                            status: 200,
                            next_link: None,
                            retry_after: None,
                            rate_limit: None,
                            body: Bytes::from_static(b"{\"data\": [ {\"id\": 1,"),
                        }
                    }
                    _ => {}
                }
            }
        }
        let visible = b.ceiling.unwrap_or(b.rows).min(b.rows);
        if b.shape == Shape::Drf && !b.offset_style && page > 1 && start >= visible {
            return RawResponse {
                status: 404,
                next_link: None,
                retry_after: None,
                rate_limit: None,
                body: Bytes::from_static(b"{\"detail\": \"Invalid page.\"}"),
            };
        }
        let end = (start + size).min(visible);
        let mut ids: Vec<usize> = if start < end {
            (start..end).collect()
        } else {
            Vec::new()
        };
        if b.short_page == Some(page) && ids.len() > 1 {
            ids.truncate(ids.len() / 2);
        }
        // Honest: more rows exist after this window.
        let more = end < b.rows;
        let items: Vec<Value> = ids.iter().map(|i| json!({"id": i, "v": i * 7})).collect();
        let declared = match b.total {
            Total::Correct => Some(b.rows),
            Total::Absent => None,
            Total::FirstPageOnly => (page == 1).then_some(b.rows),
            Total::High(d) => Some(b.rows + d),
            Total::Low(d) => Some(b.rows.saturating_sub(d)),
            Total::PageCount => Some(ids.len()),
            Total::Capped(c) => Some(b.rows.min(c)),
        };
        let body = match b.shape {
            Shape::Bare => Value::Array(items),
            Shape::Meta(signal) => {
                let mut m = json!({"data": items});
                if let Some(t) = declared {
                    m["meta"] = json!({"total": t});
                }
                match signal {
                    None => {}
                    Some(Signal::HasMore) => m["has_more"] = json!(more),
                    Some(Signal::IsLast) => m["is_last"] = json!(!more),
                    Some(Signal::NextNull) => {
                        m["next"] = if more {
                            json!("/list?page=next")
                        } else {
                            Value::Null
                        }
                    }
                    Some(Signal::LinksNext) => {
                        let mut links = json!({"first": "/list?page=1"});
                        if more {
                            links["next"] = json!("/list?page=next");
                        }
                        m["links"] = links;
                    }
                }
                m
            }
            Shape::Drf => {
                let next = if more {
                    json!("http://h/list?page=next")
                } else {
                    Value::Null
                };
                let mut m = json!({"next": next, "previous": null, "results": items});
                if let Some(t) = declared {
                    m["count"] = json!(t);
                }
                m
            }
        };
        RawResponse {
            status: 200,
            next_link: None,
            retry_after: None,
            rate_limit: None,
            body: Bytes::from(body.to_string()),
        }
    }
}

fn status(code: u16) -> RawResponse {
    RawResponse {
        status: code,
        next_link: None,
        retry_after: None,
        rate_limit: None,
        body: Bytes::from_static(b"{\"error\":\"boom\"}"),
    }
}

impl Upstream for Sim {
    async fn send(
        &self,
        _tool: &Tool,
        args: &Map<String, Value>,
        _max_bytes: u64,
    ) -> Result<RawResponse, UpstreamError> {
        Ok(self.answer(args))
    }

    fn identity(&self) -> String {
        "sim".into()
    }
}

fn param(name: &str, max: Option<i64>) -> PagingParam {
    PagingParam {
        name: name.into(),
        arg_path: vec![name.into()],
        location: "query".into(),
        minimum: None,
        maximum: max,
        default: None,
    }
}

fn tool(b: &Behaviour) -> Tool {
    let (size, pos) = if b.offset_style {
        (
            param("limit", Some(b.declared_max as i64)),
            Position::Offset(param("offset", None)),
        )
    } else {
        (
            param("per_page", Some(b.declared_max as i64)),
            Position::Page(param("page", None)),
        )
    };
    let names = [size.name.clone(), pos.param().name.clone()];
    Tool {
        name: "list".into(),
        description: String::new(),
        method: Method::Get,
        path: "/list".into(),
        params: names
            .iter()
            .map(|n| Param {
                name: n.clone(),
                location: ParamLocation::Query,
                required: false,
                schema: json!({"type": "integer"}),
            })
            .collect(),
        body: None,
        input_schema: json!({"type": "object", "properties": {
            names[0].clone(): {"type": "integer"}, names[1].clone(): {"type": "integer"}}}),
        response_items_path: None,
        response_is_resource: false,
        cursor: None,
        walkability: Walkability::Walkable(Box::new(Paging {
            size,
            position: pos,
        })),
    }
}

/// Totals of every kind.
fn any_total() -> BoxedStrategy<Total> {
    prop_oneof![
        Just(Total::Correct),
        Just(Total::Absent),
        Just(Total::FirstPageOnly),
        (1usize..40).prop_map(Total::High),
        lying_total(),
    ]
    .boxed()
}

/// Totals below the truth: one that counts the page, one capped below the
/// rows, a stale one.
fn lying_total() -> BoxedStrategy<Total> {
    prop_oneof![
        (1usize..40).prop_map(Total::Low),
        Just(Total::PageCount),
        (1usize..400).prop_map(Total::Capped),
    ]
    .boxed()
}

fn shape(bare: u32) -> BoxedStrategy<Shape> {
    let signal = proptest::option::weighted(
        0.5,
        prop_oneof![
            Just(Signal::HasMore),
            Just(Signal::IsLast),
            Just(Signal::NextNull),
            Just(Signal::LinksNext)
        ],
    );
    prop_oneof![
        bare => Just(Shape::Bare),
        3 => signal.prop_map(Shape::Meta),
        1 => Just(Shape::Drf),
    ]
    .boxed()
}

/// The value `total` declares over `rows`, when it is one number.
fn declared_value(total: Total, rows: usize) -> Option<usize> {
    match total {
        Total::Correct | Total::FirstPageOnly => Some(rows),
        Total::High(d) => Some(rows + d),
        Total::Low(d) => Some(rows.saturating_sub(d)),
        Total::Capped(c) => Some(rows.min(c)),
        Total::Absent | Total::PageCount => None,
    }
}

fn behaviour_with(
    total: BoxedStrategy<Total>,
    shape: BoxedStrategy<Shape>,
) -> impl Strategy<Value = Behaviour> {
    let fault = prop_oneof![
        3 => Just(None),
        1 => (1u64..8, prop_oneof![Just(Fault::Transient500), Just(Fault::Persistent500), Just(Fault::Malformed)])
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
        (0usize..400, any::<bool>(), shape, 1usize..60),
        (
            proptest::option::weighted(0.3, 1usize..40),
            proptest::bool::weighted(0.15),
        ),
        total,
        (
            proptest::option::weighted(0.25, 1u64..8),
            proptest::option::weighted(0.2, 0usize..300),
        ),
        fault,
        ((1u32..25, 1usize..500, 1u32..40), on_end),
        proptest::bool::weighted(0.85),
    )
        .prop_map(
            |(
                (rows, offset_style, shape, declared_max),
                (cap, ignore_page),
                total,
                (short_page, ceiling),
                fault,
                ((max_pages, max_items, max_requests), on_end),
                walked,
            )| {
                let bare = shape == Shape::Bare;
                // The contract (see the module doc): missing rows in the middle
                // come with a declared total at least the truth.
                let honest_total = matches!(
                    total,
                    Total::Correct | Total::FirstPageOnly | Total::High(_)
                );
                let keeps_contract = honest_total && !bare;
                // A silent cap shortens page one: a total below the truth
                // must still say more rows follow it.
                let cap = cap.filter(|c| {
                    let first = declared_max.min(*c).max(1);
                    let lies = matches!(total, Total::Low(_) | Total::PageCount | Total::Capped(_));
                    bare || *c >= declared_max
                        || !lies
                        || declared_value(total, rows).is_some_and(|t| t > first)
                });
                let served = declared_max.min(cap.unwrap_or(usize::MAX)).max(1);
                let total = if bare { Total::Absent } else { total };
                let pages_needed = rows.div_ceil(served).max(1);
                let mut b = Behaviour {
                    rows,
                    offset_style,
                    shape,
                    declared_max,
                    cap,
                    ignore_page,
                    total,
                    short_page: short_page.filter(|_| keeps_contract),
                    ceiling: ceiling.filter(|_| keeps_contract),
                    fault,
                    max_pages,
                    max_items,
                    max_requests,
                    walked,
                };
                match on_end {
                    None => {}
                    Some(OnEnd::Items) => b.max_items = rows.max(1),
                    Some(OnEnd::Pages) => b.max_pages = pages_needed as u32,
                    Some(OnEnd::Requests) => b.max_requests = pages_needed as u32,
                }
                b
            },
        )
}

/// Whether the upstream declares where the rows end, so that a walk with
/// every row must be complete: an end signal no high total contradicts;
/// or, without one, any total but a high one (a hint that keeps the walk
/// going) with the short or empty page after the rows — a last page the
/// walk takes for full asks for one more, so it needs room for one more
/// page, request and row.
fn declares_the_end(b: &Behaviour) -> bool {
    // A fault on a page the walk reaches (its pages, plus the one more it
    // may ask for at the end) means the upstream did not answer it: a
    // persistent one always, a transient one when the request bound has no
    // request to spare for the retry. (With rows missing, "every row"
    // fails anyway; this is for an empty collection.)
    if let Some((at, fault)) = b.fault {
        let served = b.declared_max.min(b.cap.unwrap_or(usize::MAX)).max(1);
        let pages = b.rows.div_ceil(served).max(1);
        let reached = at as usize <= pages + 1;
        let spare = b.max_requests as usize > pages + 1;
        if reached && (fault != Fault::Transient500 || !spare) {
            return false;
        }
    }
    let signal = matches!(b.shape, Shape::Drf | Shape::Meta(Some(_)));
    match b.total {
        Total::High(_) => false,
        _ if signal => true,
        Total::Absent => false,
        Total::Correct
        | Total::FirstPageOnly
        | Total::Low(_)
        | Total::PageCount
        | Total::Capped(_) => {
            let served = b.declared_max.min(b.cap.unwrap_or(usize::MAX)).max(1);
            let pages = b.rows.div_ceil(served).max(1);
            // A short page in the middle shrinks the size the walk takes
            // for full (the last page may look full to it then) and, by
            // offset, adds pages: the pages it needs are not predicted here.
            if b.short_page.is_some() {
                return false;
            }
            let ends_short = b.rows == 0 || !b.rows.is_multiple_of(served);
            let room = b.max_pages as usize > pages
                && b.max_requests as usize > pages
                && b.max_items > b.rows;
            ends_short || (room && !b.ignore_page)
        }
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
    // One page, of the size a walk would ask for.
    let size = if b.offset_style { "limit" } else { "per_page" };
    let mut arguments = Map::new();
    arguments.insert(size.into(), json!(b.declared_max));
    dragnet_e2e::page_ids(&tool(b), &sim, arguments, limits)
}

/// Property 1 of a call; property 2 too when it walked.
fn check(b: &Behaviour) -> Result<(), TestCaseError> {
    if let Some((complete, ids)) = run(b) {
        let mut seen = ids.clone();
        seen.sort_unstable();
        seen.dedup();
        prop_assert_eq!(seen.len(), ids.len(), "duplicate rows kept: {:?}", b);
        let want: Vec<i64> = (0..b.rows as i64).collect();
        if complete {
            prop_assert_eq!(&seen, &want, "complete verdict with missing rows: {:?}", b);
        }
        if b.walked && seen == want && declares_the_end(b) {
            prop_assert!(complete, "every row, declared, but partial: {:?}", b);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

    #[test]
    fn complete_means_every_row_and_every_declared_row_means_complete(
        b in behaviour_with(any_total(), shape(1))
    ) {
        check(&b)?;
    }
}

/// The same properties over totals that lie low only (a count of the page,
/// a cap, a stale total) in envelopes that carry them: 5,000 cases of these
/// shapes, counted.
#[test]
fn totals_below_the_truth_never_make_a_walk_complete_with_rows_missing() {
    let counted = AtomicUsize::new(0);
    let config = ProptestConfig {
        cases: 5000,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&behaviour_with(lying_total(), shape(0)), |b| {
        if matches!(b.total, Total::Low(_) | Total::PageCount | Total::Capped(_)) {
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

/// The generator does produce every kind of stop (a test of the test).
#[test]
fn generator_reaches_incomplete_and_complete_cases() {
    let base = Behaviour {
        rows: 95,
        offset_style: false,
        shape: Shape::Meta(None),
        declared_max: 10,
        cap: None,
        ignore_page: false,
        total: Total::Correct,
        short_page: None,
        ceiling: None,
        fault: None,
        max_pages: 20,
        max_items: 5000,
        max_requests: 60,
        walked: true,
    };
    assert_eq!(run(&base).map(|r| r.0), Some(true));
    let capped = Behaviour {
        cap: Some(7),
        total: Total::Absent,
        ..base.clone()
    };
    assert_eq!(run(&capped).map(|r| r.0), Some(true));
    let ceiling = Behaviour {
        ceiling: Some(40),
        ..base.clone()
    };
    assert_eq!(run(&ceiling).map(|r| r.0), Some(false));
    let ignored = Behaviour {
        ignore_page: true,
        ..base.clone()
    };
    assert_eq!(run(&ignored).map(|r| r.0), Some(false));
    let short = Behaviour {
        short_page: Some(3),
        ..base.clone()
    };
    assert_eq!(run(&short).map(|r| r.0), Some(false));
    let bounded = Behaviour {
        max_pages: 3,
        ..base.clone()
    };
    assert_eq!(run(&bounded).map(|r| r.0), Some(false));
    // A full last page that meets the count, with every bound exactly there.
    let drf = Behaviour {
        rows: 100,
        shape: Shape::Drf,
        max_pages: 10,
        max_requests: 10,
        max_items: 100,
        ..base.clone()
    };
    assert_eq!(run(&drf).map(|r| r.0), Some(true));
    // The same with no count: the end signal settles it.
    for signal in [
        Signal::HasMore,
        Signal::IsLast,
        Signal::NextNull,
        Signal::LinksNext,
    ] {
        let signalled = Behaviour {
            total: Total::Absent,
            shape: Shape::Meta(Some(signal)),
            ..drf.clone()
        };
        assert_eq!(run(&signalled).map(|r| r.0), Some(true), "{signal:?}");
    }
    // No count, no signal, a full last page and no room for one more request.
    let silent = Behaviour {
        total: Total::Absent,
        shape: Shape::Meta(None),
        ..drf.clone()
    };
    assert_eq!(run(&silent).map(|r| r.0), Some(false));
    // A correct count met on that full last page is no end signal either:
    // partial with no room for one more request, complete with it.
    let counted = Behaviour {
        shape: Shape::Meta(None),
        ..drf.clone()
    };
    assert_eq!(run(&counted).map(|r| r.0), Some(false));
    let roomy = Behaviour {
        max_pages: 11,
        max_requests: 11,
        max_items: 101,
        ..counted
    };
    assert_eq!(run(&roomy), Some((true, (0..100).collect())));
    // Totals below the truth, on a page boundary or not, walked past.
    for total in [
        Total::PageCount,
        Total::Capped(40),
        Total::Capped(45),
        Total::Low(55),
    ] {
        let lying = Behaviour {
            total,
            ..base.clone()
        };
        assert_eq!(run(&lying), Some((true, (0..95).collect())), "{total:?}");
        // One page, not walked: a full page that meets its total is not all.
        let one = Behaviour {
            walked: false,
            ..lying
        };
        assert_eq!(run(&one).map(|r| r.0), Some(false), "{total:?}");
    }
    // One short page that meets its total is all.
    let small = Behaviour {
        rows: 7,
        walked: false,
        ..base
    };
    assert_eq!(run(&small), Some((true, (0..7).collect())));
}
