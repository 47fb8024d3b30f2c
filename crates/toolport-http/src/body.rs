//! The response body: nothing, one buffer, or an SSE stream.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::sse::SseBody;

/// Every body the endpoint sends.
pub(crate) enum McpBody {
    /// No body (202, 405, ...).
    Empty,
    /// A complete body.
    Full(Option<Bytes>),
    /// An SSE stream.
    Sse(Box<SseBody>),
    /// A mount's chunks, as they come.
    Chunks(tokio::sync::mpsc::Receiver<Bytes>),
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpBody::Empty => f.write_str("Empty"),
            McpBody::Full(b) => write!(f, "Full({} bytes)", b.as_ref().map_or(0, Bytes::len)),
            McpBody::Sse(_) => f.write_str("Sse"),
            McpBody::Chunks(_) => f.write_str("Chunks"),
        }
    }
}

impl McpBody {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        McpBody::Full(Some(bytes.into()))
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            McpBody::Empty => Poll::Ready(None),
            McpBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            McpBody::Sse(sse) => Pin::new(sse.as_mut()).poll_frame(cx),
            McpBody::Chunks(chunks) => chunks.poll_recv(cx).map(|chunk| chunk.map(|c| Ok(Frame::data(c)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            McpBody::Empty => true,
            McpBody::Full(bytes) => bytes.is_none(),
            McpBody::Sse(_) | McpBody::Chunks(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            McpBody::Empty => SizeHint::with_exact(0),
            McpBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            McpBody::Full(None) => SizeHint::with_exact(0),
            McpBody::Sse(_) | McpBody::Chunks(_) => SizeHint::default(),
        }
    }
}
