//! Where a streamed page's batches are read. A small page's are read on
//! the receiving task. From the first full batch on, batches go to a
//! thread of their own, so the page is received and split on one core
//! while its items are parsed and shaped on the other; when that thread
//! already has [`IN_FLIGHT`] batches waiting, the receiving task reads the
//! next one itself instead of waiting. Each batch is read on its own, with
//! the room the items bound leaves at its place in the page (the scanner
//! counts each batch's items); what it gave is added to the page's rows
//! in page order as soon as the batches before it are in, so little waits.
//! The thread is joined when the page ends (it has at most [`IN_FLIGHT`]
//! batches left), or when the page is given up (a retry begins it again);
//! emptied buffers come back from it to be filled again.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::thread::JoinHandle;

use super::{Early, PageRows, Parts, Place, SAMPLE};
use crate::collection::stream::{Batches, BATCH_BYTES};
use crate::fields::Projection;
use crate::filter::Filter;

/// Batches waiting for the thread at most.
const IN_FLIGHT: usize = 3;

/// What reads one page's batches.
pub(super) struct Reader<'s> {
    early: Early<'s>,
    room: usize,
    /// Items in the batches given so far, as the scanner counted them.
    given: usize,
    /// The next batch's place in the page.
    next: usize,
    /// Batches before this place were voided by a restart.
    first: usize,
    /// The rows of the batches added so far, in page order.
    rows: PageRows<'s>,
    /// The place of the next batch to add.
    wanted: usize,
    /// Batches read ahead of one still being read.
    waiting: BTreeMap<usize, Parts>,
    thread: Option<Shaping>,
}

impl<'s> Reader<'s> {
    pub fn new(early: Early<'s>, room: usize) -> Self {
        Reader {
            early,
            room,
            given: 0,
            next: 0,
            first: 0,
            rows: PageRows::new(early, room),
            wanted: 0,
            waiting: BTreeMap::new(),
            thread: None,
        }
    }

    /// The page's items, in order, once every batch was given.
    pub fn finish(mut self) -> Result<PageRows<'s>, String> {
        if let Some(mut thread) = self.thread.take() {
            for (place, parts) in thread.join()? {
                self.add(place, parts);
            }
        }
        Ok(self.rows)
    }

    /// Takes what the thread has read so far.
    fn collect_ready(&mut self) {
        let read = self
            .thread
            .as_ref()
            .map(Shaping::read_so_far)
            .unwrap_or_default();
        for (place, parts) in read {
            self.add(place, parts);
        }
    }

    /// Adds a batch's rows, and any read ahead that now follow in order.
    fn add(&mut self, place: usize, parts: Parts) {
        if place < self.first {
            return;
        }
        self.waiting.insert(place, parts);
        while let Some(parts) = self.waiting.remove(&self.wanted) {
            self.rows.absorb(parts);
            self.wanted += 1;
        }
    }
}

impl Batches for Reader<'_> {
    fn restart(&mut self) {
        self.given = 0;
        self.first = self.next;
        self.wanted = self.next;
        self.waiting.clear();
        self.rows = PageRows::new(self.early, self.room);
    }

    fn batch(&mut self, text: &mut Vec<u8>, items: usize) -> Result<(), String> {
        self.collect_ready();
        let place = self.next;
        self.next += 1;
        let at = Place {
            room: self.room.saturating_sub(self.given),
            samples: SAMPLE.saturating_sub(self.given),
        };
        self.given += items;
        if self.thread.is_none() && text.len() >= BATCH_BYTES {
            // Without a thread (none could be started) every batch is read here.
            self.thread = Shaping::start(self.early);
        }
        let Some(thread) = &mut self.thread else {
            let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
            let parts = PageRows::read_batch(self.early, at, text)?;
            self.add(place, parts);
            return Ok(());
        };
        // Checked as text here, so the thread only parses.
        let full =
            String::from_utf8(std::mem::take(text)).map_err(|e| e.utf8_error().to_string())?;
        match thread.offer(Batch {
            place,
            at,
            text: full,
        }) {
            Ok(()) => {
                *text = thread
                    .spare
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BATCH_BYTES + 4096));
                Ok(())
            }
            // The thread has enough to read: this one is read here.
            Err(TrySendError::Full(Batch { text: full, .. })) => {
                let parts = PageRows::read_batch(self.early, at, &full)?;
                self.add(place, parts);
                let mut buffer = full.into_bytes();
                buffer.clear();
                *text = buffer;
                Ok(())
            }
            // The thread stopped on a batch that is not JSON: its reason.
            Err(TrySendError::Disconnected(_)) => match self.thread.take().map(|mut t| t.join()) {
                Some(Err(reason)) => Err(reason),
                _ => Err("the page's items could not be read".into()),
            },
        }
    }
}

