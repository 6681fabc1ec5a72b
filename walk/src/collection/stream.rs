//! A page split while it arrives, for a call that keeps only shaped rows
//! (`crate::walk::early`). The path of the collection is known before
//! the page (the caller's, the schema's, or page one's), so each piece of
//! the body is read once: the items of an array at that path leave in
//! *batches* (JSON arrays of whole items, cut at the items' commas) and
//! everything else stays as the *hollow* page, the page with each such
//! array emptied down to its last item.
//!
//! The hollow page is read by the ordinary split (`first_page`,
//! `split_text`): where the collection is, the envelope, a declared total,
//! the end signals and a last item's cursor are decided exactly as for the
//! whole page, a repeated key included (the first place, the last value).
//! Every batch is parsed, so validated, by whoever takes it; the page is
//! valid JSON when the hollow page and every batch are. Nothing here
//! validates: a page this scanner misreads makes the hollow page or a
//! batch invalid, and the page is refused as malformed.

use memchr::memchr2;

/// A batch is handed on once it holds this many bytes (at the next item).
pub const BATCH_BYTES: usize = 256 * 1024;

/// What takes the items of the collection.
pub trait Batches {
    /// Another array at the path began: the rows of the arrays before it
    /// are void (the last one is the collection).
    fn restart(&mut self);
    /// A JSON array of whole items, cut from the collection in order, and
    /// how many items it holds when it is valid JSON (its commas counted).
    /// The taker may keep the buffer, leaving another (empty) in its place.
    fn batch(&mut self, text: &mut Vec<u8>, items: usize) -> Result<(), String>;
}

/// Where the scanner is in the text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lex {
    Code,
    Str,
    Esc,
}

/// An open object or array outside the collection.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// An object at depth `level` of the path: its keys are read. `value`
    /// is `Some(matched)` after a key's colon, until the next comma.
    Path {
        level: usize,
        value: Option<bool>,
    },
    Other,
}

/// The splitter of one page along one path.
#[derive(Debug)]
pub struct StreamSplit<'p> {
    path: &'p [String],
    stack: Vec<Frame>,
    lex: Lex,
    /// The key being read in a path object (raw, escapes as sent).
    key: Option<Vec<u8>>,
    /// The root value has ended.
    root_done: bool,
    hollow: Vec<u8>,
    /// Inside an array at the path: its state.
    collection: Option<Collection>,
    /// An array at the path was seen before.
    seen: bool,
}

/// The state of the collection being read.
#[derive(Debug)]
struct Collection {
    /// The current batch: `[` and the items so far, joined by commas.
    batch: Vec<u8>,
    /// Nesting inside the current item.
    depth: usize,
    /// Where the current item starts in `batch`.
    item_start: usize,
    /// The last complete item, kept when its batch left.
    last: Vec<u8>,
    /// The batch was cut at a comma, so another item must follow.
    cut: bool,
    /// Commas between the current batch's items.
    commas: usize,
}

impl<'p> StreamSplit<'p> {
    pub fn new(path: &'p [String]) -> Self {
        StreamSplit {
            path,
            stack: Vec::new(),
            lex: Lex::Code,
            key: None,
            root_done: false,
            hollow: Vec::new(),
            collection: None,
            seen: false,
        }
    }

    /// Reads the next piece of the body.
    pub fn feed(&mut self, piece: &[u8], out: &mut dyn Batches) -> Result<(), String> {
        let mut i = 0;
        while i < piece.len() {
            i = if self.collection.is_some() {
                self.collection_run(piece, i, out)?
            } else {
                self.hollow_run(piece, i, out)
            };
        }
        Ok(())
    }

    /// The hollow page so far.
    pub fn hollow(&self) -> &[u8] {
        &self.hollow
    }

    /// The hollow page, once the body has ended. `Err` when it ended
    /// inside the collection (the page is cut off).
    pub fn finish(self) -> Result<Vec<u8>, String> {
        if self.collection.is_some() {
            return Err("the page ended inside its collection".into());
        }
        Ok(self.hollow)
    }

