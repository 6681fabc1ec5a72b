//! Where the program's output goes. Standard output is one buffered writer
//! for the whole process (line by line on a terminal, in large blocks
//! otherwise), created in `main` and lent to the command; it remembers when
//! the reader went away (`BrokenPipe`), so `main` can end quietly, as
//! `dragnet runs list | head -1` expects. Lines for people on standard
//! error go through `say`, which never fails the program.

use std::io::{self, BufWriter, ErrorKind, IsTerminal, Write};

/// Bytes gathered before a write to a pipe or file.
const BLOCK: usize = 64 * 1024;

/// The one writer of standard output.
pub struct Out {
    inner: Box<dyn Write + Send>,
    broken: bool,
}

impl Out {
    /// Standard output: flushed at each line on a terminal (so output keeps
    /// pace with the progress shown on stderr), else written in blocks.
    pub fn stdout() -> Out {
        let stdout = io::stdout();
        if stdout.is_terminal() {
            Out::new(Box::new(stdout))
        } else {
            Out::new(Box::new(BufWriter::with_capacity(BLOCK, stdout)))
        }
    }

    /// Over any writer (tests).
    pub fn new(inner: Box<dyn Write + Send>) -> Out {
        Out {
            inner,
            broken: false,
        }
    }

    /// Whether a write failed because the reader closed the pipe.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    fn watch<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result {
            if e.kind() == ErrorKind::BrokenPipe {
                self.broken = true;
            }
        }
        result
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.watch(result)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let result = self.inner.write_all(buf);
        self.watch(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.watch(result)
    }
}

/// One line on standard error. A closed or full stderr is ignored: what is
/// said there is for people, and losing it must not stop a run.
pub fn say(line: &str) {
    // One write per line, not one for the text and one for the newline.
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    say_lines(&text);
}

/// Lines already ended with newlines, to stderr in one write.
pub fn say_lines(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that has gone away after `room` bytes.
    struct ClosedAfter {
        room: usize,
    }

    impl Write for ClosedAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from(ErrorKind::BrokenPipe));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_reader_is_remembered() {
        let mut out = Out::new(Box::new(ClosedAfter { room: 4 }));
        writeln!(out, "abc").unwrap();
        assert!(!out.is_broken());
        let err = writeln!(out, "defgh").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BrokenPipe);
        assert!(out.is_broken());
    }

    #[test]
    fn other_errors_are_not_a_closed_pipe() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut out = Out::new(Box::new(Full));
        assert!(writeln!(out, "x").is_err());
        assert!(!out.is_broken());
    }
}
