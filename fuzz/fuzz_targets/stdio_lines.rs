//! One line an agent sends the stdio gateway, read by the gateway's line
//! transport (`dragnet_gateway::mcp::lines::Lines`) and by rmcp's own
//! codec: the transport reads a `tools/call` request its own way, so the
//! two must agree on every line — the same message, written the same, or
//! no message from either. Neither may panic.
#![no_main]
#![forbid(unsafe_code)]

use std::sync::OnceLock;

use dragnet_gateway::mcp::lines::Lines;
use libfuzzer_sys::fuzz_target;
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::async_rw::JsonRpcMessageCodec;
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio_util::codec::Decoder;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    // One line: what follows a newline is not part of it.
    let line = data.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut input = line.to_vec();
    input.push(b'\n');

    let mut framed = bytes::BytesMut::from(&input[..]);
    let by_rmcp = JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::new()
        .decode(&mut framed)
        .ok()
        .flatten();

    let by_lines = runtime().block_on(async {
        let mut lines = Lines::new(
            Box::new(std::io::Cursor::new(input)),
            Box::new(tokio::io::sink()),
        );
        lines.receive().await
    });

    let wire = |m: &RxJsonRpcMessage<RoleServer>| serde_json::to_string(m).expect("writable");
    match (&by_rmcp, &by_lines) {
        (Some(a), Some(b)) => assert_eq!(wire(a), wire(b), "the readings differ"),
        (None, None) => {}
        _ => panic!("one reading found a message, the other none: {by_rmcp:?} / {by_lines:?}"),
    }
});
