//! The stdio transport: one JSON-RPC message a line, read and written as
//! rmcp's own line transport does — lines of at most 16 MiB (a longer one
//! is dropped and the session goes on), a trailing `\r` and a leading
//! byte-order mark ignored, a line that is not JSON skipped, JSON that is
//! no message answered `Invalid request`, an unreadable notification
//! outside MCP skipped — with one difference. A `tools/call` request, what an agent
//! sends most, is read straight into its one request type. rmcp reads
//! every request as an untagged union of its 22 kinds, trying the 13
//! before `tools/call` first and formatting an error for each miss: about
//! a tenth of what the gateway spent on a passed-through call (P9 in
//! `docs/PERFORMANCE.md`). Anything else, and a `tools/call` line that
//! does not read as one, is read by rmcp's codec itself, so both readings
//! agree by construction.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use bytes::BytesMut;
use rmcp::model::{
    CallToolRequest, ClientNotification, ClientRequest, ClientResult, ErrorData, JsonRpcMessage,
    JsonRpcRequest,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio_util::codec::Decoder;

/// The longest line read (rmcp's default).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type Sending = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

/// JSON-RPC over a reader and a writer, a message a line.
pub struct Lines {
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
}

impl Lines {
    pub fn new(read: Reader, write: Writer) -> Lines {
        Lines::with_max_line(read, write, MAX_LINE)
    }

    pub fn with_max_line(read: Reader, write: Writer, max_line: usize) -> Lines {
        Lines {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line,
            write: Arc::new(Mutex::new(Some(write))),
            answering: None,
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
                    if ends {
                        Step::Line
                    } else {
                        Step::More
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
enum Read {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to act on: blank, not JSON, or an unreadable notification
    /// outside MCP.
    Skipped,
    /// JSON that is no message of the protocol.
    Invalid,
}

/// Writes `message` and its newline, whole, under the writer's lock.
fn sending(write: Arc<Mutex<Option<Writer>>>, message: TxJsonRpcMessage<RoleServer>) -> Sending {
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

impl Transport<RoleServer> for Lines {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        sending(self.write.clone(), item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
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
                    tracing::error!(%e, "reading stdin");
                    return None;
                }
            }
            let read = read_message(&self.line);
            self.line.clear();
            match read {
                Read::Message(message) => return Some(*message),
                Read::Skipped => {}
                Read::Invalid => {
                    let answer = TxJsonRpcMessage::<RoleServer>::error(invalid_request(), None);
                    self.answering = Some(sending(self.write.clone(), answer));
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

/// The message on one line (its `\n` included or not).
fn read_message(line: &[u8]) -> Read {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Read::Skipped;
    }
    if let Some(call) = tool_call(line) {
        return Read::Message(Box::new(call));
    }
    let mut buf = BytesMut::with_capacity(line.len() + 1);
    buf.extend_from_slice(line);
    buf.extend_from_slice(b"\n");
    match JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::new().decode(&mut buf) {
        Ok(Some(message)) => Read::Message(Box::new(message)),
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

const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// A `tools/call` request, read as that one kind with rmcp's own message
/// types and checks (the same shape check, `_meta` taken into the
/// request's extensions); `None` for anything else.
fn tool_call(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    memchr::memmem::find(line, b"tools/call")?;
    let line = line.strip_prefix(BYTE_ORDER_MARK).unwrap_or(line);
    type CallOnly = JsonRpcMessage<CallToolRequest, ClientResult, ClientNotification>;
    match serde_json::from_slice::<CallOnly>(line).ok()? {
        JsonRpcMessage::Request(call) => Some(JsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: call.jsonrpc,
            id: call.id,
            request: ClientRequest::CallToolRequest(call.request),
        })),
        _ => None,
    }
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
