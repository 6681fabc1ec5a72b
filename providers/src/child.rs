//! An upstream MCP server run as a child process, spoken to over its stdin
//! and stdout one message a line ([`crate::lines::Lines`]), with the
//! answers to our `tools/call` requests read as their one kind
//! ([`ToolAnswers`]).
//!
//! rmcp's child-process transport reads every answer as an untagged union
//! of 20 result kinds, and a `tools/call` result is the sixteenth: fifteen
//! misses, each formatting an error, came before it, about a third of what
//! the gateway spent on a passed-through call (P9 in
//! `docs/PERFORMANCE.md`). The child's life is run the way rmcp runs it:
//! closing the transport closes the child's stdin and waits for it to end,
//! then asks it to (`SIGTERM`), then kills it, [`GRACE`] apart; a child
//! whose transport is dropped without closing is killed, and reaped by
//! the runtime.

use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcResponse,
    JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::process::{Child, ChildStderr, Command};

use crate::lines::{Lines, Reading, BYTE_ORDER_MARK};

/// How long a closing child is given, after its stdin closes and again
/// after `SIGTERM`, before the next step (rmcp's wait).
pub const GRACE: Duration = Duration::from_secs(3);

/// A running child and the lines to and from it.
pub struct ChildTransport {
    /// Killed when dropped before it ended (and then reaped by the
    /// runtime).
    child: Child,
    lines: Lines<RoleClient, ToolAnswers>,
    /// [`GRACE`] (shorter in tests).
    grace: Duration,
}

impl ChildTransport {
    /// Starts `command` with its stdin, stdout and stderr piped; its stderr
    /// is returned to be read.
    pub fn spawn(mut command: Command) -> io::Result<(ChildTransport, Option<ChildStderr>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other(
                "the child's stdin or stdout was not piped",
            ));
        };
        let stderr = child.stderr.take();
        let lines = Lines::new(Box::new(stdout), Box::new(stdin));
        let transport = ChildTransport {
            child,
            lines,
            grace: GRACE,
        };
        Ok((transport, stderr))
    }

    /// The child's process id, until it has ended and been waited for.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Closes the child's stdin and waits for it to end; then `SIGTERM`,
    /// then kill, [`GRACE`] apart. Cancel-safe: a child not yet ended is
    /// killed when the transport is dropped.
    pub async fn graceful_shutdown(&mut self) -> io::Result<()> {
        self.lines.close().await?;
        if ended_within(&mut self.child, self.grace).await? {
            return Ok(());
        }
        if let Some(pid) = self.child.id() {
            terminate(pid);
            if ended_within(&mut self.child, self.grace).await? {
                return Ok(());
            }
        }
        self.child.kill().await
    }
}

/// Whether `child` ended within `grace`.
async fn ended_within(child: &mut Child, grace: Duration) -> io::Result<bool> {
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(Ok(status)) => {
            tracing::debug!(%status, "an upstream MCP server ended");
            Ok(true)
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Ok(false),
    }
}

/// Asks process `pid` to end (`SIGTERM`).
fn terminate(pid: u32) {
    use nix::sys::signal::{kill, Signal};
    let Ok(pid) = i32::try_from(pid) else { return };
    if let Err(error) = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGTERM) {
        tracing::warn!(%error, pid, "asking an upstream MCP server to end");
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.lines.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.graceful_shutdown()
    }
}

/// The answers to our `tools/call` requests read as that one result kind:
/// the ids of the calls sent and not yet answered (or cancelled) are kept
/// (an answer read either way forgets its id),
/// and an answer to one of them whose result holds only a tool result's
/// members (`content`, `structuredContent`, `isError`, `resultType`,
/// `_meta`) is read as a [`CallToolResult`]. No other result kind can be
/// read from such an object, since each of the fifteen kinds rmcp tries
/// first requires a member outside that set; anything else is left to
/// rmcp's codec.
#[derive(Debug, Default)]
pub struct ToolAnswers {
    calls: HashSet<RequestId>,
}

impl Reading<RoleClient> for ToolAnswers {
    fn sent(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Request(request) => {
                if let ClientRequest::CallToolRequest(_) = request.request {
                    self.calls.insert(request.id.clone());
                }
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                {
                    if let Some(id) = &cancelled.params.request_id {
                        self.calls.remove(id);
                    }
                }
            }
            _ => {}
        }
    }

    /// An answer read the other way (an error, another kind of result)
    /// still answers its call: its id is forgotten.
    fn received(&mut self, message: &RxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Response(response) => self.calls.remove(&response.id),
            JsonRpcMessage::Error(error) => {
                error.id.as_ref().is_some_and(|id| self.calls.remove(id))
            }
            _ => false,
        };
    }

    fn read(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.calls.is_empty() {
            return None;
        }
        let answer = tool_answer(line)?;
        if let JsonRpcMessage::Response(response) = &answer {
            if self.calls.remove(&response.id) {
                return Some(answer);
            }
        }
        None
    }
}

/// `line` as the answer to a `tools/call` request, with rmcp's own types
/// and checks (the message's shape, the tool result's own rules), when its
/// result holds only a tool result's members; `None` for anything else.
/// The answer's id is not checked here.
pub fn tool_answer(line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    memchr::memmem::find(line, b"\"result\"")?;
    let line = line.strip_prefix(BYTE_ORDER_MARK).unwrap_or(line);
    // rmcp refuses a line that is not UTF-8 anywhere, and a member skipped
    // unread would not be checked.
    let line = std::str::from_utf8(line).ok()?;
    let raw = serde_json::from_str::<RawAnswer<'_>>(line).ok()?;
    if raw.method || raw.error {
        return None;
    }
    serde_json::from_str::<ToolResultMembers>(raw.result.get()).ok()?;
    let result = serde_json::from_str::<CallToolResult>(raw.result.get()).ok()?;
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: raw.jsonrpc,
        id: raw.id,
        result: ServerResult::CallToolResult(result),
    }))
}

/// A JSON-RPC answer with its result unread; one with a `method` or an
/// `error` beside its `result` is no answer (rmcp's shape check).
#[derive(Deserialize)]
struct RawAnswer<'a> {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    result: &'a RawValue,
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// True for a member that is there, whatever its value (`null` too).
fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(value).map(|_| true)
}

/// An object with no member but a tool result's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read only to refuse other members
struct ToolResultMembers {
    #[serde(rename = "resultType")]
    result_type: Option<IgnoredAny>,
    content: Option<IgnoredAny>,
    #[serde(rename = "structuredContent")]
    structured_content: Option<IgnoredAny>,
    #[serde(rename = "isError")]
    is_error: Option<IgnoredAny>,
    #[serde(rename = "_meta")]
    meta: Option<IgnoredAny>,
}

#[cfg(test)]
#[path = "child_tests.rs"]
mod tests;
