use rmcp::model::{ClientRequest, GetMeta, JsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use dragnet_providers::lines::Read;

use super::{tool_call, Lines, ToolCalls};

/// What the gateway's transport reads from one line.
fn read_message(line: &[u8]) -> Read<RoleServer> {
    dragnet_providers::lines::read_message(&mut ToolCalls, line)
}

/// What rmcp's own codec reads from `line`.
fn by_rmcp(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    use tokio_util::codec::Decoder;
    let mut buf = bytes::BytesMut::from(line);
    buf.extend_from_slice(b"\n");
    rmcp::transport::async_rw::JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::new()
        .decode(&mut buf)
        .ok()
        .flatten()
}

fn wire(message: &RxJsonRpcMessage<RoleServer>) -> Value {
    serde_json::to_value(message).unwrap()
}

fn is_call(message: &RxJsonRpcMessage<RoleServer>) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))
    )
}

#[test]
fn a_tool_call_reads_as_rmcp_reads_it() {
    let lines = [
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "order_status", "arguments": {"order_id": 3}}}),
        json!({"jsonrpc": "2.0", "id": "a-1", "method": "tools/call",
               "params": {"name": "listOrders", "arguments": {"_all_pages": true},
                          "_meta": {"progressToken": "p-9", "dev.dragnet/thread": "t1"}}}),
        json!({"method": "tools/call", "params": {"name": "x", "_meta": {
                   "io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
               "id": 1, "jsonrpc": "2.0"}),
    ];
    for line in lines {
        let text = serde_json::to_vec(&line).unwrap();
        let fast = tool_call(&text).expect("read on the fast path");
        let rmcp = by_rmcp(&text).expect("read by rmcp");
        assert!(is_call(&fast) && is_call(&rmcp), "{line}");
        assert_eq!(wire(&fast), wire(&rmcp), "{line}");
        // The `_meta` the handler reads (progress token, protocol version)
        // sits in the request's extensions either way.
        let meta = |m: &RxJsonRpcMessage<RoleServer>| match m {
            JsonRpcMessage::Request(r) => format!("{:?}", r.request.get_meta()),
            _ => unreachable!(),
        };
        assert_eq!(meta(&fast), meta(&rmcp), "{line}");
    }
}

#[test]
fn what_only_mentions_tools_call_goes_to_rmcp() {
    // Another method whose arguments hold the words.
    let list =
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"tools/call"}}"#;
    assert!(tool_call(list).is_none());
    match read_message(list) {
        Read::Message(m) => assert!(matches!(
            *m,
            JsonRpcMessage::Request(ref r) if matches!(r.request, ClientRequest::ListToolsRequest(_))
        )),
        other => panic!("{other:?}"),
    }
    // A call with a stray `result`: no message, as rmcp judges it.
    let stray =
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"},"result":{}}"#;
    assert!(tool_call(stray).is_none());
    assert!(matches!(read_message(stray), Read::Invalid));
    // A call with no name is no call: rmcp reads it as a request of a
    // kind it does not know, and so does the transport.
    let nameless = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}"#;
    assert!(tool_call(nameless).is_none());
    match read_message(nameless) {
        Read::Message(m) => {
            assert!(!is_call(&m));
            assert_eq!(wire(&m), wire(&by_rmcp(nameless).unwrap()));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn blank_lines_non_json_and_unreadable_foreign_notifications_are_skipped() {
    for line in [
        &b"\r\n"[..],
        b"not json at all",
        // A notification outside MCP that reads as none of rmcp's kinds
        // (rmcp's codec skips it rather than answer).
        br#"{"jsonrpc":"2.0","method":"notifications/not-in-mcp","params":5}"#,
    ] {
        assert!(
            matches!(read_message(line), Read::Skipped),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    // A byte-order mark and a carriage return around a call are ignored.
    let call = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}\r\n";
    assert!(matches!(read_message(call), Read::Message(m) if is_call(&m)));
}

#[tokio::test]
async fn a_session_skips_what_it_must_answers_what_is_invalid_and_reads_on() {
    let (mut client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, mut client_out) = tokio::io::duplex(1 << 16);
    let mut lines = Lines::with_max_line(Box::new(server_in), Box::new(server_out), 200);
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(500)
    );
    let input = [
        "garbage".to_string(),
        r#"{"a":1}"#.to_string(),
        long,
        String::new(),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"order_status"}}"#
            .to_string(),
        r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#.to_string(),
        // No newline: an incomplete last line.
        r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#.to_string(),
    ]
    .join("\n");
    client_in.write_all(input.as_bytes()).await.unwrap();
    drop(client_in);

    let first = lines.receive().await.expect("the call");
    assert!(is_call(&first));
    assert_eq!(wire(&first)["id"], 5);
    let second = lines.receive().await.expect("the ping");
    assert_eq!(wire(&second)["method"], "ping");
    assert_eq!(wire(&second)["id"], 6);
    assert!(lines.receive().await.is_none(), "the last line had no end");

    lines.close().await.unwrap();
    drop(lines);
    let mut out = String::new();
    client_out.read_to_string(&mut out).await.unwrap();
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One answer: `{"a":1}` is JSON but no message. The garbage, the blank
    // line and the line over 200 bytes get none.
    assert_eq!(answers.len(), 1, "{out}");
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(answers[0]["error"]["message"], "Invalid request");
}

#[tokio::test]
async fn a_line_longer_than_a_read_is_put_together() {
    let (mut client_in, server_in) = tokio::io::duplex(64);
    let (server_out, _client_out) = tokio::io::duplex(1 << 10);
    let mut lines = Lines::new(Box::new(server_in), Box::new(server_out));
    let arguments = "y".repeat(5_000);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"n","arguments":{{"q":"{arguments}"}}}}}}"#
    );
    let writing = tokio::spawn(async move {
        client_in.write_all(call.as_bytes()).await.unwrap();
        client_in.write_all(b"\n").await.unwrap();
    });
    let message = lines.receive().await.expect("the call");
    writing.await.unwrap();
    assert_eq!(
        wire(&message)["params"]["arguments"]["q"]
            .as_str()
            .map(str::len),
        Some(5_000)
    );
}