    /// Reads outside the collection from `start`, copying to the hollow
    /// page, until the piece ends or an array at the path opens.
    fn hollow_run(&mut self, piece: &[u8], start: usize, out: &mut dyn Batches) -> usize {
        let mut i = start;
        while i < piece.len() {
            let b = piece[i];
            match self.lex {
                Lex::Str => {
                    let Some(k) = memchr2(b'"', b'\\', &piece[i..]) else {
                        self.keep_key(&piece[i..]);
                        i = piece.len();
                        break;
                    };
                    self.keep_key(&piece[i..i + k]);
                    i += k;
                    if piece[i] == b'\\' {
                        self.keep_key(b"\\");
                        self.lex = Lex::Esc;
                    } else {
                        self.lex = Lex::Code;
                    }
                    i += 1;
                    continue;
                }
                Lex::Esc => {
                    self.keep_key(&[b]);
                    self.lex = Lex::Str;
                    i += 1;
                    continue;
                }
                Lex::Code => {}
            }
            i += 1;
            match b {
                b'"' => {
                    if let Some(Frame::Path { value: None, .. }) = self.stack.last() {
                        self.key = Some(Vec::new());
                    }
                    self.lex = Lex::Str;
                }
                b':' => {
                    if let Some(Frame::Path { level, value }) = self.stack.last_mut() {
                        let key = self.key.take().unwrap_or_default();
                        *value = Some(key_is(&key, &self.path[*level]));
                    }
                }
                b',' => {
                    if let Some(Frame::Path { value, .. }) = self.stack.last_mut() {
                        *value = None;
                    }
                }
                b'{' | b'[' => {
                    if self.opens_collection(b) {
                        self.hollow.extend_from_slice(&piece[start..i]);
                        self.begin_collection(out);
                        return i;
                    }
                    let frame = self.frame_for(b);
                    self.stack.push(frame);
                }
                b'}' | b']' => {
                    self.stack.pop();
                    if self.stack.is_empty() {
                        self.root_done = true;
                    }
                }
                _ => {
                    if self.stack.is_empty() && !b.is_ascii_whitespace() {
                        self.root_done = true;
                    }
                }
            }
        }
        self.hollow.extend_from_slice(&piece[start..i]);
        i
    }

    /// Appends to the key being read, if one is.
    fn keep_key(&mut self, bytes: &[u8]) {
        if let Some(key) = &mut self.key {
            key.extend_from_slice(bytes);
        }
    }

    /// Whether `open` here is an array at the path.
    fn opens_collection(&self, open: u8) -> bool {
        if open != b'[' {
            return false;
        }
        match self.stack.last() {
            None => !self.root_done && self.path.is_empty(),
            Some(Frame::Path {
                level,
                value: Some(true),
            }) => level + 1 == self.path.len(),
            Some(_) => false,
        }
    }

    /// The frame `open` pushes here (not the collection).
    fn frame_for(&self, open: u8) -> Frame {
        if open != b'{' {
            return Frame::Other;
        }
        match self.stack.last() {
            None if !self.root_done && !self.path.is_empty() => Frame::Path {
                level: 0,
                value: None,
            },
            Some(Frame::Path {
                level,
                value: Some(true),
            }) if level + 1 < self.path.len() => Frame::Path {
                level: level + 1,
                value: None,
            },
            _ => Frame::Other,
        }
    }

    fn begin_collection(&mut self, out: &mut dyn Batches) {
        if self.seen {
            out.restart();
        }
        self.seen = true;
        let mut batch = Vec::with_capacity(BATCH_BYTES + 4096);
        batch.push(b'[');
        self.collection = Some(Collection {
            batch,
            depth: 0,
            item_start: 1,
            last: Vec::new(),
            cut: false,
            commas: 0,
        });
    }

