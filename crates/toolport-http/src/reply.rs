//! Building responses: JSON bodies, JSON-RPC errors with the right status,
//! bare statuses.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use toolport_protocol::jsonrpc::{ErrorResponse, Message, RequestId, encode};
use toolport_protocol::{ErrorCode, ErrorObject};

use crate::auth::{Denial, Document};
use crate::body::McpBody;

/// An HTTP response with our body type.
pub(crate) type HttpResponse = Response<McpBody>;

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// A JSON body with a status.
pub(crate) fn json(status: StatusCode, body: Bytes) -> HttpResponse {
    let mut response = Response::new(McpBody::full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, JSON);
    response
}

/// One JSON-RPC message as the whole body.
pub(crate) fn message(status: StatusCode, message: &Message) -> HttpResponse {
    json(status, Bytes::from(encode(message)))
}

/// A JSON-RPC error with the status HTTP should carry for it.
pub(crate) fn error(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    message(status, &Message::Error(ErrorResponse::new(id, error)))
}

/// A bare status with no body.
pub(crate) fn status(status: StatusCode) -> HttpResponse {
    let mut response = Response::new(McpBody::Empty);
    *response.status_mut() = status;
    response
}

/// 405 with the methods that are allowed.
pub(crate) fn method_not_allowed(allow: &'static str) -> HttpResponse {
    let mut response = status(StatusCode::METHOD_NOT_ALLOWED);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// The HTTP status of a JSON-RPC error on a 2026-07-28 request
/// (`basic/transports/streamable-http`): malformed requests are 400, unknown
/// methods 404 (the JSON-RPC body tells it from a missing endpoint).
pub(crate) fn stateless_status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::OVERLOADED => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// An overload refusal: 429 with `Retry-After` (whole seconds, rounded up)
/// from the error's `data.retryAfterMs`, in both eras.
pub(crate) fn overloaded(id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    let retry_ms = retry_after_ms(&error);
    let mut response = self::error(StatusCode::TOO_MANY_REQUESTS, id, error);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_ms.div_ceil(1000).max(1)));
    response
}

/// A request that needed the shared state store while it was unavailable:
/// 503 with `Retry-After` from the error's `data.retryAfterMs`, in both eras.
pub(crate) fn state_unavailable(id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    let retry_ms = retry_after_ms(&error);
    let mut response = self::error(StatusCode::SERVICE_UNAVAILABLE, id, error);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_ms.div_ceil(1000).max(1)));
    response
}

fn retry_after_ms(error: &ErrorObject) -> u64 {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("retryAfterMs"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1000)
}

/// A transport-level failure of a handshake-era request: the answer is a
/// JSON-RPC error, but HTTP must say the request itself was bad.
pub(crate) fn bad_request(id: Option<RequestId>, why: impl std::fmt::Display) -> HttpResponse {
    error(
        StatusCode::BAD_REQUEST,
        id,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("Bad Request: {why}")),
    )
}

/// A refusal by the authorization layer: its status, its `WWW-Authenticate`
/// challenge, and a JSON-RPC error saying why.
pub(crate) fn denied(denial: &Denial, id: Option<RequestId>) -> HttpResponse {
    tracing::debug!(status = %denial.status, reason = %denial.message, "request refused by the authorization layer");
    let mut response = error(
        denial.status,
        id,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, denial.message.clone()),
    );
    if let Some(challenge) = denial.challenge.as_deref().and_then(|c| HeaderValue::from_str(c).ok()) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// A document published by the authorization layer.
pub(crate) fn document(document: Document) -> HttpResponse {
    let mut response = Response::new(McpBody::full(document.body));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(document.content_type));
    response
}
