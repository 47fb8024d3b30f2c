//! Newline-delimited framing with a bounded line length.
//!
//! stdio carries one JSON-RPC message per line. A peer that never sends a
//! newline must not make us buffer without limit, so a line longer than the
//! limit is discarded as it streams in and reported once, with what little of
//! it we kept, so the reader can answer with a clear error and go on.

/// Default longest line: 4 MiB. MCP messages are small; a larger one is almost
/// certainly a mistake or an attack, and memory per connection stays bounded.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// How many bytes of an over-long line are kept to find its id.
const HEAD_KEPT: usize = 256;

/// One unit of input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line, without its newline (and without a trailing `\r`).
    Complete(&'a [u8]),
    /// A line longer than the limit; its bytes were dropped.
    TooLong {
        /// How many bytes the line had.
        size: usize,
        /// Its first bytes, to recover the request id from.
        head: Vec<u8>,
    },
}

/// Splits a byte stream into lines of at most `max` bytes.
#[derive(Debug)]
pub struct LineDecoder {
    buf: Vec<u8>,
    max: usize,
    /// `Some(n)` while dropping an over-long line of which `n` bytes were seen.
    dropping: Option<usize>,
    head: Vec<u8>,
}

impl LineDecoder {
    /// A decoder for lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        LineDecoder {
            buf: Vec::new(),
            max,
            dropping: None,
            head: Vec::new(),
        }
    }

    /// Feeds a chunk; calls `emit` for every line it completes.
    pub fn feed(&mut self, mut chunk: &[u8], mut emit: impl FnMut(Line<'_>)) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (part, rest) = match newline {
                Some(i) => (&chunk[..i], Some(&chunk[i + 1..])),
                None => (chunk, None),
            };
            self.absorb(part);
            match rest {
                Some(rest) => {
                    self.end_line(&mut emit);
                    chunk = rest;
                }
                None => break,
            }
        }
    }

    /// Ends the stream: a last line without a newline still counts.
    pub fn finish(&mut self, mut emit: impl FnMut(Line<'_>)) {
        if !self.buf.is_empty() || self.dropping.is_some() {
            self.end_line(&mut emit);
        }
    }

    fn absorb(&mut self, part: &[u8]) {
        if let Some(seen) = &mut self.dropping {
            *seen += part.len();
            return;
        }
        if self.buf.len() + part.len() > self.max {
            let seen = self.buf.len() + part.len();
            let mut head = std::mem::take(&mut self.buf);
            head.extend_from_slice(&part[..part.len().min(HEAD_KEPT)]);
            head.truncate(HEAD_KEPT);
            head.shrink_to_fit();
            self.head = head;
            self.dropping = Some(seen);
            return;
        }
        self.buf.extend_from_slice(part);
    }

    fn end_line(&mut self, emit: &mut impl FnMut(Line<'_>)) {
        if let Some(size) = self.dropping.take() {
            emit(Line::TooLong {
                size,
                head: std::mem::take(&mut self.head),
            });
            return;
        }
        let mut line = &self.buf[..];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            emit(Line::Complete(line));
        }
        self.buf.clear();
        // Do not keep a large allocation around after one big message.
        if self.buf.capacity() > 64 * 1024 {
            self.buf = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(max: usize, chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, usize>> {
        let mut d = LineDecoder::new(max);
        let mut out = Vec::new();
        let mut push = |l: Line<'_>| match l {
            Line::Complete(b) => out.push(Ok(b.to_vec())),
            Line::TooLong { size, .. } => out.push(Err(size)),
        };
        for c in chunks {
            d.feed(c, &mut push);
        }
        d.finish(&mut push);
        out
    }

    #[test]
    fn splits_lines_across_chunks() {
        let got = lines(100, &[b"ab", b"c\nde", b"f\r\n\n  \nxyz"]);
        assert_eq!(got, vec![Ok(b"abc".to_vec()), Ok(b"def".to_vec()), Ok(b"xyz".to_vec())]);
    }

    #[test]
    fn over_long_lines_are_dropped_and_reported_once() {
        let got = lines(4, &[b"12", b"345", b"6789\nok\n12345"]);
        assert_eq!(got, vec![Err(9), Ok(b"ok".to_vec()), Err(5)]);
    }

    #[test]
    fn keeps_the_head_of_an_over_long_line() {
        let mut d = LineDecoder::new(8);
        let mut heads = Vec::new();
        d.feed(b"{\"id\":7,\"method\":\"x\"}\n", |l| {
            if let Line::TooLong { head, .. } = l {
                heads.push(head)
            }
        });
        assert_eq!(heads, vec![b"{\"id\":7,\"method\":\"x\"}".to_vec()]);
    }
}
