//! A page shaped while it arrives, for a call whose caller reads only
//! the shaped rows ([`crate::call::Unshaped::Dropped`]): the body goes
//! through [`StreamSplit`] chunk by chunk, each batch of items is parsed
//! (so validated), fingerprinted, counted and shaped, and only the rows,
//! the fingerprints, a small sample of items and the hollow page are kept.
//! A 24 MB page is then never held whole. The walk reads the hollow page
//! as it reads any page (where the collection is, the total, the end
//! signals, a last item's cursor); the rows and counts come from here.
//! Where each batch is read (this task or a thread) is `reader`'s; the
//! walk's side of it is [`Walker::shapes_early`], `stream_path` and
//! `fetch_streamed`, and [`EarlyRows`] gathers a call's pages.

use serde::de::{Deserializer as _, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::hash::BuildHasher;

mod reader;

use super::page_step::{Fetched, FINGERPRINT};
use super::Walker;
use crate::collection::stream::StreamSplit;
use crate::fields::{Matched, Projection, UnmatchedFields};
use crate::filter::Filter;
use crate::shape::Shaper;
use dragnet_core::error::excerpt;
use dragnet_core::items::Items;
use dragnet_core::json_rows::Rows;
use dragnet_core::verdict::StopReason;
use dragnet_http::{send_with_retry_into, BodySink, FetchError, SinkRefusal, Target, Upstream};
use reader::Reader;

/// How many items of a call are kept as they came, for the report on
/// projected paths that matched nothing (it looks at the first 50).
pub const SAMPLE: usize = 50;

/// The shaping a call asked for, applied while pages arrive.
#[derive(Debug, Clone, Copy)]
pub struct Early<'s> {
    pub filter: &'s Filter,
    pub fields: Option<&'s Projection>,
}

/// One page's items, read from its batches.
#[derive(Debug)]
pub(super) struct PageRows<'s> {
    shaper: Shaper<'s>,
    /// After item `i`, the rows numbered `ends[i]`: the rows of the
    /// first `n` items are kept when the items bound takes only `n`.
    ends: Vec<usize>,
    pub print: Vec<u64>,
    /// Items read (the fingerprints may have been taken away).
    count: usize,
    sample: Items,
    /// How many items are kept as they came (the first of the page).
    samples: usize,
    /// Items past this many are counted and fingerprinted, not shaped
    /// (the items bound leaves no room for them).
    room: usize,
}

impl<'s> PageRows<'s> {
    fn new(early: Early<'s>, room: usize) -> Self {
        PageRows {
            shaper: Shaper::new(early.filter, early.fields),
            ends: Vec::new(),
            print: Vec::new(),
            count: 0,
            sample: Items::new(),
            samples: SAMPLE,
            room,
        }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// The rows of the first `take` items, which projected paths matched
    /// an item, and the sample cut to those items.
    pub fn into_rows(self, take: usize) -> (Rows, Option<Matched>, Items) {
        let mut rows = self.shaper.rows;
        let keep = match take {
            0 => 0,
            n => self.ends.get(n - 1).copied().unwrap_or(rows.len()),
        };
        rows.truncate(keep);
        let mut sample = self.sample;
        sample.truncate(take);
        (rows, self.shaper.matched, sample)
    }

    fn into_parts(self) -> Parts {
        Parts {
            rows: self.shaper.rows,
            matched: self.shaper.matched,
            ends: self.ends,
            print: self.print,
            count: self.count,
            sample: self.sample,
        }
    }

    /// The items of a page read whole (page one of a call that found its
    /// collection there), shaped as a streamed page's are.
    pub fn of_items<'t>(
        early: Early<'s>,
        room: usize,
        items: impl Iterator<Item = (&'t str, u64)>,
    ) -> Self {
        let mut rows = PageRows::new(early, room);
        for (item, print) in items {
            rows.item(item, print);
        }
        rows
    }

    fn item(&mut self, item: &str, print: u64) {
        self.print.push(print);
        self.count += 1;
        if self.sample.len() < self.samples {
            self.sample.push_text(item);
        }
        if self.ends.len() < self.room {
            self.shaper.item(item);
            self.ends.push(self.shaper.rows.len());
        }
    }
}

impl PageRows<'_> {
    /// One batch read on its own, with `at.room` items to shape and
    /// `at.samples` to keep as they came: what it gave.
    fn read_batch(early: Early<'_>, at: Place, text: &str) -> Result<Parts, String> {
        let mut rows = PageRows::new(early, at.room);
        rows.samples = at.samples;
        rows.read(text)?;
        Ok(rows.into_parts())
    }

