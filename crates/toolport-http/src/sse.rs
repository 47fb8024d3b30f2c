//! Server-sent events: framing and a streaming body.
//!
//! Each event is built into one buffer and handed to hyper as one frame, so
//! an event never leaves in several small writes (with Nagle, the last small
//! write of an event can wait 40 ms for the client's delayed ACK).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval, MissedTickBehavior};

/// One SSE event: an optional id, an optional retry hint, and data.
pub(crate) fn event(id: Option<&str>, retry: Option<Duration>, data: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(data.len() + 48);
    if let Some(id) = id {
        out.put_slice(b"id: ");
        out.put_slice(id.as_bytes());
        out.put_u8(b'\n');
    }
    if let Some(retry) = retry {
        out.put_slice(format!("retry: {}\n", retry.as_millis()).as_bytes());
    }
    // Our JSON is compact: it never contains a newline, so one data line does.
    out.put_slice(b"data: ");
    out.put_slice(data);
    out.put_slice(b"\n\n");
    out.freeze()
}

const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// A streaming SSE body fed by a channel, with keep-alive comments while idle.
/// Dropping it (the client went away) drops the receiver, which the producer
/// sees as a closed channel.
pub(crate) struct SseBody {
    rx: mpsc::Receiver<Bytes>,
    keep_alive: Interval,
}

impl SseBody {
    pub(crate) fn new(rx: mpsc::Receiver<Bytes>, keep_alive: Duration) -> Self {
        let mut interval = tokio::time::interval_at(Instant::now() + keep_alive, keep_alive);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        SseBody {
            rx,
            keep_alive: interval,
        }
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(bytes)) => {
                self.keep_alive.reset();
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match self.keep_alive.poll_tick(cx) {
                Poll::Ready(_) => Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        false
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_framed_in_one_buffer() {
        assert_eq!(&event(None, None, b"{}")[..], b"data: {}\n\n");
        assert_eq!(
            &event(Some("s1e3"), Some(Duration::from_millis(1500)), b"")[..],
            b"id: s1e3\nretry: 1500\ndata: \n\n"
        );
    }
}
