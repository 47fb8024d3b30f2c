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
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpBody::Empty => f.write_str("Empty"),
            McpBody::Full(b) => write!(f, "Full({} bytes)", b.as_ref().map_or(0, Bytes::len)),
            McpBody::Sse(_) => f.write_str("Sse"),
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
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            McpBody::Empty => true,
            McpBody::Full(bytes) => bytes.is_none(),
            McpBody::Sse(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            McpBody::Empty => SizeHint::with_exact(0),
            McpBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            McpBody::Full(None) => SizeHint::with_exact(0),
            McpBody::Sse(_) => SizeHint::default(),
        }
    }
}

/// Reads a request body of at most `max` bytes; more is answered 413, a
/// body that breaks off 400.
pub(crate) async fn read_limited(
    body: hyper::body::Incoming,
    max: usize,
) -> Result<Bytes, Box<crate::reply::HttpResponse>> {
    use http_body_util::{BodyExt, Limited};
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            let why = format!("Payload Too Large: the body exceeds {max} bytes");
            let error = toolport_protocol::ErrorObject::invalid_request(why);
            Err(Box::new(crate::reply::error(
                http::StatusCode::PAYLOAD_TOO_LARGE,
                None,
                error,
            )))
        }
        Err(e) => Err(Box::new(crate::reply::bad_request(
            None,
            format!("could not read the body: {e}"),
        ))),
    }
}