    /// Adds what a batch after the ones read so far gave.
    fn absorb(&mut self, parts: Parts) {
        let shift = self.shaper.rows.len();
        self.shaper.rows.append(parts.rows);
        self.ends.extend(parts.ends.iter().map(|end| end + shift));
        self.print.extend(parts.print);
        self.count += parts.count;
        let wanted = SAMPLE.saturating_sub(self.sample.len());
        for item in parts.sample.iter().take(wanted) {
            self.sample.push_text(item);
        }
        match (&mut self.shaper.matched, parts.matched) {
            (Some(all), Some(more)) => all.merge(&more),
            (all @ None, more) => *all = more,
            (Some(_), None) => {}
        }
    }

    /// Reads a batch (text known UTF-8): each item parsed, so validated,
    /// and taken as soon as it is, without collecting the batch first.
    fn read(&mut self, text: &str) -> Result<(), String> {
        let mut de = serde_json::Deserializer::from_str(text);
        de.deserialize_seq(EachItem(self))
            .and_then(|()| de.end())
            .map_err(|e| format!("an item of the collection is not JSON: {e}"))
    }
}

/// Takes each item of a batch as the parser reads it.
struct EachItem<'r, 's>(&'r mut PageRows<'s>);

impl<'de> Visitor<'de> for EachItem<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            let item = item.get();
            self.0.item(item, FINGERPRINT.hash_one(item));
        }
        Ok(())
    }
}

/// The sink a streamed page's body goes to.
pub(super) struct StreamedPage<'p, 's> {
    path: &'p [String],
    early: Early<'s>,
    room: usize,
    split: StreamSplit<'p>,
    reader: Reader<'s>,
    taken: u64,
}

impl<'p, 's> StreamedPage<'p, 's> {
    /// A page split along `path`, with room for `room` more items.
    pub fn new(path: &'p [String], early: Early<'s>, room: usize) -> Self {
        StreamedPage {
            path,
            early,
            room,
            split: StreamSplit::new(path),
            reader: Reader::new(early, room),
            taken: 0,
        }
    }

    /// The hollow page (as text) and the items read, once the body ended.
    pub fn finish(self) -> Result<(String, PageRows<'s>), SinkRefusal> {
        let start = excerpt(self.split.hollow());
        let hollow = self.split.finish().map_err(|message| SinkRefusal {
            message,
            excerpt: start.clone(),
        })?;
        let hollow = String::from_utf8(hollow).map_err(|e| SinkRefusal {
            message: e.utf8_error().to_string(),
            excerpt: excerpt(e.as_bytes()),
        })?;
        let rows = self.reader.finish().map_err(|message| SinkRefusal {
            message,
            excerpt: start,
        })?;
        Ok((hollow, rows))
    }
}

impl BodySink for StreamedPage<'_, '_> {
    fn begin(&mut self) {
        self.split = StreamSplit::new(self.path);
        self.reader = Reader::new(self.early, self.room);
        self.taken = 0;
    }

    fn take(&mut self, piece: &[u8]) -> Result<(), SinkRefusal> {
        self.taken += piece.len() as u64;
        self.split
            .feed(piece, &mut self.reader)
            .map_err(|message| SinkRefusal {
                message,
                excerpt: excerpt(piece),
            })
    }

