//! The stdio floor of `bench/gateway/run.py`: the least an MCP gateway
//! that reads every message can cost between a client and the server it
//! starts. `stdio_floor COMMAND [ARGS…]` starts COMMAND with piped stdin
//! and stdout, then, on one thread, reads each JSON-RPC line from either
//! side, parses it, gives a request from the client an id of its own (and
//! the answer its caller's id back), writes it again and sends it on.
//! Nothing else: no tools, no secrets, no size budget, no rmcp. stdin and
//! stdout are read and written through tokio's event loop, as
//! `dragnet mcp --stdio` does with pipes.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::process::Stdio;

use anyhow::{bail, Context, Result};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::process::Command;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let program = args.next().context("usage: stdio_floor COMMAND [ARGS…]")?;
    let mut child = Command::new(&program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let mut to_server = child.stdin.take().context("the server's stdin")?;
    let mut from_server =
        BufReader::new(child.stdout.take().context("the server's stdout")?).lines();
    let (input, output) = (std::io::stdin(), std::io::stdout());
    let input = pipe::Receiver::from_owned_fd(input.as_fd().try_clone_to_owned()?)
        .context("stdin must be a pipe")?;
    let mut to_client = pipe::Sender::from_owned_fd(output.as_fd().try_clone_to_owned()?)
        .context("stdout must be a pipe")?;
    let mut from_client = BufReader::new(input).lines();
    let mut ids = Ids::default();
    loop {
        tokio::select! {
            line = from_client.next_line() => {
                let Some(line) = line? else { break };
                let message = ids.outgoing(serde_json::from_str(&line)?);
                send(&mut to_server, &message).await?;
            }
            line = from_server.next_line() => {
                let Some(line) = line? else { bail!("the server closed its stdout") };
                let message = ids.incoming(serde_json::from_str(&line)?);
                send(&mut to_client, &message).await?;
            }
        }
    }
    drop(to_server);
    child.wait().await?;
    Ok(())
}

/// The client's request ids by the ids this hop gave them.
#[derive(Default)]
struct Ids {
    last: u64,
    callers: HashMap<u64, Value>,
}

impl Ids {
    /// A request from the client gets an id of this hop's.
    fn outgoing(&mut self, mut message: Value) -> Value {
        if message.get("method").is_some() {
            if let Some(id) = message.get_mut("id") {
                self.last += 1;
                self.callers
                    .insert(self.last, std::mem::replace(id, self.last.into()));
            }
        }
        message
    }

    /// An answer from the server gets its caller's id back.
    fn incoming(&mut self, mut message: Value) -> Value {
        if message.get("method").is_none() {
            if let Some(id) = message.get_mut("id") {
                if let Some(caller) = id.as_u64().and_then(|ours| self.callers.remove(&ours)) {
                    *id = caller;
                }
            }
        }
        message
    }
}

async fn send(to: &mut (impl AsyncWrite + Unpin), message: &Value) -> Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    to.write_all(&line).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Ids;
    use serde_json::json;

    #[test]
    fn a_request_goes_out_under_an_id_of_its_own_and_its_answer_comes_back_under_the_callers() {
        let mut ids = Ids::default();
        let first = ids.outgoing(json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call"}));
        let second = ids.outgoing(json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call"}));
        assert_eq!(
            (first["id"].clone(), second["id"].clone()),
            (json!(1), json!(2))
        );
        let answer = ids.incoming(json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
        assert_eq!(answer["id"], json!(0));
        let answer = ids.incoming(json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(answer["id"], json!("a"));
        // Each id is given back once.
        let again = ids.incoming(json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(again["id"], json!(1));
    }

    #[test]
    fn notifications_and_the_servers_own_requests_pass_as_they_are() {
        let mut ids = Ids::default();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(ids.outgoing(note.clone()), note);
        // A request from the server, and the client's answer to it.
        let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
        assert_eq!(ids.incoming(ping.clone()), ping);
        let pong = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
        assert_eq!(ids.outgoing(pong.clone()), pong);
    }
}
