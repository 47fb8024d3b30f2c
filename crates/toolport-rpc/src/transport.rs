//! The Transport abstraction: a pair of bounded channels.
//!
//! Transports only move messages. Each one (stdio of this process, a child
//! process, an in-memory pipe for tests; later an HTTP session) decodes what
//! it reads into [`Incoming`] items and writes the [`Outgoing`] items it is
//! given. Decoding happens on the transport's side of the channel, so a slow
//! parse never blocks the dispatch loop, and the channels are bounded, so a
//! peer that stops reading slows its own requests down instead of growing our
//! memory.

use tokio::sync::{mpsc, oneshot};
use toolport_protocol::jsonrpc::{ErrorResponse, Frame, Message};

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
    pub incoming: mpsc::Receiver<Incoming>,
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
            incoming: in_rx,
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
