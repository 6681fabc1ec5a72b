//! The walk (SPEC §3.3): one collection fetched page after page, never in
//! parallel, until a short page the guards accept as the end, or a bound.
//! Items are kept raw and never copied: a page that contributes items is
//! kept whole and its items are ranges into it (`dragnet_core::items`). A walker
//! borrows what a call shares (budget, pacing, progress) and owns what it
//! gathers, so the walks of a concurrent fan-out each gather on their own.
//! With a journal ([`crate::journal`]), every page fetched is kept, and a
//! page an earlier attempt kept is read back instead of fetched: the walk
//! takes the same path and fetches only what nobody kept.
//!
//! Every page takes one step (`page_step`): fetched, read, its rows kept,
//! progress reported, the bounds checked. This file is the page walk's
//! own part (page numbers and offsets from `page_plan`, the verdict of a
//! single page); `cursor_walk` is the cursor walk's.

mod cursor_walk;
mod page_step;
pub mod streamed;

use std::sync::Mutex;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::collection::ItemsPath;
use crate::journal::Journal;
use crate::page_plan::PagePlan;
use cursor_walk::{next_of, Next};
use dragnet_core::args::get_path;
use dragnet_core::budget::Budget;
use dragnet_core::items::Items;
use dragnet_core::json::RawItem;
use dragnet_core::paging::detect::Walkability;
use dragnet_core::payload::Envelope;
use dragnet_core::progress::Throttled;
use dragnet_core::verdict::StopReason;
use dragnet_core::{Tool, UpstreamError};
use dragnet_http::{Pacing, Target, Upstream};
use page_step::{LastPage, Repeats, Rows, Step};
use streamed::{Early, EarlyRows};

/// Everything gathered so far in one call, across `_for_each` values.
#[derive(Debug, Default)]
pub struct Gathered {
    /// Set once page one of the first value was looked at.
    pub located: bool,
    /// The collection's path; `None` after `located` means no collection.
    pub path: Option<ItemsPath>,
    pub envelope: Option<Envelope>,
    pub items: Items,
    /// A response without a collection (outside a fan-out).
    pub single: Option<RawItem>,
    /// The rows of a walk that shapes early ([`Walker::shapes_early`]),
    /// which keeps no `items`.
    pub early: EarlyRows,
}

/// How fetching one collection (one value's worth) ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub complete: bool,
    pub likely_more: bool,
    pub stopped_by: Option<StopReason>,
    pub pages: u32,
    pub items: usize,
    /// Extra words for the note (an error, a total mismatch).
    pub detail: Option<String>,
}

impl Outcome {
    pub(super) fn stop(mut self, reason: StopReason, detail: Option<String>) -> Self {
        self.complete = false;
        // Every stop leaves rows unfetched as far as anyone knows; a single
        // page's caller refines this (`judge_single_page`).
        self.likely_more = true;
        self.stopped_by = Some(reason);
        if detail.is_some() {
            self.detail = detail;
        }
        self
    }

    pub(super) fn done(mut self) -> Self {
        self.complete = true;
        self.likely_more = false;
        self.stopped_by = None;
        self
    }
}

/// The state one call walks with.
pub struct Walker<'a, U> {
    pub upstream: &'a U,
    pub tool: &'a Tool,
    pub all_pages: bool,
    pub explicit_path: Option<&'a [String]>,
    /// The fan-out key, when rows are tagged with their value.
    pub tag_key: Option<&'a str>,
    /// The call's budget, shared by every walk of a fan-out.
    pub budget: &'a Budget,
    /// The host's pacing, shared likewise.
    pub pacing: &'a Pacing,
    pub gathered: Gathered,
    pub progress: &'a Mutex<Throttled<'a>>,
    pub cancel: CancellationToken,
    /// Where fetched pages are kept, and read back from on a later attempt.
    pub journal: Option<Journal<'a>>,
    /// The shaping to apply as pages arrive, when the caller reads only
    /// shaped rows (see [`streamed`]).
    pub early: Option<Early<'a>>,
}

