//! The result of one call and how it is written: the tool's own payload
//! shape with the verdict's keys after it, straight from raw items without
//! building a JSON tree. The workflow rendering (the verdict under `_loop`)
//! is here; the agent's keys (`_pagingComplete`, `_likelyMoreRows`,
//! `_note`, `_cache`) belong to dragnet-gateway, which writes them through
//! `render_with` / `write_with`.

use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::fmt::{self, Write};

use crate::fields::UnmatchedFields;
use dragnet_core::budget::CallStats;
use dragnet_core::document::Document;
use dragnet_core::json;
use dragnet_core::json_rows::Rows;
use dragnet_core::payload::{write_fields, write_items, write_key, Envelope, Payload, Visible};
use dragnet_core::ports::cache::{CacheLabel, PayloadRow};
use dragnet_core::verdict::Verdict;

/// What a workflow's note adds on a cache hit.
pub const WORKFLOW_REFRESH_ADVICE: &str =
    " Run the workflow again with `dragnet run --refresh` to get the latest data.";

/// One `_for_each` value that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ForEachError {
    pub value: Value,
    pub error: String,
}

/// Everything one call produced.
#[derive(Debug)]
pub struct LoopResult {
    /// Unprojected and unfiltered: what is stored and cached.
    pub payload: Payload,
    /// The rows after `_filter` and `_fields`, when either was set.
    pub shaped: Option<Rows>,
    pub verdict: Verdict,
    pub unmatched_fields: Option<UnmatchedFields>,
    pub for_each_errors: Vec<ForEachError>,
    /// What the cache did, when a cache was involved.
    pub cache: Option<CacheLabel>,
    /// What the upstream answered (zeros for a cache hit).
    pub stats: CallStats,
}

