//! JSON-RPC over a reader and a writer, one message a line, read and
//! written as rmcp's own line transport does — lines of at most 16 MiB (a
//! longer one is dropped and the session goes on), a trailing `\r` and a
//! leading byte-order mark ignored, a line that is not JSON skipped, JSON
//! that is no message answered `Invalid request`, an unreadable
//! notification outside MCP skipped — with one difference: a [`Reading`]
//! may read the message a side sends most as its one kind.
//!
//! rmcp reads every message of a role as an untagged union, trying each
//! kind in turn and formatting an error for each miss: a `tools/call`
//! request is the fourteenth kind a server tries, and a `tools/call`
//! answer the sixteenth a client tries. Both ends of the gateway's stdio
//! path read those straight into their one type ([`Lines`] with the
//! gateway's reading of requests, and [`crate::child`] with
//! [`crate::child::ToolAnswers`]); anything else, and a line the reading
//! declines, is read by rmcp's codec itself, so both readings agree by
//! construction wherever the fast one declines.

use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::ErrorData;
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::Decoder;

/// The longest line read (rmcp's default).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// A leading UTF-8 byte-order mark, which a line may carry (RFC 8259 §8.1).
pub const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type Sending = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

/// How one side reads the messages it gets most: as their one kind, not
/// by trying each kind of the role's union.
pub trait Reading<R: ServiceRole>: Send + 'static {
    /// Notes a message about to go out (a request whose answer it will
    /// read, a cancellation).
    fn sent(&mut self, _message: &TxJsonRpcMessage<R>) {}

    /// `line` (without its newline or `\r`) read as the one kind it is, or
    /// `None` to leave it to rmcp's codec. What it returns must be what
    /// the codec would read.
    fn read(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<R>>;

    /// Notes a message rmcp's codec read (one `read` declined).
    fn received(&mut self, _message: &RxJsonRpcMessage<R>) {}
}

/// JSON-RPC over a reader and a writer, a message a line.
pub struct Lines<R: ServiceRole, K: Reading<R>> {
    read: BufReader<Reader>,
    /// The line being read; kept across a cancelled `receive`.
    line: Vec<u8>,
    /// Dropping the rest of a line that was too long.
    discarding: bool,
    max_line: usize,
    write: Arc<Mutex<Option<Writer>>>,
    /// The `Invalid request` answer being written, resumed by the next
    /// `receive` when one was cancelled midway.
    answering: Option<Sending>,
    reading: K,
    role: PhantomData<fn() -> R>,
}

impl<R: ServiceRole, K: Reading<R> + Default> Lines<R, K> {
    pub fn new(read: Reader, write: Writer) -> Lines<R, K> {
        Lines::with_max_line(read, write, MAX_LINE)
    }

    pub fn with_max_line(read: Reader, write: Writer, max_line: usize) -> Lines<R, K> {
        Lines::reading(read, write, max_line, K::default())
    }
}

impl<R: ServiceRole, K: Reading<R>> Lines<R, K> {
    /// Lines read with `reading`.
    pub fn reading(read: Reader, write: Writer, max_line: usize, reading: K) -> Lines<R, K> {
        Lines {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line,
            write: Arc::new(Mutex::new(Some(write))),
            answering: None,
            reading,
            role: PhantomData,
        }
    }

    /// Reads up to the next `\n` into `self.line`, never holding more than
    /// `max_line` bytes. Cancel-safe: what was read stays in `self.line`.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let (taken, step) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => return LineRead::Failed(e),
                };
                if available.is_empty() {
                    return LineRead::Ended;
                }
                let newline = memchr::memchr(b'\n', available);
                let take = newline.map_or(available.len(), |at| at + 1);
                let ends = newline.is_some();
                let step = if self.discarding {
                    self.discarding = !ends;
                    Step::More
                } else if self.line.len().saturating_add(take) > self.max_line {
                    self.line.clear();
                    self.discarding = !ends;
                    Step::TooLong
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    match ends {
                        true => Step::Line,
                        false => Step::More,
                    }
                };
                (take, step)
            };
            self.read.consume(taken);
            match step {
                Step::Line => return LineRead::Line,
                Step::TooLong => return LineRead::TooLong,
                Step::More => {}
            }
        }
    }
}

enum Step {
    Line,
    TooLong,
    More,
}

enum LineRead {
    Line,
    TooLong,
    Ended,
    Failed(io::Error),
}

/// What one line held.
#[derive(Debug)]
pub enum Read<R: ServiceRole> {
    Message(Box<RxJsonRpcMessage<R>>),
    /// Nothing to act on: blank, not JSON, or an unreadable notification
    /// outside MCP.
    Skipped,
    /// JSON that is no message of the protocol.
    Invalid,
}

/// Writes `message` and its newline, whole, under the writer's lock.
fn sending<R: ServiceRole>(
    write: Arc<Mutex<Option<Writer>>>,
    message: TxJsonRpcMessage<R>,
) -> Sending {
    Box::pin(async move {
        let mut text = serde_json::to_vec(&message).map_err(io::Error::from)?;
        text.push(b'\n');
        let mut write = write.lock().await;
        let Some(write) = write.as_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the transport is closed",
            ));
        };
        write.write_all(&text).await?;
        write.flush().await
    })
}

impl<R: ServiceRole, K: Reading<R>> Transport<R> for Lines<R, K> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.reading.sent(&item);
        sending::<R>(self.write.clone(), item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        loop {
            if let Some(answer) = self.answering.as_mut() {
                let written = answer.await;
                self.answering = None;
                if written.is_err() {
                    return None;
                }
            }
            match self.read_line().await {
                LineRead::Line => {}
                LineRead::TooLong => {
                    tracing::error!(
                        max = self.max_line,
                        "an incoming message was longer than a line may be; it was dropped"
                    );
                    continue;
                }
                // A last line without its newline is incomplete: dropped.
                LineRead::Ended => return None,
                LineRead::Failed(e) => {
                    tracing::error!(%e, "reading a JSON-RPC stream");
                    return None;
                }
            }
            let read = read_message(&mut self.reading, &self.line);
            self.line.clear();
            match read {
                Read::Message(message) => return Some(*message),
                Read::Skipped => {}
                Read::Invalid => {
                    let answer = TxJsonRpcMessage::<R>::error(invalid_request(), None);
                    self.answering = Some(sending::<R>(self.write.clone(), answer));
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

fn invalid_request() -> ErrorData {
    ErrorData::invalid_request("Invalid request", None)
}

/// The message on one line (its `\n` included or not): read by `reading`
/// when it knows the line, else by rmcp's codec.
pub fn read_message<R: ServiceRole, K: Reading<R>>(reading: &mut K, line: &[u8]) -> Read<R> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Read::Skipped;
    }
    if let Some(message) = reading.read(line) {
        return Read::Message(Box::new(message));
    }
    let mut buf = BytesMut::with_capacity(line.len() + 1);
    buf.extend_from_slice(line);
    buf.extend_from_slice(b"\n");
    match JsonRpcMessageCodec::<RxJsonRpcMessage<R>>::new().decode(&mut buf) {
        Ok(Some(message)) => {
            reading.received(&message);
            Read::Message(Box::new(message))
        }
        Ok(None) => Read::Skipped,
        Err(JsonRpcMessageCodecError::Serde(e)) => match e.classify() {
            // Not JSON: no id to answer, and answering could start a storm
            // of errors with a peer that echoes them (as rmcp does).
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => Read::Skipped,
            serde_json::error::Category::Data | serde_json::error::Category::Io => Read::Invalid,
        },
        Err(_) => Read::Skipped,
    }
}
