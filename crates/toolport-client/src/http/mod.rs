//! The Streamable HTTP transport (`basic/transports/streamable-http`), both eras.
//!
//! Every message is its own POST; the answer is JSON or an event stream.
//! - 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
//!   tool's `Mcp-Param-*` headers mirror the body; no sessions; dropping a
//!   call closes its stream, which is the cancellation.
//! - handshake era: `Mcp-Session-Id` from `initialize` on every request (404
//!   means the session is gone), `notifications/cancelled` when a call is
//!   dropped, requests from the server answered with a POST of the response,
//!   a stream that ends before its answer resumed with GET + `Last-Event-ID`
//!   after the server's `retry` delay, and an optional GET stream for what
//!   the server sends on its own.
//!
//! Connections are pooled (hyper-util) and bounded: every request in flight
//! and every open stream holds one of `max_connections` permits.

mod core;
mod listen;
mod tls;
mod wire;

use std::time::Duration;

use http::{HeaderName, HeaderValue, StatusCode};
use serde_json::value::RawValue;
use toolport_protocol::ErrorObject;
use toolport_protocol::jsonrpc::{self, Frame, Message};

use crate::error::ClientError;

use core::Exchange;
pub(crate) use core::HttpCore;
pub(crate) use wire::{HttpRequest, HttpWire};

type Outcome = Result<Box<RawValue>, ErrorObject>;

/// The reconnect delay when the server sent no `retry:`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many times one answer stream is resumed with `Last-Event-ID`.
const MAX_RESUMES: u32 = 5;
/// How much of an error body is kept for the message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// How an event stream ended.
#[derive(Debug)]
enum StreamEnd {
    /// The server closed it.
    Ended,
    /// The connection broke.
    Broken(String),
    /// The server sent something that is not an event stream we accept.
    Invalid(String),
}

/// Where a stream stands, for resuming it.
#[derive(Debug, Default)]
struct StreamCursor {
    last_id: Option<String>,
    retry: Option<Duration>,
}

/// A JSON-RPC error in an error body becomes [`ClientError::Remote`]
/// (2026-07-28 sends its errors with 4xx statuses); anything else keeps the status.
fn error_from_body(status: StatusCode, headers: &http::HeaderMap, body: &[u8]) -> ClientError {
    // `Retry-After` in delta-seconds (an HTTP date is not honoured: clocks differ).
    let retry_after = headers
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    if let Ok(Frame::Single(Message::Error(e))) = jsonrpc::decode(body) {
        let mut error = e.error;
        // The header says what the body may not: a wait before trying again.
        if let Some(wait) = retry_after
            && error.data.as_ref().and_then(|d| d.get("retryAfterMs")).is_none()
            && error.code == toolport_protocol::ErrorCode::OVERLOADED
        {
            let mut data = error.data.take().unwrap_or_else(|| serde_json::json!({}));
            if let Some(map) = data.as_object_mut() {
                map.insert("retryAfterMs".into(), serde_json::json!(wait.as_millis() as u64));
            }
            error.data = Some(data);
        }
        return ClientError::Remote(error);
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(512)]).trim().to_owned();
    match status {
        StatusCode::UNAUTHORIZED => ClientError::Unauthorized { www_authenticate: None },
        StatusCode::FORBIDDEN => ClientError::Forbidden { www_authenticate: None },
        _ => ClientError::Http {
            status: status.as_u16(),
            body: if text.is_empty() {
                status.canonical_reason().unwrap_or("").to_owned()
            } else {
                text
            },
            retry_after: retry_after
                .filter(|_| status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE),
        },
    }
}

fn header_value(value: &str) -> Result<HeaderValue, ClientError> {
    HeaderValue::from_str(value).map_err(|_| ClientError::InvalidInput(format!("{value:?} cannot be sent in a header")))
}

const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