impl LoopResult {
    /// The rows the caller sees (shaped if asked), as JSON text.
    pub fn visible(&self) -> Visible<'_> {
        match &self.shaped {
            Some(rows) => Visible::Rows(rows),
            None => Visible::Items(self.payload.items()),
        }
    }

    /// The payload with its first `limit` visible rows, then `extra` keys
    /// (a verdict's, a size guard's).
    pub fn render_with(&self, extra: &[(&str, Value)], limit: usize) -> String {
        let extra: Vec<(&str, Extra)> = extra
            .iter()
            .map(|(k, v)| (*k, Extra::Value(v.clone())))
            .collect();
        let mut out = String::with_capacity(self.rendered_len().min(1 << 20));
        // Writing to a String cannot fail.
        let _ = self.write_raw(&extra, limit, &mut out);
        out
    }

    /// The payload with every row, then `extra`, written straight to `w`
    /// without building it in memory first (a large result is not held
    /// twice).
    pub fn write_with(
        &self,
        extra: &[(&str, Value)],
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let extra: Vec<(&str, Extra)> = extra
            .iter()
            .map(|(k, v)| (*k, Extra::Value(v.clone())))
            .collect();
        let mut sink = IoSink {
            inner: w,
            error: None,
        };
        match self.write_raw(&extra, usize::MAX, &mut sink) {
            Ok(()) => Ok(()),
            Err(_) => Err(sink
                .error
                .unwrap_or_else(|| std::io::Error::other("the rendering failed"))),
        }
    }

    /// The workflow rendering: payload plus `_loop: {complete, requests,
    /// itemCount, stoppedBy, note}`.
    /// The note, with `advice` after it on a cache hit (how its reader
    /// gets the latest data: a workflow is run with `--refresh`, an agent
    /// passes `_refresh: true`).
    pub fn note_with(&self, advice: &str) -> Cow<'_, str> {
        let note = self.verdict.note.as_str();
        if !self.cache.as_ref().is_some_and(|c| c.hit) {
            return Cow::Borrowed(note);
        }
        Cow::Owned(format!("{note}{advice}"))
    }

    /// The workflow rendering as a `Document` (a step's output): written
    /// from checked parts, so not parsed again.
    pub fn workflow_document(&self) -> Document {
        self.workflow_document_with(None)
    }

    /// As [`LoopResult::workflow_document`], with one more key in `_loop`
    /// after the verdict's (an incremental step's window).
    pub fn workflow_document_with(&self, in_loop: Option<&(&str, Value)>) -> Document {
        Document::written(self.render_workflow_with(in_loop))
    }

    pub fn render_workflow(&self) -> String {
        self.render_workflow_with(None)
    }

    fn render_workflow_with(&self, in_loop: Option<&(&str, Value)>) -> String {
        self.render_with_loop(self.loop_text(in_loop))
    }

    /// The `_loop` object's text: the verdict, the cache label, then
    /// `in_loop`.
    fn loop_text(&self, in_loop: Option<&(&str, Value)>) -> String {
        let v = &self.verdict;
        // `_loop` is written directly: it is on every workflow step's path.
        let note = self.note_with(WORKFLOW_REFRESH_ADVICE);
        let mut verdict = String::with_capacity(160 + note.len());
        verdict.push_str("{\"complete\":");
        verdict.push_str(if v.complete { "true" } else { "false" });
        verdict.push_str(",\"requests\":");
        verdict.push_str(&v.requests.to_string());
        verdict.push_str(",\"itemCount\":");
        verdict.push_str(&v.item_count.to_string());
        verdict.push_str(",\"stoppedBy\":");
        match v.stopped_by {
            Some(s) => json::write_str(&mut verdict, s.as_str()),
            None => verdict.push_str("null"),
        }
        verdict.push_str(",\"note\":");
        json::write_str(&mut verdict, &note);
        if let Some(label) = &self.cache {
            verdict.push_str(",\"cache\":");
            verdict.push_str(
                &json!({
                    "hit": label.hit,
                    "stored": label.stored,
                    "mode": label.mode.as_str(),
                    "cachedAt": label.cached_at,
                    "expiresAt": label.expires_at,
                })
                .to_string(),
            );
        }
        if let Some((key, value)) = in_loop {
            verdict.push(',');
            json::write_str(&mut verdict, key);
            verdict.push(':');
            verdict.push_str(&value.to_string());
        }
        verdict.push('}');
        verdict
    }

    /// The workflow rendering with `loop_text` as `_loop`.
    fn render_with_loop(&self, loop_text: String) -> String {
        let reports = self.reports();
        let mut extra: Vec<(&str, Extra)> = vec![("_loop", Extra::Raw(loop_text))];
        extra.extend(reports.into_iter().map(|(k, v)| (k, Extra::Value(v))));
        let mut out = String::with_capacity(self.rendered_len());
        // Writing to a String cannot fail.
        let _ = self.write_raw(&extra, usize::MAX, &mut out);
        out
    }

    /// When this workflow rendering is a cached payload exactly as it was
    /// stored, with `_loop` after it (a hit; nothing filtered, projected or
    /// reported): where the store keeps that payload, and the `_loop`
    /// text. A store may keep these two instead of the rendering;
    /// [`served_document`] writes the same bytes from them.
    pub fn served_from(&self, in_loop: Option<&(&str, Value)>) -> Option<ServedFrom> {
        let label = self.cache.as_ref().filter(|c| c.hit)?;
        let row = label.payload_row?;
        let plain = self.shaped.is_none()
            && self.unmatched_fields.is_none()
            && self.for_each_errors.is_empty();
        plain.then(|| ServedFrom {
            row,
            loop_text: self.loop_text(in_loop),
        })
    }

    /// `_unmatchedFields` and `_forEachErrors`, when there is anything to say.
    pub fn reports(&self) -> Vec<(&'static str, Value)> {
        let mut extra = Vec::new();
        if let Some(u) = &self.unmatched_fields {
            let sample = u
                .sample_item
                .as_ref()
                .map(json::leaf)
                .unwrap_or(Value::Null);
            extra.push((
                "_unmatchedFields",
                json!({"fields": u.fields, "availableKeys": u.available_keys, "sampleItem": sample}),
            ));
        }
        if !self.for_each_errors.is_empty() {
            let errors: Vec<Value> = self
                .for_each_errors
                .iter()
                .map(|e| json!({"value": e.value, "error": e.error}))
                .collect();
            extra.push(("_forEachErrors", Value::Array(errors)));
        }
        extra
    }

    /// About how long a rendering is: the rows plus room for the verdict.
    fn rendered_len(&self) -> usize {
        let rows = match self.visible() {
            Visible::Items(items) => items.item_bytes() + items.len(),
            Visible::Rows(rows) => rows.text_len() + rows.len(),
        };
        rows + 256
    }

    /// Writes the rendering: the payload with its first `limit` visible
    /// rows, then `extra`.
    fn write_raw<W: Write>(
        &self,
        extra: &[(&str, Extra)],
        limit: usize,
        out: &mut W,
    ) -> fmt::Result {
        write_rendering(&self.payload, self.visible(), extra, limit, out)
    }
}