    /// Reads inside the collection from `start` until the piece ends or
    /// the collection closes.
    fn collection_run(
        &mut self,
        piece: &[u8],
        start: usize,
        out: &mut dyn Batches,
    ) -> Result<usize, String> {
        let Some(c) = self.collection.as_mut() else {
            return Ok(start);
        };
        let mut from = start;
        let mut i = start;
        while i < piece.len() {
            match self.lex {
                Lex::Str => {
                    let Some(k) = memchr2(b'"', b'\\', &piece[i..]) else {
                        i = piece.len();
                        break;
                    };
                    i += k;
                    self.lex = if piece[i] == b'\\' {
                        Lex::Esc
                    } else {
                        Lex::Code
                    };
                    i += 1;
                    continue;
                }
                Lex::Esc => {
                    self.lex = Lex::Str;
                    i += 1;
                    continue;
                }
                Lex::Code => {}
            }
            let b = piece[i];
            match b {
                b'"' => self.lex = Lex::Str,
                b'{' | b'[' => c.depth += 1,
                b'}' | b']' if c.depth > 0 => c.depth -= 1,
                b']' => {
                    c.batch.extend_from_slice(&piece[from..i]);
                    self.end_collection(out)?;
                    return Ok(i + 1);
                }
                b',' if c.depth == 0 => {
                    c.batch.extend_from_slice(&piece[from..i]);
                    c.next_item(out)?;
                    from = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        c.batch.extend_from_slice(&piece[from..i]);
        Ok(i)
    }

    /// The collection's `]` came: its last batch leaves and the hollow
    /// page gets the last item and the `]`.
    fn end_collection(&mut self, out: &mut dyn Batches) -> Result<(), String> {
        let Some(mut c) = self.collection.take() else {
            return Ok(());
        };
        let tail = &c.batch[c.item_start..];
        let tail_empty = tail.iter().all(u8::is_ascii_whitespace);
        if tail_empty && c.cut {
            return Err("a comma before the end of the collection".into());
        }
        if !tail_empty {
            c.last.clear();
            c.last.extend_from_slice(tail);
        }
        self.hollow.extend_from_slice(&c.last);
        self.hollow.push(b']');
        if self.stack.is_empty() {
            self.root_done = true;
        }
        if c.batch.len() > 1 {
            c.batch.push(b']');
            let items = c.commas + usize::from(!tail_empty);
            out.batch(&mut c.batch, items)?;
        }
        Ok(())
    }
}

impl Collection {
    /// A comma between items: the item before it is complete. The batch
    /// leaves when it is large enough, else the comma joins it.
    fn next_item(&mut self, out: &mut dyn Batches) -> Result<(), String> {
        if self.batch.len() < BATCH_BYTES {
            self.batch.push(b',');
            self.commas += 1;
            self.item_start = self.batch.len();
            return Ok(());
        }
        self.last.clear();
        self.last.extend_from_slice(&self.batch[self.item_start..]);
        self.batch.push(b']');
        out.batch(&mut self.batch, self.commas + 1)?;
        self.batch.clear();
        self.batch.push(b'[');
        self.item_start = 1;
        self.cut = true;
        self.commas = 0;
        Ok(())
    }
}

/// Whether a key read raw (escapes as sent) is `want`.
fn key_is(raw: &[u8], want: &str) -> bool {
    if !raw.contains(&b'\\') {
        return raw == want.as_bytes();
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice::<String>(&quoted).is_ok_and(|k| k == want)
}

/// What a page split in pieces gave, read as a caller reads a streamed
/// page (`in_pieces`).
#[derive(Debug)]
pub struct InPieces {
    /// The items of the batches, when the hollow page has the collection
    /// (`None`: no collection there); `Err` when the page was refused.
    pub read: Result<Option<Vec<String>>, String>,
    /// The items the hollow page kept (the last, or none).
    pub hollow_items: Vec<String>,
    pub hollow: Vec<u8>,
    pub batches: usize,
    pub restarts: usize,
}

/// `text` fed in pieces of `piece` bytes along `path`, each batch parsed
/// and the hollow page split as the walk does: the tests and the fuzzer
/// hold it against the split of the whole page. Panics when a batch that
/// parses holds another number of items than the scanner counted (the
/// fuzzer's check).
pub fn in_pieces(text: &str, path: &[String], piece: usize) -> InPieces {
    let mut split = StreamSplit::new(path);
    let mut gather = Gather::default();
    let fed = text
        .as_bytes()
        .chunks(piece.max(1))
        .try_for_each(|chunk| split.feed(chunk, &mut gather));
    let hollow = fed.and_then(|()| split.finish());
    let hollow_read = hollow.as_ref().map_err(String::clone).and_then(|hollow| {
        let text = std::str::from_utf8(hollow).map_err(|e| e.to_string())?;
        let page = super::split_text(text, path).map_err(|e| e.to_string())?;
        Ok(page.map(|p| {
            p.items
                .iter()
                .map(|i| i.get().to_string())
                .collect::<Vec<_>>()
        }))
    });
    let (read, hollow_items) = match hollow_read {
        Ok(Some(kept)) => (Ok(Some(std::mem::take(&mut gather.items))), kept),
        Ok(None) => (Ok(None), Vec::new()),
        Err(e) => (Err(e), Vec::new()),
    };
    InPieces {
        read,
        hollow_items,
        hollow: hollow.unwrap_or_default(),
        batches: gather.batches,
        restarts: gather.restarts,
    }
}

/// Takes batches for `in_pieces`.
#[derive(Default)]
struct Gather {
    items: Vec<String>,
    batches: usize,
    restarts: usize,
}

impl Batches for Gather {
    fn restart(&mut self) {
        self.items.clear();
        self.restarts += 1;
    }

    fn batch(&mut self, text: &mut Vec<u8>, count: usize) -> Result<(), String> {
        self.batches += 1;
        let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
        let items: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(text).map_err(|e| e.to_string())?;
        // A valid batch holds as many items as the scanner counted.
        assert_eq!(items.len(), count, "items counted in {text}");
        self.items.extend(items.iter().map(|i| i.get().to_string()));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
