use std::time::Duration;

use rmcp::model::{JsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;

use super::{tool_answer, ChildTransport, ToolAnswers};
use crate::lines::{read_message, Read, Reading};

/// What rmcp's own codec reads from `line`.
fn by_rmcp(line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    use tokio_util::codec::Decoder;
    let mut buf = tokio_util::bytes::BytesMut::from(line);
    buf.extend_from_slice(b"\n");
    rmcp::transport::async_rw::JsonRpcMessageCodec::<RxJsonRpcMessage<RoleClient>>::new()
        .decode(&mut buf)
        .ok()
        .flatten()
}

fn wire(message: &RxJsonRpcMessage<RoleClient>) -> Value {
    serde_json::to_value(message).unwrap()
}

fn is_tool_result(message: &RxJsonRpcMessage<RoleClient>) -> bool {
    matches!(message, JsonRpcMessage::Response(r) if matches!(r.result, ServerResult::CallToolResult(_)))
}

fn answer(id: Value, result: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap()
}

fn call(id: i64) -> TxJsonRpcMessage<RoleClient> {
    serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                  "params": {"name": "order_status"}}))
    .unwrap()
}

fn cancel(id: i64) -> TxJsonRpcMessage<RoleClient> {
    serde_json::from_value(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                  "params": {"requestId": id}}),
    )
    .unwrap()
}

#[test]
fn a_tool_answer_reads_as_rmcp_reads_it() {
    let results = [
        json!({"content": [{"type": "text", "text": "{\"order_id\": 2}"}],
               "structuredContent": {"order_id": 2}, "isError": false}),
        json!({"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png",
                             "annotations": {"audience": ["user"]}},
                            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
                            {"type": "resource", "resource": {"uri": "file:///b", "text": "b"}}],
               "_meta": {"k": 1}}),
        json!({"content": [], "isError": true, "resultType": "complete"}),
        json!({"structuredContent": null}),
        json!({"content": [{"type": "text", "text": "caf\u{e9} \\\" \n"}]}),
    ];
    for (n, result) in results.into_iter().enumerate() {
        for id in [json!(n), json!(format!("s-{n}"))] {
            let line = answer(id, result.clone());
            let fast = tool_answer(&line).expect("read on the fast path");
            let rmcp = by_rmcp(&line).expect("read by rmcp");
            assert!(is_tool_result(&fast) && is_tool_result(&rmcp), "{result}");
            assert_eq!(wire(&fast), wire(&rmcp), "{result}");
        }
    }
}

#[test]
fn an_object_of_tool_result_members_is_read_by_rmcp_as_a_tool_result_or_as_none_by_either() {
    // Every combination of the members the fast path accepts: whenever it
    // reads one, rmcp reads the same tool result; when it declines, the
    // codec reads the line for it.
    let members = [
        ("content", json!([{"type": "text", "text": "t"}])),
        ("structuredContent", json!({"a": 1})),
        ("isError", json!(true)),
        ("resultType", json!("complete")),
        ("_meta", json!({"m": true})),
    ];
    for mask in 0u32..(1 << members.len()) {
        let result: serde_json::Map<String, Value> = members
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, (k, v))| (k.to_string(), v.clone()))
            .collect();
        let line = answer(json!(1), Value::Object(result.clone()));
        match tool_answer(&line) {
            Some(fast) => assert_eq!(wire(&fast), wire(&by_rmcp(&line).unwrap()), "{result:?}"),
            None => assert!(
                !by_rmcp(&line).as_ref().is_some_and(is_tool_result),
                "rmcp read a tool result the fast path declined: {result:?}"
            ),
        }
    }
}

#[test]
fn what_is_no_tool_answer_goes_to_rmcp() {
    let declined = [
        // Members of other result kinds.
        answer(json!(1), json!({"content": [], "tools": []})),
        answer(json!(1), json!({"task": {"taskId": "t"}})),
        answer(json!(1), json!({"resultType": "input_required", "inputRequests": {}})),
        // Not complete, and nothing at all.
        answer(json!(1), json!({"content": [], "resultType": "task"})),
        answer(json!(1), json!({})),
        // An error, a request and a notification that mention `result`.
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"result"}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"result":{"content":[]}}}"#
            .to_vec(),
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"result":1}}}"#
            .to_vec(),
        // Not UTF-8, in a member nobody reads (found by the fuzz target).
        [
            &br#"{"jsonrpc":"2.0","id":1,"x":""#[..],
            b"\xff\xfe",
            br#"","result":{"content":[]}}"#,
        ]
        .concat(),
        // A stray member beside the result, even `null`: rmcp judges the shape.
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"method":null}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"m"}}"#
            .to_vec(),
    ];
    for line in declined {
        assert!(
            tool_answer(&line).is_none(),
            "{}",
            String::from_utf8_lossy(&line)
        );
    }
}