impl<'a, U: Upstream> Walker<'a, U> {
    /// A walker for another value of the same call: the same shared
    /// budget, pacing and progress, nothing gathered yet.
    pub fn sibling(&self) -> Walker<'a, U> {
        Walker {
            upstream: self.upstream,
            tool: self.tool,
            all_pages: self.all_pages,
            explicit_path: self.explicit_path,
            tag_key: self.tag_key,
            budget: self.budget,
            pacing: self.pacing,
            gathered: Gathered::default(),
            progress: self.progress,
            cancel: self.cancel.clone(),
            journal: self.journal,
            early: self.early,
        }
    }

    /// Fetches one collection: every page when walking, else one. `Err`
    /// only when the first request failed and nothing was fetched.
    pub async fn collect(
        &mut self,
        mut args: Map<String, Value>,
        value: Option<&Value>,
    ) -> Result<Outcome, UpstreamError> {
        if self.all_pages {
            if let Some(cursor) = self.tool.cursor_walk() {
                return self.collect_cursor(args, value, cursor).await;
            }
        }
        let paging = if self.all_pages {
            self.tool.paging()
        } else {
            None
        };
        let mut plan = paging.map(|p| PagePlan::new(p, &args));
        let mut expected = plan.as_ref().map_or(0, |p| p.size as usize);
        let mut probed = false;
        let mut total: Option<u64> = None;
        let mut last = LastPage::default();
        let mut out = Outcome::default();
        // The pages so far already reached the declared total: a 404/400
        // on the next page is the end, not an upstream error.
        let mut met_total = false;
        loop {
            if let Some(plan) = &plan {
                plan.apply(&mut args);
            }
            let target = Target::Arguments(&args);
            let fetched = match self.fetch_page(target, &mut out, met_total).await {
                Step::Go(fetched) => fetched,
                Step::Ended(end) => return end,
            };
            let text = fetched.body.as_str();
            let page = match self.read_page(text, fetched.status, &mut out, value) {
                Step::Go(page) => page,
                Step::Ended(end) => return end,
            };
            total = page.total.or(total);
            let mut more = page.next_hint;
            if plan.is_none() {
                // One page only: is it everything? A cursor-style tool's
                // page says so where its next position is read.
                if let Some(c) = &self.tool.cursor {
                    more = Some(!matches!(
                        next_of(text, &page, &c.next, fetched.link),
                        Next::End
                    ));
                }
            }
            let rows = Rows::of(text, &page, fetched.streamed);
            let n = rows.count;
            drop(page);
            // An empty page that says nothing of more ends a walk.
            if plan.is_some() && n == 0 && more != Some(true) {
                self.report(out.pages, value);
                return Ok(match total {
                    Some(t) if (out.items as u64) < t => {
                        let detail = format!(
                            "the API declared {t} rows but served {} before an empty page",
                            out.items
                        );
                        out.stop(StopReason::TotalMismatch, Some(detail))
                    }
                    _ => out.done(),
                });
            }
            let body = fetched.body;
            if let Some(stop) =
                self.keep_page(body, rows, &mut last, Repeats::AnyPage, value, &mut out)
            {
                return Ok(stop);
            }
            let Some(plan) = plan.as_mut() else {
                return Ok(self.judge_single_page(out, n, total, more, &args));
            };
            // What the page declares settles the walk before any bound does:
            // a bound reached on the last page is still complete. A declared
            // total is not such a declaration: it may count the page, or be
            // capped or stale, so a full page that meets it asks for one more.
            let got = out.items as u64;
            if more == Some(false) {
                return Ok(match total {
                    Some(t) if got < t => {
                        let detail = format!(
                            "the API marked page {} as the last, but declared {t} rows and served {got}",
                            out.pages
                        );
                        out.stop(StopReason::TotalMismatch, Some(detail))
                    }
                    Some(t) => mismatch_note(out, t).done(),
                    None => out.done(),
                });
            }
            if n < expected {
                match total {
                    // The page says more follow: keep walking with the observed size.
                    _ if more == Some(true) => {
                        if n > 0 {
                            expected = n;
                        }
                    }
                    // More rows declared: keep walking with the observed size.
                    Some(t) if got < t => expected = n,
                    Some(t) => return Ok(mismatch_note(out, t).done()),
                    // A short first page may be a silent cap: one more page settles it.
                    None if out.pages == 1 && !probed => {
                        probed = true;
                        expected = n;
                    }
                    None => return Ok(out.done()),
                }
            } else {
                // A page larger than one seen short: the API serves this
                // many (a short page 1 was no cap), so less is short again.
                expected = expected.max(n.min(plan.size as usize));
                if let Some(t) = total.filter(|t| got > *t) {
                    out = mismatch_note(out, t);
                }
            }
            // A full page that met the total, with nothing saying the end:
            // the next page settles it (a bound reached first is partial).
            met_total = total.is_some_and(|t| got >= t);
            if let Some(stop) = self.bounded(&mut out) {
                return Ok(stop);
            }
            plan.advance(n);
        }
    }

    /// The verdict on a single page: complete only when an explicit "no
    /// more", a tool that cannot page at all, or a page shorter than the
    /// size asked that meets its declared total says so — and no declared
    /// total says more rows exist. A total met by a full page proves
    /// nothing: it may count the page, or be capped or stale.
    fn judge_single_page(
        &self,
        out: Outcome,
        n: usize,
        total: Option<u64>,
        next_hint: Option<bool>,
        args: &Map<String, Value>,
    ) -> Outcome {
        let asked = self
            .tool
            .paging()
            .map(|p| {
                get_path(args, &p.size.arg_path)
                    .and_then(Value::as_u64)
                    .or(p.size.default.and_then(|d| u64::try_from(d).ok()))
            })
            .unwrap_or(None);
        let got = n as u64;
        let total_says_more = total.is_some_and(|t| got < t);
        let short = asked.is_some_and(|size| got < size);
        let ends = match next_hint {
            Some(more) => !more,
            None => self.tool.walkability == Walkability::NoPaging || (total.is_some() && short),
        };
        if ends && !total_says_more {
            return out.done();
        }
        let likely_more = match (total_says_more, next_hint, asked) {
            (true, _, _) | (_, Some(true), _) => true,
            (_, _, Some(size)) => got >= size,
            _ => true,
        };
        let mut out = out.stop(StopReason::NotWalked, None);
        out.likely_more = likely_more;
        out
    }
}

/// Notes a declared total the rows did not match: rows past it mean the
/// total was wrong (one that counts the page, a capped or a stale one).
fn mismatch_note(mut out: Outcome, declared: u64) -> Outcome {
    if out.items as u64 != declared {
        out.detail = Some(format!(
            "the API declared a total of {declared} but served {} rows: the total was wrong (it may count one page, or be capped or stale)",
            out.items
        ));
    }
    out
}
