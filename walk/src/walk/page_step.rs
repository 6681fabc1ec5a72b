//! One page's step, shared by the page walk (`walk.rs`) and the cursor
//! walk (`cursor_walk.rs`): the request sent, or read back from the
//! journal and kept in it; the answer's status checked and its body read
//! as text; the page split from it (page one also finds where the
//! collection is); its rows kept within the items bound unless the page
//! repeats the one before; progress reported; and the bounds checked
//! before another page is asked for. A walk keeps only what is its own:
//! how the next request's arguments are made, and what ends it.

use std::hash::BuildHasher;
use std::ops::Range;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::collection::{self, Declared, Page};
use crate::for_each;
use crate::journal::request_key;
use crate::walk::streamed::PageRows;
use crate::walk::{Outcome, Walker};
use dragnet_core::error::excerpt;
use dragnet_core::items::ranges_of;
use dragnet_core::json::RawObject;
use dragnet_core::paging::detect::Walkability;
use dragnet_core::ports::journal::KeptPage;
use dragnet_core::progress::ProgressEvent;
use dragnet_core::verdict::StopReason;
use dragnet_core::UpstreamError;
use dragnet_http::{send_with_retry, FetchError, RawResponse, Target, Upstream};

/// A step's result: go on with `T`, or the walk ended as this says.
pub(super) enum Step<T> {
    Go(T),
    Ended(Result<Outcome, UpstreamError>),
}

/// An answer fetched (or read back from the journal) as text.
pub(super) struct Fetched<'s> {
    pub status: u16,
    /// The body, or the hollow page of a streamed one.
    pub body: String,
    /// The `Link` header's next target.
    pub link: Option<String>,
    /// A streamed page's items, shaped as they arrived (`streamed`).
    pub streamed: Option<PageRows<'s>>,
}

/// A page's rows: where each lies in the body, so the body can be kept
/// (or, for a streamed page, the rows already shaped), and their
/// fingerprint, to spot a page served again.
pub(super) struct Rows<'s> {
    pub count: usize,
    kept: Kept<'s>,
    print: Vec<u64>,
}

/// How a page's rows are kept.
enum Kept<'s> {
    /// Ranges into the page's body.
    Ranges(Vec<Range<usize>>),
    /// Shaped while the page arrived; its body is gone.
    Shaped(PageRows<'s>),
}

impl<'s> Rows<'s> {
    /// The rows of `page` (split from `text`), or of the streamed page
    /// whose hollow page `text` is.
    pub(super) fn of(text: &str, page: &Page<'_>, streamed: Option<PageRows<'s>>) -> Rows<'s> {
        match streamed {
            Some(mut rows) => Rows {
                count: rows.count(),
                print: std::mem::take(&mut rows.print),
                kept: Kept::Shaped(rows),
            },
            None => Rows {
                count: page.items.len(),
                kept: Kept::Ranges(ranges_of(text, &page.items)),
                print: fingerprint(&page.items),
            },
        }
    }
}

/// Which pages can repeat the page before.
#[derive(Clone, Copy)]
pub(super) enum Repeats {
    /// Any page, an empty one too: an offset advanced by no rows asks for
    /// the same page again.
    AnyPage,
    /// Only pages with rows: an empty page with a new cursor is no loop
    /// (a cursor given twice is caught as such).
    PagesWithRows,
}

/// The fingerprint of the walk's last page kept.
#[derive(Default)]
pub(super) struct LastPage(Option<Vec<u64>>);

