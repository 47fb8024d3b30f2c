//! The Transport abstraction: what the other side sent, and a bounded
//! channel for what to send it.
//!
//! Transports only move messages. Each one (stdio of this process, a child
//! process, an in-memory pipe for tests; later an HTTP session) decodes what
//! it reads into [`Incoming`] items and writes the [`Outgoing`] items it is
//! given. The channels are bounded, so a peer that stops reading slows its
//! own requests down instead of growing our memory.
//!
//! What was read arrives in an [`Inbox`]: usually a channel filled by a
//! reader task, so a slow parse never blocks the dispatch loop; or, for this
//! process's own stdio pipes on a one-thread runtime, the pipe itself, read
//! and decoded by the dispatch loop when it asks for the next message. There
//! the reader task bought no parallelism and cost a task switch and a second
//! look at the event queue per message.

use std::fmt;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::sync::{mpsc, oneshot};
use toolport_protocol::jsonrpc::{ErrorResponse, Frame, Message};

use crate::framing::{Line, LineDecoder};

/// One item read from the other side.
#[derive(Debug)]
pub enum Incoming {
    /// A message or a batch.
    Frame(Frame),
    /// Input that could not be decoded. The error is the answer to send back.
    Invalid(ErrorResponse),
}

/// One item to write to the other side.
#[derive(Debug)]
pub enum Outgoing {
    /// A single message.
    Message(Message),
    /// The answers to a batch, written as one JSON array.
    Batch(Vec<Message>),
    /// Write everything queued before this, flush, and stop.
    Close,
}

/// Capacity of each direction's channel.
pub const CHANNEL_CAPACITY: usize = 256;

/// A connection to the other side, as two channels.
#[derive(Debug)]
pub struct Transport {
    /// What the other side sent, decoded. Ends when the other side closes.
    pub incoming: Inbox,
    /// What to send to the other side.
    pub outgoing: mpsc::Sender<Outgoing>,
    /// Fires once the writer has written and flushed everything up to
    /// [`Outgoing::Close`] (or failed); awaiting it means no answer is lost.
    pub writer_done: oneshot::Receiver<()>,
}

/// The transport's end of a [`Transport`]: where a transport implementation
/// puts what it reads and takes what it must write.
#[derive(Debug)]
pub struct TransportEnd {
    /// Where decoded input goes.
    pub incoming: mpsc::Sender<Incoming>,
    /// What to write.
    pub outgoing: mpsc::Receiver<Outgoing>,
    /// Signal once writing is over.
    pub writer_done: oneshot::Sender<()>,
}

/// Makes the two ends of a transport.
pub fn channel() -> (Transport, TransportEnd) {
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (done_tx, done_rx) = oneshot::channel();
    (
        Transport {
            incoming: Inbox::Channel(in_rx),
            outgoing: out_tx,
            writer_done: done_rx,
        },
        TransportEnd {
            incoming: in_tx,
            outgoing: out_rx,
            writer_done: done_tx,
        },
    )
}

/// Where a connection's dispatch loop takes the next message from.
#[derive(Debug)]
pub enum Inbox {
    /// Decoded by a reader of its own and handed over a bounded channel.
    Channel(mpsc::Receiver<Incoming>),
    /// Read and decoded in the dispatch loop's own task.
    Inline(InlineReader),
}

impl fmt::Debug for InlineReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InlineReader")
            .field("ready", &self.ready.len())
            .field("max_line", &self.max_line)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Inbox {
    /// The next message; `None` once the other side has closed and
    /// everything it sent was taken. Cancel-safe: a message read but not yet
    /// taken stays for the next call.
    pub async fn recv(&mut self) -> Option<Incoming> {
        match self {
            Inbox::Channel(receiver) => receiver.recv().await,
            Inbox::Inline(reader) => reader.recv().await,
        }
    }
}

/// Newline-delimited messages read from a byte stream on demand.
pub struct InlineReader {
    input: Box<dyn AsyncBufRead + Send + Unpin>,
    decoder: LineDecoder,
    /// Decoded but not yet taken: a chunk can hold several lines.
    ready: std::collections::VecDeque<Incoming>,
    decode: fn(Line<'_>, usize) -> Incoming,
    max_line: usize,
    ended: bool,
}

impl InlineReader {
    /// Reads lines of at most `max_line` bytes from `input`, each turned
    /// into an [`Incoming`] by `decode`.
    pub fn new(
        input: impl AsyncBufRead + Send + Unpin + 'static,
        max_line: usize,
        decode: fn(Line<'_>, usize) -> Incoming,
    ) -> Self {
        InlineReader {
            input: Box::new(input),
            decoder: LineDecoder::new(max_line),
            ready: std::collections::VecDeque::new(),
            decode,
            max_line,
            ended: false,
        }
    }

    async fn recv(&mut self) -> Option<Incoming> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                return Some(item);
            }
            if self.ended {
                return None;
            }
            // Only this await can be cancelled; what follows it runs to the
            // end, so no chunk is fed twice or lost.
            let read = self.input.fill_buf().await;
            let (decode, max_line, ready) = (self.decode, self.max_line, &mut self.ready);
            match read {
                Ok([]) => {
                    self.ended = true;
                    self.decoder.finish(|line| ready.push_back(decode(line, max_line)));
                }
                Ok(chunk) => {
                    let len = chunk.len();
                    self.decoder.feed(chunk, |line| ready.push_back(decode(line, max_line)));
                    self.input.consume(len);
                }
                Err(e) => {
                    tracing::debug!(error = %e, "reading the peer's messages failed");
                    self.ended = true;
                    self.decoder.finish(|line| ready.push_back(decode(line, max_line)));
                }
            }
        }
    }
}