#[test]
fn only_the_answer_to_a_call_sent_and_not_cancelled_is_read_as_a_tool_result() {
    let mut reading = ToolAnswers::default();
    let line = |id: i64| answer(json!(id), json!({"content": [], "_meta": {"list": []}}));
    // Nothing sent: the codec reads it, as whatever rmcp makes of it.
    assert!(reading.read(&line(1)).is_none());
    reading.sent(&call(1));
    reading.sent(&call(2));
    reading.sent(&cancel(2));
    assert!(reading.read(&line(2)).is_none(), "the call was cancelled");
    assert!(reading.read(&line(3)).is_none(), "no call of that id");
    let read = reading.read(&line(1)).expect("the answer to call 1");
    assert!(is_tool_result(&read));
    assert!(
        reading.read(&line(1)).is_none(),
        "each call is answered once"
    );
    // An answer rmcp's codec reads (an error, another kind of result)
    // answers its call too: nothing is kept for it.
    reading.sent(&call(4));
    reading.sent(&call(5));
    let error = br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"no"}}"#;
    let other = answer(json!(5), json!({"content": [], "tools": []}));
    for line in [&error[..], &other] {
        assert!(matches!(read_message(&mut reading, line), Read::Message(_)));
    }
    assert!(reading.calls.is_empty(), "{:?}", reading.calls);
    // The line reader gives what rmcp gives when the reading declines.
    match read_message(&mut reading, &line(1)) {
        Read::Message(m) => assert_eq!(wire(&m), wire(&by_rmcp(&line(1)).unwrap())),
        other => panic!("{other:?}"),
    }
}

fn command(script: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", script]);
    command
}

fn running(pid: u32) -> bool {
    // A zombie is not running: it has ended and waits to be reaped.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

#[tokio::test]
async fn a_child_speaks_a_line_at_a_time_and_ends_when_its_stdin_closes() {
    // A server of one answer: it reads our call and answers it.
    let script = r#"echo warm >&2; read -r line
echo '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}'
cat >/dev/null"#;
    let (mut child, stderr) = ChildTransport::spawn(command(script)).unwrap();
    let mut stderr = stderr.expect("stderr is piped");
    let mut said = String::new();
    let mut buf = [0u8; 5];
    stderr.read_exact(&mut buf).await.unwrap();
    said.push_str(std::str::from_utf8(&buf).unwrap());
    assert_eq!(said, "warm\n");
    let pid = child.id().expect("running");
    child.send(call(7)).await.unwrap();
    let answered = child.receive().await.expect("the answer");
    assert!(is_tool_result(&answered), "{}", wire(&answered));
    assert_eq!(wire(&answered)["result"]["content"][0]["text"], "ok");
    child.graceful_shutdown().await.unwrap();
    assert!(child.id().is_none());
    assert!(!running(pid), "the child ended and was reaped");
}

#[tokio::test]
async fn a_child_that_stays_is_asked_to_end_then_killed() {
    for script in [
        // Ends on SIGTERM.
        "trap 'exit 0' TERM; while :; do sleep 0.05; done",
        // Ignores it.
        "trap '' TERM; while :; do sleep 0.05; done",
    ] {
        let (mut child, _) = ChildTransport::spawn(command(script)).unwrap();
        child.grace = Duration::from_millis(300);
        let pid = child.id().expect("running");
        child.graceful_shutdown().await.unwrap();
        assert!(!running(pid), "{script}: the child is gone");
    }
}

#[tokio::test]
async fn a_child_whose_transport_is_dropped_is_killed() {
    // Neither the end of its stdin nor SIGTERM ends it.
    let script = "trap '' TERM; while :; do sleep 0.05; done";
    let (child, _) = ChildTransport::spawn(command(script)).unwrap();
    let pid = child.id().expect("running");
    drop(child);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while running(pid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!running(pid), "the dropped child was killed");
}
