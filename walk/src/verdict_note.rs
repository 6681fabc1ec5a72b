//! Adding up the outcomes of one call (every `_for_each` value) into its
//! verdict, and writing the note in plain words: what was fetched, why it
//! stopped, what to do.

use crate::options::LoopOptions;
use crate::result::ForEachError;
use crate::walk::Outcome;
use dragnet_core::verdict::{StopReason, Verdict};

/// The running sum of a call's outcomes.
#[derive(Debug, Default)]
pub struct Tally {
    /// Fan-out values asked for (0 without a fan-out).
    pub values: usize,
    /// Collections fetched without error.
    pub succeeded: usize,
    pub pages: u32,
    /// The first reason anything stopped short.
    pub stopped_by: Option<StopReason>,
    pub likely_more: bool,
    pub details: Vec<String>,
    /// Fan-out values never fetched.
    pub skipped_values: usize,
}

impl Tally {
    pub fn add(&mut self, outcome: &Outcome) {
        self.succeeded += 1;
        self.pages += outcome.pages;
        if !outcome.complete {
            self.stopped_by = self.stopped_by.or(outcome.stopped_by);
            self.likely_more |= outcome.likely_more;
        }
        if let Some(detail) = &outcome.detail {
            if !self.details.contains(detail) {
                self.details.push(detail.clone());
            }
        }
    }

    /// Records that the fan-out stopped early, leaving `skipped` values.
    pub fn stop(&mut self, reason: StopReason, skipped: usize) {
        self.stopped_by = self.stopped_by.or(Some(reason));
        self.skipped_values += skipped;
        self.likely_more = true;
    }
}

/// What a call fetched and shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub requests: u32,
    /// Rows fetched (unfiltered).
    pub items: usize,
    /// Rows shown after `_filter`/`_fields`, when either was set.
    pub visible: Option<usize>,
    /// The response had no collection and is returned whole.
    pub single: bool,
}

/// The verdict of a call.
pub fn compose(
    tally: &Tally,
    errors: &[ForEachError],
    counts: Counts,
    options: &LoopOptions,
) -> Verdict {
    let Counts {
        requests,
        items,
        visible,
        single,
    } = counts;
    let mut stopped_by = tally.stopped_by;
    let mut likely_more = tally.likely_more;
    if stopped_by.is_none() && !errors.is_empty() {
        stopped_by = Some(StopReason::UpstreamError);
        likely_more = true;
    }
    let complete = stopped_by.is_none();
    let mut note = String::new();
    let pages = plural(tally.pages as usize, "page");
    let reqs = plural(requests as usize, "request");
    let rows = plural(items, "row");
    let across = if tally.values > 0 {
        format!(" across {}", plural(tally.values, "value"))
    } else {
        String::new()
    };
    if complete && single {
        note.push_str(&format!(
            "Complete: the response has no collection and is returned whole ({reqs})."
        ));
    } else if complete {
        note.push_str(&format!(
            "Complete: all {rows} fetched in {pages} with {reqs}{across}."
        ));
    } else if stopped_by == Some(StopReason::NotWalked) {
        note.push_str(&format!(
            "Incomplete: only one page ({rows}) was fetched{across}; this tool pages, so more rows may exist."
        ));
    } else if let Some(reason) = stopped_by {
        note.push_str(&format!(
            "Incomplete: {rows} fetched in {pages} with {reqs}{across}, then stopped: {}.",
            reason.explain()
        ));
    }
    for detail in &tally.details {
        note.push_str(&format!(" Note: {detail}."));
    }
    if tally.skipped_values > 0 {
        note.push_str(&format!(
            " {} not fetched.",
            plural(tally.skipped_values, "value")
        ));
    }
    if !errors.is_empty() {
        note.push_str(&format!(
            " {} failed; see _forEachErrors.",
            plural(errors.len(), "value")
        ));
    }
    if let Some(visible) = visible {
        if !options.filter.is_empty() {
            note.push_str(&format!(" {} matched the filter.", plural(visible, "row")));
        }
    }
    if !complete {
        note.push_str(if likely_more {
            " More rows likely remain."
        } else {
            " More rows are not expected, but that is not confirmed."
        });
        note.push_str(" Counts, totals and averages over these rows are not sound.");
        if let Some(reason) = stopped_by {
            note.push(' ');
            note.push_str(reason.advice());
        }
    }
    Verdict {
        complete,
        likely_more_rows: !complete && likely_more,
        requests,
        item_count: items,
        stopped_by,
        note,
    }
}

/// The verdict of a cache hit: complete, no request made. An answer with
/// no collection (`single`) counts no rows.
pub fn cached_verdict(
    items: usize,
    visible: Option<usize>,
    single: bool,
    cached_at: chrono::DateTime<chrono::Utc>,
    expires_at: chrono::DateTime<chrono::Utc>,
    options: &LoopOptions,
) -> Verdict {
    let what = match single {
        true => "the answer has no collection; returned whole from the cache".to_string(),
        false => format!("all {} served from the cache", plural(items, "row")),
    };
    let mut note = format!(
        "Complete: {what}, fetched {} and kept until {}.",
        cached_at.format("%Y-%m-%d %H:%M:%S UTC"),
        expires_at.format("%Y-%m-%d %H:%M:%S UTC")
    );
    if let (Some(visible), false) = (visible, options.filter.is_empty()) {
        note.push_str(&format!(" {} matched the filter.", plural(visible, "row")));
    }
    Verdict {
        complete: true,
        likely_more_rows: false,
        requests: 0,
        item_count: items,
        stopped_by: None,
        note,
    }
}

pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(requests: u32, items: usize) -> Counts {
        Counts {
            requests,
            items,
            ..Counts::default()
        }
    }

    #[test]
    fn incomplete_notes_say_why_and_what_to_do() {
        let mut t = Tally::default();
        t.add(&Outcome {
            complete: false,
            likely_more: true,
            stopped_by: Some(StopReason::Pages),
            pages: 20,
            items: 2000,
            detail: None,
        });
        let v = compose(&t, &[], counts(20, 2000), &LoopOptions::default());
        assert!(!v.complete && v.likely_more_rows);
        assert_eq!(v.stopped_by, Some(StopReason::Pages));
        assert!(
            v.note.contains("2000 rows fetched in 20 pages"),
            "{}",
            v.note
        );
        assert!(v.note.contains("pages-per-collection bound"), "{}", v.note);
        assert!(v.note.contains("not sound"), "{}", v.note);
    }

    #[test]
    fn errors_make_a_fan_out_incomplete() {
        let mut t = Tally::default();
        t.add(&Outcome {
            complete: true,
            pages: 1,
            items: 3,
            ..Outcome::default()
        });
        let errors = [ForEachError {
            value: serde_json::json!(9),
            error: "HTTP 404".into(),
        }];
        let v = compose(&t, &errors, counts(2, 3), &LoopOptions::default());
        assert!(!v.complete);
        assert_eq!(v.stopped_by, Some(StopReason::UpstreamError));
        assert!(v.note.contains("1 value failed"), "{}", v.note);
    }

    #[test]
    fn complete_note() {
        let mut t = Tally::default();
        t.add(&Outcome {
            complete: true,
            pages: 3,
            items: 250,
            ..Outcome::default()
        });
        let v = compose(&t, &[], counts(3, 250), &LoopOptions::default());
        assert!(v.complete && !v.likely_more_rows && v.stopped_by.is_none());
        assert_eq!(
            v.note,
            "Complete: all 250 rows fetched in 3 pages with 3 requests."
        );
    }
}