impl<'a, U: Upstream> Walker<'a, U> {
    /// The answer to `target`, unless the call was cancelled or the
    /// request failed. `total_met`: the pages so far reached the declared
    /// total, so a 404/400 is the end, not an upstream error.
    pub(super) async fn fetch_page(
        &mut self,
        target: Target<'_>,
        out: &mut Outcome,
        total_met: bool,
    ) -> Step<Fetched<'a>> {
        if self.cancel.is_cancelled() {
            return Step::Ended(Ok(std::mem::take(out).stop(StopReason::Cancelled, None)));
        }
        let fetched = match (self.early, self.stream_path()) {
            (Some(early), Some(path)) => self.fetch_streamed(target, &path, early).await,
            _ => self
                .fetch_target(target)
                .await
                .map(|(status, body, link)| Fetched {
                    status,
                    body,
                    link,
                    streamed: None,
                }),
        };
        match fetched {
            Ok(fetched) => Step::Go(fetched),
            Err(FetchError::Stopped(reason)) => {
                Step::Ended(Ok(std::mem::take(out).stop(reason, None)))
            }
            Err(FetchError::Upstream(UpstreamError::Status {
                status: 400 | 404, ..
            })) if total_met => Step::Ended(Ok(std::mem::take(out).done())),
            Err(FetchError::Upstream(e)) => Step::Ended(self.failed(std::mem::take(out), e)),
        }
    }

    /// The page in `text`, counted in `out`: split along the path page one
    /// found, or read as page one (where the collection is). A response
    /// without a collection ends the walk with one item-less result; a page
    /// that cannot be read ends it as `failed` says.
    pub(super) fn read_page<'t>(
        &mut self,
        text: &'t str,
        status: u16,
        out: &mut Outcome,
        value: Option<&Value>,
    ) -> Step<Page<'t>> {
        let number = out.pages + 1;
        let e = if self.gathered.located && self.gathered.envelope.is_some() {
            let path = self.gathered.path.clone().unwrap_or_default();
            match collection::split_text(text, &path) {
                Ok(Some(page)) => {
                    out.pages += 1;
                    return Step::Go(page);
                }
                Ok(None) => UpstreamError::MissingCollection {
                    page: number,
                    path: collection::path_text(&path),
                },
                Err(e) => malformed_text(status, text, &e.to_string()),
            }
        } else {
            match self.first_page(text, number) {
                Ok(Some(page)) => {
                    out.pages += 1;
                    return Step::Go(page);
                }
                Ok(None) => match serde_json::from_str::<&RawValue>(text) {
                    Ok(root) => {
                        // An answer without a collection is no walk: no
                        // progress event, so no page counters anywhere.
                        self.keep_single(root, value);
                        out.pages += 1;
                        return Step::Ended(Ok(std::mem::take(out).done()));
                    }
                    Err(e) => malformed_text(status, text, &e.to_string()),
                },
                Err(FirstPageError::Malformed(e)) => malformed_text(status, text, &e),
                Err(FirstPageError::Missing(e)) => e,
            }
        };
        Step::Ended(self.failed(std::mem::take(out), e))
    }

    /// Keeps a page's rows (in `body`) and reports progress, unless the
    /// page repeats the one before (`repeats` says which can): then its
    /// rows are dropped and the walk stops. Also stops when the items
    /// bound left some rows out; `None` lets the walk go on.
    pub(super) fn keep_page(
        &mut self,
        body: String,
        rows: Rows<'a>,
        last: &mut LastPage,
        repeats: Repeats,
        value: Option<&Value>,
        out: &mut Outcome,
    ) -> Option<Outcome> {
        let n = rows.count;
        let can_repeat = match repeats {
            Repeats::AnyPage => true,
            Repeats::PagesWithRows => n > 0,
        };
        if can_repeat && last.0.as_ref() == Some(&rows.print) {
            let detail = format!(
                "page {} repeated page {}; its {n} rows were dropped",
                out.pages,
                out.pages - 1
            );
            self.report(out.pages, value);
            return Some(std::mem::take(out).stop(StopReason::RepeatedPage, Some(detail)));
        }
        last.0 = Some(rows.print);
        let truncated = match (rows.kept, self.early.filter(|_| self.shapes_early())) {
            (Kept::Shaped(page), _) => self.keep_shaped(page, out),
            // A page read whole in a call that shapes early: shaped now,
            // and its body let go.
            (Kept::Ranges(ranges), Some(early)) => {
                let prints = last.0.as_deref().unwrap_or_default();
                let items = ranges
                    .iter()
                    .zip(prints)
                    .map(|(r, p)| (&body[r.clone()], *p));
                let page = PageRows::of_items(early, self.items_room(), items);
                self.keep_shaped(page, out)
            }
            (Kept::Ranges(ranges), None) => self.keep(body, ranges, value, out),
        };
        self.report(out.pages, value);
        truncated.then(|| std::mem::take(out).stop(StopReason::Items, None))
    }

    /// The stop a bound calls for before another page is asked for: the
    /// pages bound, or the call's budget spent.
    pub(super) fn bounded(&self, out: &mut Outcome) -> Option<Outcome> {
        let reason = if out.pages >= self.budget.limits.max_pages {
            StopReason::Pages
        } else {
            self.budget.exhausted()?
        };
        Some(std::mem::take(out).stop(reason, None))
    }

    /// Reports the walk's progress after `page`.
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

    /// The status, the body as text, and the `Link` header's next target
    /// of the answer to `target`.
    async fn fetch_target(
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
    fn failed(&self, out: Outcome, e: UpstreamError) -> Result<Outcome, UpstreamError> {
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
    fn keep(
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

    /// Keeps a streamed page's shaped rows within the items bound.
    /// Returns whether some had to be left out.
    fn keep_shaped(&mut self, page: PageRows<'a>, out: &mut Outcome) -> bool {
        let count = page.count();
        let take = self.budget.take_items(count);
        self.gathered.early.add(page, take);
        out.items += take;
        take < count
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
}

/// Why page one could not be read.
enum FirstPageError {
    Malformed(String),
    Missing(UpstreamError),
}

/// How items are fingerprinted: foldhash's quality hasher with a fixed
/// seed, several times faster than SipHash on long items (a 24 MB page's
/// fingerprints were 3% of a filter-and-project call). Nothing secret is
/// keyed by it; a collision could only make a page look repeated, which
/// stops the walk as partial, never complete.
pub(super) static FINGERPRINT: foldhash::quality::FixedState =
    foldhash::quality::FixedState::with_seed(0x6472_6167_6e65_7421);

fn fingerprint(items: &[&RawValue]) -> Vec<u64> {
    items
        .iter()
        .map(|item| FINGERPRINT.hash_one(item.get()))
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
