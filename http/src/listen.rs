//! The serving side's one rule for sockets: every connection a dragnet
//! server accepts (the API, the gateway over HTTP, the demo shop) sends
//! what it writes at once (`TCP_NODELAY`). Without it an answer whose
//! headers and body leave in two writes waits for the client's delayed
//! acknowledgement, about 40 ms on Linux, before its body goes out.

use axum::serve::{ListenerExt, TapIo};
use tokio::net::{TcpListener, TcpStream};

/// `listener`, with `TCP_NODELAY` set on every connection it accepts.
pub fn sending_at_once(listener: TcpListener) -> TapIo<TcpListener, fn(&mut TcpStream)> {
    listener.tap_io(no_delay as fn(&mut TcpStream))
}

fn no_delay(stream: &mut TcpStream) {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "setting TCP_NODELAY on an accepted connection");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::serve::Listener;

    #[tokio::test]
    async fn accepted_connections_send_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut listener = sending_at_once(listener);
        let client = TcpStream::connect(addr);
        let (client, (accepted, _)) = tokio::join!(client, listener.accept());
        let _client = client.unwrap();
        assert!(accepted.nodelay().unwrap());
    }
}
