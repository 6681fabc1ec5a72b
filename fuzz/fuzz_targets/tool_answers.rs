//! One line an upstream MCP server sends the gateway, read by the child
//! transport's reading of `tools/call` answers
//! (`dragnet_providers::child::ToolAnswers`, with calls `1` and `"a"`
//! waiting for their answers) and by rmcp's own codec: the reading takes
//! an answer as a tool result its own way, so the two must agree on every
//! line — the same message, written the same, or no message from either.
//! Neither may panic.
#![no_main]
#![forbid(unsafe_code)]

use dragnet_providers::child::{tool_answer, ToolAnswers};
use dragnet_providers::lines::{read_message, Read, Reading};
use libfuzzer_sys::fuzz_target;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::JsonRpcMessageCodec;
use rmcp::RoleClient;
use tokio_util::codec::Decoder;

fn call(id: serde_json::Value) -> TxJsonRpcMessage<RoleClient> {
    serde_json::from_value(serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t"}
    }))
    .expect("a call")
}

fuzz_target!(|data: &[u8]| {
    // One line: what follows a newline is not part of it.
    let line = data.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut input = line.to_vec();
    input.push(b'\n');

    let mut framed = bytes::BytesMut::from(&input[..]);
    let by_rmcp = JsonRpcMessageCodec::<RxJsonRpcMessage<RoleClient>>::new()
        .decode(&mut framed)
        .ok()
        .flatten();
    let wire = |m: &RxJsonRpcMessage<RoleClient>| serde_json::to_string(m).expect("writable");

    if let Some(fast) = tool_answer(line) {
        let rmcp = by_rmcp.as_ref().expect("rmcp read the answer too");
        assert_eq!(wire(&fast), wire(rmcp), "the readings differ");
    }

    let mut reading = ToolAnswers::default();
    reading.sent(&call(1.into()));
    reading.sent(&call("a".into()));
    let by_lines = match read_message(&mut reading, &input) {
        Read::Message(message) => Some(*message),
        Read::Skipped | Read::Invalid => None,
    };
    match (&by_rmcp, &by_lines) {
        (Some(a), Some(b)) => assert_eq!(wire(a), wire(b), "the readings differ"),
        (None, None) => {}
        _ => panic!("one reading found a message, the other none: {by_rmcp:?} / {by_lines:?}"),
    }
});
