//! Responses of the HTTP bindings: JSON bodies and server-sent event
//! streams of stream items.

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use tokio::sync::mpsc;
use toolport_http::MountBody;

use crate::types::StreamResponse;

/// What an operation answers: a value, or a stream of items.
pub(crate) enum Reply {
    Value(serde_json::Value),
    Stream(mpsc::Receiver<StreamResponse>),
}

/// `value` as a reply.
pub(crate) fn value(value: impl Serialize) -> Result<Reply, crate::error::A2aError> {
    serde_json::to_value(value)
        .map(Reply::Value)
        .map_err(|e| crate::error::A2aError::Internal(format!("the answer could not be encoded: {e}")))
}

/// A JSON answer with `status`, as `content_type`.
pub(crate) fn json(status: StatusCode, content_type: &'static str, body: &impl Serialize) -> http::Response<MountBody> {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = http::Response::new(MountBody::Full(Bytes::from(bytes)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// An SSE answer: one `data:` event per stream item, each wrapped by
/// `frame` (the JSON-RPC binding puts it in a response envelope).
pub(crate) fn events<F>(mut items: mpsc::Receiver<StreamResponse>, frame: F) -> http::Response<MountBody>
where
    F: Fn(StreamResponse) -> serde_json::Value + Send + 'static,
{
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        while let Some(item) = items.recv().await {
            let data = frame(item).to_string();
            if tx.send(Bytes::from(format!("data: {data}\n\n"))).await.is_err() {
                return;
            }
        }
    });
    let mut response = http::Response::new(MountBody::Stream(rx));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
