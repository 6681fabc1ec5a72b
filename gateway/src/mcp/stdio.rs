//! This process's stdin and stdout as the stdio transport. When both are
//! pipes (the way an MCP client starts a server) or Unix sockets, they are
//! read and written through the runtime's event loop, so a message costs
//! no hop through tokio's blocking pool: `tokio::io::stdin()` reads on a
//! blocking thread and hands every line over to a worker, which on two
//! cores was about a third of what the gateway added to a plain call
//! (0.40 → 0.27 ms; `docs/PERFORMANCE.md`, P9). Anything else (a
//! terminal, a file) is served the usual way.
//!
//! Both descriptors are duplicated and put in non-blocking mode, which
//! holds for the open pipes themselves: nothing else in this process may
//! then read stdin or write stdout with blocking calls. Over stdio the
//! protocol owns both, and logs go to stderr.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;
use tokio::net::UnixStream;

/// A reader of stdin and a writer of stdout.
pub type Stdio = (
    Box<dyn AsyncRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
);

/// stdin and stdout through the event loop when both are pipes or
/// sockets, else tokio's blocking-pool stdio. Nothing is changed unless
/// both can be: a non-blocking stdin read the blocking way would fail.
pub fn stdio() -> Stdio {
    let ends = (|| {
        let input = io::stdin().as_fd().try_clone_to_owned().ok()?;
        let output = io::stdout().as_fd().try_clone_to_owned().ok()?;
        let (input_kind, output_kind) = (kind(&input)?, kind(&output)?);
        let reader = async_reader(input, input_kind).ok()?;
        let writer = async_writer(output, output_kind).ok()?;
        Some((reader, writer))
    })();
    ends.unwrap_or_else(|| {
        let (r, w) = rmcp::transport::stdio();
        (Box::new(r), Box::new(w))
    })
}

/// What an end of stdio is, when the event loop can serve it.
#[derive(Clone, Copy)]
enum Kind {
    Pipe,
    Socket,
}

fn kind(fd: &OwnedFd) -> Option<Kind> {
    let file = std::fs::File::from(fd.try_clone().ok()?);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        Some(Kind::Pipe)
    } else if kind.is_socket() {
        Some(Kind::Socket)
    } else {
        None
    }
}

fn async_reader(fd: OwnedFd, kind: Kind) -> io::Result<Box<dyn AsyncRead + Send + Unpin>> {
    Ok(match kind {
        Kind::Pipe => Box::new(pipe::Receiver::from_owned_fd(fd)?),
        Kind::Socket => Box::new(unix_stream(fd)?),
    })
}

fn async_writer(fd: OwnedFd, kind: Kind) -> io::Result<Box<dyn AsyncWrite + Send + Unpin>> {
    Ok(match kind {
        Kind::Pipe => Box::new(pipe::Sender::from_owned_fd(fd)?),
        Kind::Socket => Box::new(unix_stream(fd)?),
    })
}

fn unix_stream(fd: OwnedFd) -> io::Result<UnixStream> {
    let std = std::os::unix::net::UnixStream::from(fd);
    std.set_nonblocking(true)?;
    UnixStream::from_std(std)
}