/// A batch for the thread, with its place in the page.
struct Batch {
    place: usize,
    at: Place,
    text: String,
}

/// The thread a large page's batches are parsed and shaped on.
struct Shaping {
    batches: Option<SyncSender<Batch>>,
    /// What the thread read, with each batch's place.
    read: Receiver<(usize, Parts)>,
    spare: Receiver<Vec<u8>>,
    handle: Option<JoinHandle<Result<(), String>>>,
}

impl Shaping {
    /// A thread with its own copy of the shaping; `None` when the system
    /// gives no thread.
    fn start(early: Early<'_>) -> Option<Shaping> {
        let filter = early.filter.clone();
        let fields = early.fields.cloned();
        let (batches, inbox) = mpsc::sync_channel::<Batch>(IN_FLIGHT);
        let (done, read) = mpsc::channel::<(usize, Parts)>();
        let (give_back, spare) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
        let handle = std::thread::Builder::new()
            .name("dragnet-shape".into())
            .spawn(move || read_batches(&filter, fields.as_ref(), &inbox, &done, &give_back))
            .ok()?;
        Some(Shaping {
            batches: Some(batches),
            read,
            spare,
            handle: Some(handle),
        })
    }

    /// Hands a batch over unless the thread has enough waiting (`Full`,
    /// with the batch back) or has stopped (`Disconnected`).
    fn offer(&mut self, batch: Batch) -> Result<(), TrySendError<Batch>> {
        match &self.batches {
            Some(batches) => batches.try_send(batch),
            None => Err(TrySendError::Disconnected(batch)),
        }
    }

    /// What the thread has read since this was last asked.
    fn read_so_far(&self) -> Vec<(usize, Parts)> {
        self.read.try_iter().collect()
    }

    /// Waits for the thread to read what it was given: the rest of what
    /// it read, or why it stopped.
    fn join(&mut self) -> Result<Vec<(usize, Parts)>, String> {
        self.batches = None;
        let ended = match self.handle.take().map(JoinHandle::join) {
            Some(Ok(ended)) => ended,
            _ => Err("the thread shaping the page failed".into()),
        };
        ended.map(|()| self.read.try_iter().collect())
    }
}

impl Drop for Shaping {
    /// A page given up: the thread reads what it holds and ends; it is
    /// joined, never left behind.
    fn drop(&mut self) {
        self.batches = None;
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The thread's work: every batch it is given read on its own and sent
/// back with its place, until the page ends.
fn read_batches(
    filter: &Filter,
    fields: Option<&Projection>,
    inbox: &Receiver<Batch>,
    done: &Sender<(usize, Parts)>,
    give_back: &SyncSender<Vec<u8>>,
) -> Result<(), String> {
    let early = Early { filter, fields };
    for Batch { place, at, text } in inbox {
        let parts = PageRows::read_batch(early, at, &text)?;
        // The reader is gone only when the page was given up.
        if done.send((place, parts)).is_err() {
            return Ok(());
        }
        let mut buffer = text.into_bytes();
        buffer.clear();
        let _ = give_back.try_send(buffer);
    }
    Ok(())
}