    fn taken(&self) -> u64 {
        self.taken
    }
}

/// Where a batch lies in its page, as the batch's reader needs it: how
/// many of its items the items bound leaves room for, and how many are
/// still wanted as the page's sample.
#[derive(Debug, Clone, Copy)]
struct Place {
    room: usize,
    samples: usize,
}

/// What a page's items gave, apart from the shaping they borrow: how
/// they cross to and from the thread that shapes a large page.
#[derive(Debug)]
struct Parts {
    rows: Rows,
    matched: Option<Matched>,
    ends: Vec<usize>,
    print: Vec<u64>,
    count: usize,
    sample: Items,
}

/// The shaped rows of every page of a call that shaped them early.
#[derive(Debug, Default)]
pub struct EarlyRows {
    pub rows: Rows,
    matched: Option<Matched>,
    /// The call's first items, as they came.
    sample: Items,
    /// Items taken, within the items bound.
    pub count: usize,
}

impl EarlyRows {
    /// Adds the rows of a page's first `take` items.
    pub(super) fn add(&mut self, page: PageRows<'_>, take: usize) {
        let (rows, matched, sample) = page.into_rows(take);
        self.rows.append(rows);
        match (&mut self.matched, matched) {
            (Some(all), Some(more)) => all.merge(&more),
            (all @ None, more) => *all = more,
            (Some(_), None) => {}
        }
        for item in sample.iter().take(SAMPLE.saturating_sub(self.sample.len())) {
            self.sample.push_text(item);
        }
        self.count += take;
    }

    /// The rows, and the report on projected paths no item matched.
    pub fn into_shaped(self, fields: Option<&Projection>) -> (Rows, Option<UnmatchedFields>) {
        let unmatched = fields.and_then(|projection| {
            let matched = self.matched.unwrap_or_else(|| projection.matched());
            projection.unmatched(&matched, self.sample.iter())
        });
        (self.rows, unmatched)
    }
}

impl<'a, U: Upstream> Walker<'a, U> {
    /// Whether this walk shapes each page as it is kept (the call asked
    /// for it, and nothing keeps pages or tags rows).
    pub fn shapes_early(&self) -> bool {
        self.early.is_some() && self.journal.is_none() && self.tag_key.is_none()
    }

    /// Where the next page is split while it arrives, when it is: the
    /// walk shapes early and the collection's path is known before the
    /// page (page one's, the caller's, or the schema's).
    pub(super) fn stream_path(&self) -> Option<Vec<String>> {
        if !self.shapes_early() {
            return None;
        }
        if self.gathered.located {
            return self
                .gathered
                .envelope
                .as_ref()
                .and(self.gathered.path.clone());
        }
        self.explicit_path
            .map(<[String]>::to_vec)
            .or_else(|| self.tool.response_items_path.clone())
    }

    /// The answer to `target`, its body split along `path` and shaped
    /// while it arrives: the hollow page as the body, the rows beside it.
    pub(super) async fn fetch_streamed(
        &self,
        target: Target<'_>,
        path: &[String],
        early: Early<'a>,
    ) -> Result<Fetched<'a>, FetchError> {
        let mut page = StreamedPage::new(path, early, self.items_room());
        let send = send_with_retry_into(
            self.upstream,
            self.tool,
            target,
            self.budget,
            self.pacing,
            &mut page,
        );
        let response = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(FetchError::Stopped(StopReason::Cancelled)),
            r = send => r?,
        };
        let status = response.status;
        let (body, rows) = page
            .finish()
            .map_err(|refusal| FetchError::Upstream(refusal.into_error(status)))?;
        Ok(Fetched {
            status,
            body,
            link: response.next_link,
            streamed: Some(rows),
        })
    }

    /// The room the items bound leaves.
    pub(super) fn items_room(&self) -> usize {
        self.budget
            .limits
            .max_items
            .saturating_sub(self.budget.items())
    }
}
