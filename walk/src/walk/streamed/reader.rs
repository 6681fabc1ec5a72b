//! Where a streamed page's batches are read: on the receiving task while
//! the page is small, on a thread of their own from the first full batch
//! on. A large page is then received and split on one core while its
//! items are parsed and shaped on the other, instead of one after the
//! other. The thread is joined when the page ends (it has at most
//! [`IN_FLIGHT`] batches left to read then), or when the page is given up
//! (a retry begins it again); emptied batch buffers come back from it to
//! be filled again, so a page reuses a handful of buffers.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::{Early, PageRows, Parts};
use crate::collection::stream::{Batches, BATCH_BYTES};

/// Batches on their way to the thread at most.
const IN_FLIGHT: usize = 4;

/// What reads one page's batches.
pub(super) struct Reader<'s> {
    early: Early<'s>,
    room: usize,
    here: PageRows<'s>,
    thread: Option<Shaping>,
}

impl<'s> Reader<'s> {
    pub fn new(early: Early<'s>, room: usize) -> Self {
        Reader {
            early,
            room,
            here: PageRows::new(early, room),
            thread: None,
        }
    }

    /// The page's items, once every batch was given.
    pub fn finish(mut self) -> Result<PageRows<'s>, String> {
        match self.thread.take() {
            None => Ok(self.here),
            Some(thread) => thread
                .join()
                .map(|parts| PageRows::from_parts(self.early, self.room, parts)),
        }
    }
}

impl Batches for Reader<'_> {
    fn restart(&mut self) {
        self.here.restart();
        if let Some(thread) = &mut self.thread {
            // A thread that stopped says why at the next batch or the end.
            let _ = thread.send(Msg::Restart);
        }
    }

    fn batch(&mut self, text: &mut Vec<u8>) -> Result<(), String> {
        if self.thread.is_none() && text.len() >= BATCH_BYTES {
            // Without a thread (none could be started) the page is read here.
            self.thread = Shaping::start(self.early, self.room);
        }
        let Some(thread) = &mut self.thread else {
            return self.here.batch(text);
        };
        let spare = thread
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH_BYTES + 4096));
        // Checked as text here, so the thread only parses.
        let full = String::from_utf8(std::mem::replace(text, spare))
            .map_err(|e| e.utf8_error().to_string())?;
        if thread.send(Msg::Batch(full)).is_ok() {
            return Ok(());
        }
        // The thread stopped on a batch that is not JSON: its reason.
        match self.thread.take().map(Shaping::join) {
            Some(Err(reason)) => Err(reason),
            _ => Err("the page's items could not be read".into()),
        }
    }
}

enum Msg {
    Batch(String),
    Restart,
}

/// The thread a large page's batches are parsed and shaped on.
struct Shaping {
    batches: Option<SyncSender<Msg>>,
    spare: Receiver<Vec<u8>>,
    handle: Option<JoinHandle<Result<Parts, String>>>,
}

impl Shaping {
    /// A thread with its own copy of the shaping; `None` when the system
    /// gives no thread.
    fn start(early: Early<'_>, room: usize) -> Option<Shaping> {
        let filter = early.filter.clone();
        let fields = early.fields.cloned();
        let (batches, inbox) = mpsc::sync_channel::<Msg>(IN_FLIGHT);
        let (give_back, spare) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
        let handle = std::thread::Builder::new()
            .name("dragnet-shape".into())
            .spawn(move || {
                let early = Early {
                    filter: &filter,
                    fields: fields.as_ref(),
                };
                let mut rows = PageRows::new(early, room);
                for msg in inbox {
                    match msg {
                        Msg::Restart => rows.restart(),
                        Msg::Batch(text) => {
                            rows.read(&text)?;
                            let mut buffer = text.into_bytes();
                            buffer.clear();
                            let _ = give_back.try_send(buffer);
                        }
                    }
                }
                Ok(rows.into_parts())
            })
            .ok()?;
        Some(Shaping {
            batches: Some(batches),
            spare,
            handle: Some(handle),
        })
    }

    /// `Err` when the thread has stopped.
    fn send(&mut self, msg: Msg) -> Result<(), ()> {
        match &self.batches {
            Some(batches) => batches.send(msg).map_err(|_| ()),
            None => Err(()),
        }
    }

    /// Waits for the thread to read what it was given.
    fn join(mut self) -> Result<Parts, String> {
        self.batches = None;
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(read)) => read,
            _ => Err("the thread shaping the page failed".into()),
        }
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