/// Writes `payload` with its first `limit` rows of `items` (its own
/// items, or the rows shaped from them), then `extra`.
fn write_rendering<W: Write>(
    payload: &Payload,
    items: Visible<'_>,
    extra: &[(&str, Extra)],
    limit: usize,
    out: &mut W,
) -> fmt::Result {
    out.write_char('{')?;
    let mut first = true;
    match payload {
        Payload::Collection {
            envelope: Envelope::Object(fields),
            ..
        } => write_fields(out, fields, items, limit, &mut first)?,
        Payload::Collection {
            envelope: Envelope::Bare,
            ..
        }
        | Payload::Items(_) => {
            write_key(out, "items", &mut first)?;
            write_items(out, items.iter().take(limit))?;
        }
        Payload::Single(raw) => match json::object(raw) {
            Some(obj) => {
                for (key, value) in &obj.fields {
                    if extra.iter().any(|(k, _)| *k == key.0) {
                        continue;
                    }
                    write_key(out, &key.0, &mut first)?;
                    out.write_str(value.get())?;
                }
            }
            None => {
                write_key(out, "result", &mut first)?;
                out.write_str(raw.get())?;
            }
        },
    }
    for (key, value) in extra {
        write_key(out, key, &mut first)?;
        match value {
            Extra::Raw(text) => out.write_str(text)?,
            Extra::Value(v) => out.write_str(&v.to_string())?,
        }
    }
    out.write_char('}')
}

/// `fmt::Write` over an `io::Write`, keeping the first I/O error.
struct IoSink<'a> {
    inner: &'a mut dyn std::io::Write,
    error: Option<std::io::Error>,
}

impl Write for IoSink<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.inner.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            fmt::Error
        })
    }
}

/// A step's output served from the cache, as a store keeps it: the
/// payload's row and the `_loop` object's text (`LoopResult::served_from`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServedFrom {
    pub row: PayloadRow,
    pub loop_text: String,
}

/// The workflow rendering of `payload` (a cached payload, decoded) with
/// `loop_text` as `_loop`: byte for byte what the step that was served it
/// rendered, when `loop_text` is its `ServedFrom::loop_text`.
pub fn served_document(payload: &Payload, loop_text: &str) -> Document {
    let items = payload.items();
    let mut out = String::with_capacity(items.item_bytes() + items.len() + loop_text.len() + 16);
    let extra = [("_loop", Extra::Raw(loop_text.to_string()))];
    // Writing to a String cannot fail.
    let _ = write_rendering(payload, Visible::Items(items), &extra, usize::MAX, &mut out);
    Document::written(out)
}

/// A key added next to the payload: JSON text written here, or a value.
enum Extra {
    Raw(String),
    Value(Value),
}

/// Parses a rendering back, for callers that want a tree (tests, small
/// results). Not for large results.
pub fn to_value(rendered: &str) -> Value {
    serde_json::from_str(rendered).unwrap_or(Value::Object(Map::new()))
}
