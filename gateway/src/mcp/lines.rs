//! The stdio transport: one JSON-RPC message a line
//! ([`dragnet_providers::lines::Lines`], read and written as rmcp's own
//! line transport does), with a `tools/call` request, what an agent sends
//! most, read straight into its one request type. rmcp reads every request
//! as an untagged union of its 22 kinds, trying the 13 before `tools/call`
//! first and formatting an error for each miss: about a tenth of what the
//! gateway spent on a passed-through call (P9 in `docs/PERFORMANCE.md`).
//! Anything else, and a `tools/call` line that does not read as one, is
//! read by rmcp's codec itself, so both readings agree by construction.

use dragnet_providers::lines::{Reading, BYTE_ORDER_MARK};
use rmcp::model::{
    CallToolRequest, ClientNotification, ClientRequest, ClientResult, JsonRpcMessage,
    JsonRpcRequest,
};
use rmcp::service::RxJsonRpcMessage;
use rmcp::RoleServer;

/// The gateway's stdio transport.
pub type Lines = dragnet_providers::lines::Lines<RoleServer, ToolCalls>;

/// An agent's `tools/call` requests read as their one kind.
#[derive(Debug, Default)]
pub struct ToolCalls;

impl Reading<RoleServer> for ToolCalls {
    fn read(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        tool_call(line)
    }
}

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
