//! The walk (SPEC §3.3): one collection fetched page after page, never in
//! parallel, until a short page the guards accept as the end, or a bound.
//! Items are kept raw and never copied: a page that contributes items is
//! kept whole and its items are ranges into it (`dragnet_core::items`). A walker
//! borrows what a call shares (budget, pacing, progress) and owns what it
//! gathers, so the walks of a concurrent fan-out each gather on their own.
//! With a journal ([`crate::journal`]), every page fetched is kept, and a
//! page an earlier attempt kept is read back instead of fetched: the walk
//! takes the same path and fetches only what nobody kept.

mod cursor_walk;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::Mutex;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::collection::{self, Declared, ItemsPath, Page};
use crate::for_each;
use crate::journal::{request_key, Journal};
use crate::page_plan::PagePlan;
use cursor_walk::{next_of, Next};
use dragnet_core::args::get_path;
use dragnet_core::budget::Budget;
use dragnet_core::error::excerpt;
use dragnet_core::items::{ranges_of, Items};
use dragnet_core::json::{RawItem, RawObject};
use dragnet_core::paging::detect::Walkability;
use dragnet_core::payload::Envelope;
use dragnet_core::ports::journal::KeptPage;
use dragnet_core::progress::{ProgressEvent, Throttled};
use dragnet_core::verdict::StopReason;
use dragnet_core::{Tool, UpstreamError};
use dragnet_http::{send_with_retry, FetchError, Pacing, RawResponse, Target, Upstream};

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
        let mut previous: Option<Vec<u64>> = None;
        let mut out = Outcome::default();
        // The pages so far already reached the declared total: a 404/400
        // on the next page is the end, not an upstream error.
        let mut met_total = false;
        loop {
            if self.cancel.is_cancelled() {
                return Ok(out.stop(StopReason::Cancelled, None));
            }
            if let Some(plan) = &plan {
                plan.apply(&mut args);
            }
            let (status, body, link) = match self.fetch_target(Target::Arguments(&args)).await {
                Ok(r) => r,
                Err(FetchError::Stopped(reason)) => return Ok(out.stop(reason, None)),
                Err(FetchError::Upstream(UpstreamError::Status {
                    status: 400 | 404, ..
                })) if met_total => return Ok(out.done()),
                Err(FetchError::Upstream(e)) => return self.failed(out, e),
            };
            let text = body.as_str();
            let page = match self.read_page(text, status, &mut out, value) {
                PageRead::Page(page) => page,
                PageRead::Ended(end) => return end,
            };
            out.pages += 1;
            total = page.total.or(total);
            let more = page.next_hint;
            let n = page.items.len();
            // Where each item lies in the body, so the body can be kept.
            let ranges = ranges_of(text, &page.items);

            let Some(plan) = plan.as_mut() else {
                // One page only: is it everything? A cursor-style tool's
                // page says so where its next position is read.
                let more = match &self.tool.cursor {
                    Some(c) => Some(!matches!(next_of(text, &page, &c.next, link), Next::End)),
                    None => more,
                };
                drop(page);
                let truncated = self.keep(body, ranges, value, &mut out);
                self.report(out.pages, value);
                if truncated {
                    return Ok(out.stop(StopReason::Items, None));
                }
                return Ok(self.judge_single_page(out, n, total, more, &args));
            };

            if n == 0 && more != Some(true) {
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
            let fingerprint = fingerprint(&page.items);
            drop(page);
            if previous.as_ref() == Some(&fingerprint) {
                let detail = format!(
                    "page {} repeated page {}; its {n} rows were dropped",
                    out.pages,
                    out.pages - 1
                );
                self.report(out.pages, value);
                return Ok(out.stop(StopReason::RepeatedPage, Some(detail)));
            }
            let truncated = self.keep(body, ranges, value, &mut out);
            self.report(out.pages, value);
            if truncated {
                return Ok(out.stop(StopReason::Items, None));
            }
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
            if out.pages >= self.budget.limits.max_pages {
                return Ok(out.stop(StopReason::Pages, None));
            }
            if let Some(reason) = self.budget.exhausted() {
                return Ok(out.stop(reason, None));
            }
            plan.advance(n);
            previous = Some(fingerprint);
        }
    }

    /// The page in `text`: split along the path page one found, or read
    /// as page one (where the collection is). A response without a
    /// collection ends the walk with one item-less result; a page that
    /// cannot be read ends it as `failed` says.
    pub(super) fn read_page<'t>(
        &mut self,
        text: &'t str,
        status: u16,
        out: &mut Outcome,
        value: Option<&Value>,
    ) -> PageRead<'t> {
        let number = out.pages + 1;
        if self.gathered.located && self.gathered.envelope.is_some() {
            let path = self.gathered.path.clone().unwrap_or_default();
            let e = match collection::split_text(text, &path) {
                Ok(Some(page)) => return PageRead::Page(page),
                Ok(None) => UpstreamError::MissingCollection {
                    page: number,
                    path: collection::path_text(&path),
                },
                Err(e) => malformed_text(status, text, &e.to_string()),
            };
            return PageRead::Ended(self.failed(std::mem::take(out), e));
        }
        let e = match self.first_page(text, number) {
            Ok(Some(page)) => return PageRead::Page(page),
            Ok(None) => match serde_json::from_str::<&RawValue>(text) {
                Ok(root) => {
                    // An answer without a collection is no walk: no
                    // progress event, so no page counters anywhere.
                    self.keep_single(root, value);
                    out.pages += 1;
                    return PageRead::Ended(Ok(std::mem::take(out).done()));
                }
                Err(e) => malformed_text(status, text, &e.to_string()),
            },
            Err(FirstPageError::Malformed(e)) => malformed_text(status, text, &e),
            Err(FirstPageError::Missing(e)) => e,
        };
        PageRead::Ended(self.failed(std::mem::take(out), e))
    }

    /// The status, the body as text, and the `Link` header's next target
    /// of the answer to `target`.
    pub(super) async fn fetch_target(
        &mut self,
        target: Target<'_>,
    ) -> Result<(u16, String, Option<String>), FetchError> {
        let mut response = self.fetch(target).await?;
        let status = response.status;
        let link = response.next_link.take();
        into_text(response)
            .map(|text| (status, text, link))
            .map_err(FetchError::Upstream)
    }

    async fn fetch(&mut self, target: Target<'_>) -> Result<RawResponse, FetchError> {
        let Some(journal) = self.journal else {
            return self.send(target).await;
        };
        let key = request_key(&self.upstream.identity(), self.tool, target);
        if let Some(kept) = journal.store.recall(journal.scope, &key).await {
            self.budget
                .take_replayed(kept.body.len() as u64)
                .map_err(FetchError::Stopped)?;
            return Ok(RawResponse {
                status: kept.status,
                retry_after: None,
                rate_limit: None,
                next_link: kept.next_link,
                body: kept.body,
            });
        }
        let response = self.send(target).await?;
        if (200..300).contains(&response.status) {
            let page = KeptPage {
                status: response.status,
                next_link: response.next_link.clone(),
                body: response.body.clone(),
            };
            journal.store.keep(journal.scope, &key, &page).await;
        }
        Ok(response)
    }

    async fn send(&self, target: Target<'_>) -> Result<RawResponse, FetchError> {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(FetchError::Stopped(StopReason::Cancelled)),
            r = send_with_retry(self.upstream, self.tool, target, self.budget, self.pacing) => r,
        }
    }

    /// Page one of the call (or of a value whose collection is not known
    /// yet): where the collection is, its envelope, and the page.
    fn first_page<'t>(
        &mut self,
        text: &'t str,
        page: u32,
    ) -> Result<Option<Page<'t>>, FirstPageError> {
        let declared = match (
            &self.tool.response_items_path,
            self.tool.response_is_resource,
        ) {
            (Some(path), _) => Declared::At(path),
            (None, true) => Declared::Resource,
            // A tool that pages, by number, offset or cursor, answers lists.
            (None, false) => Declared::Unknown {
                list_like: self.tool.walkability != Walkability::NoPaging
                    || self.tool.cursor.is_some(),
            },
        };
        let known = if self.gathered.located {
            self.gathered.path.clone()
        } else {
            None
        };
        let explicit = known.as_deref().or(self.explicit_path);
        let found = collection::first_page(text, explicit, declared)
            .map_err(|e| FirstPageError::Malformed(e.to_string()))?;
        match found {
            Some((path, envelope, first)) => {
                self.gathered.located = true;
                self.gathered.path = Some(path);
                self.gathered.envelope = Some(envelope);
                Ok(Some(first))
            }
            None => match (explicit, declared) {
                (Some(path), _) => Err(FirstPageError::Missing(UpstreamError::MissingCollection {
                    page,
                    path: collection::path_text(path),
                })),
                // The page contradicts its own response schema.
                (None, Declared::At(path)) => {
                    Err(FirstPageError::Missing(UpstreamError::MalformedPage {
                        page,
                        message: format!(
                            "the response schema declares the collection at `{}`, but the page has no array there",
                            collection::path_text(path)
                        ),
                    }))
                }
                (None, Declared::Unknown { list_like: true }) => match declared_rows(text) {
                    // A list that says it has rows but carries none of them.
                    Some(rows) if rows > 0 => {
                        Err(FirstPageError::Missing(UpstreamError::MalformedPage {
                            page,
                            message: format!(
                                "the page declares a total of {rows} rows but has no collection"
                            ),
                        }))
                    }
                    _ => Ok(self.no_collection()),
                },
                (None, _) => Ok(self.no_collection()),
            },
        }
    }

    /// Page one has no collection: the response is one item-less result.
    fn no_collection<'t>(&mut self) -> Option<Page<'t>> {
        self.gathered.located = true;
        self.gathered.path = None;
        None
    }

    /// A failure: an error when nothing was fetched, else a stop.
    pub(super) fn failed(&self, out: Outcome, e: UpstreamError) -> Result<Outcome, UpstreamError> {
        if out.pages == 0 {
            return Err(e);
        }
        let reason = match e {
            UpstreamError::Malformed { .. }
            | UpstreamError::MissingCollection { .. }
            | UpstreamError::MalformedPage { .. } => StopReason::MalformedPage,
            _ => StopReason::UpstreamError,
        };
        Ok(out.stop(reason, Some(e.to_string())))
    }

    /// Keeps a page's items (at `ranges` of `body`) within the items bound:
    /// the body itself with ranges into it, or, in a fan-out that tags rows,
    /// the tagged copies. Returns whether some had to be left out.
    pub(super) fn keep(
        &mut self,
        body: String,
        ranges: Vec<Range<usize>>,
        value: Option<&Value>,
        out: &mut Outcome,
    ) -> bool {
        let take = self.budget.take_items(ranges.len());
        let kept = &ranges[..take];
        let items = &mut self.gathered.items;
        match (self.tag_key, value) {
            (Some(key), Some(v)) => {
                for range in kept {
                    for_each::tag_into(items, &body[range.clone()], key, v);
                }
            }
            _ => items.keep_ranges(body, kept),
        }
        out.items += take;
        take < ranges.len()
    }

    fn keep_single(&mut self, root: &RawValue, value: Option<&Value>) {
        match (self.tag_key, value) {
            (Some(key), Some(v)) => {
                for_each::tag_into(&mut self.gathered.items, root.get(), key, v);
                self.budget.add_item();
            }
            _ => self.gathered.single = Some(root.to_owned()),
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

    pub(super) fn report(&mut self, page: u32, value: Option<&Value>) {
        let event = ProgressEvent {
            page,
            pages_max: self.budget.limits.max_pages,
            items: self.budget.items(),
            requests: self.budget.requests(),
            requests_max: self.budget.limits.max_requests,
            elapsed_ms: self.budget.elapsed().as_millis() as u64,
            value: value.cloned(),
        };
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .offer(event);
    }
}

/// A page read from a body, or how the walk ended with it.
pub(super) enum PageRead<'t> {
    Page(Page<'t>),
    Ended(Result<Outcome, UpstreamError>),
}

/// Why page one could not be read.
enum FirstPageError {
    Malformed(String),
    Missing(UpstreamError),
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

pub(super) fn fingerprint(items: &[&RawValue]) -> Vec<u64> {
    items
        .iter()
        .map(|item| {
            let mut h = DefaultHasher::new();
            item.get().hash(&mut h);
            h.finish()
        })
        .collect()
}

/// The total a page without a collection declares, if it parses.
fn declared_rows(text: &str) -> Option<u64> {
    let top: RawObject = serde_json::from_str(text).ok()?;
    collection::declared_total(&top)
}

/// The body as text, taken over without a copy when nothing else holds it.
fn into_text(response: RawResponse) -> Result<String, UpstreamError> {
    let status = response.status;
    String::from_utf8(Vec::from(response.body)).map_err(|e| {
        let message = e.utf8_error().to_string();
        UpstreamError::Malformed {
            status,
            message,
            excerpt: excerpt(e.as_bytes()),
        }
    })
}

/// A body that is text but not the JSON expected.
fn malformed_text(status: u16, text: &str, message: &str) -> UpstreamError {
    UpstreamError::Malformed {
        status,
        message: message.to_string(),
        excerpt: excerpt(text.as_bytes()),
    }
}
