//! Responses of the console: JSON with the right status, and the security
//! headers every response carries.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use serde::Serialize;
use serde_json::json;

/// Headers that keep a page of the console from being framed, sniffed or
/// leaking its URL (an authorization code may be in it) to other sites.
pub(crate) fn harden(response: &mut Response<Bytes>) {
    let h = response.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
}

/// A body with its content type and status, hardened.
pub(crate) fn body(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Bytes> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    harden(&mut response);
    response
}

/// A JSON answer of the admin API; never cached (it is live state).
pub(crate) fn json(status: StatusCode, value: &impl Serialize) -> Response<Bytes> {
    let bytes = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = body(status, "application/json", bytes);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// An error of the admin API: `{"error": message}` with the status.
pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response<Bytes> {
    json(status, &json!({ "error": message.into() }))
}

/// 405 with the methods that are allowed.
pub(crate) fn method_not_allowed(allow: &'static str) -> Response<Bytes> {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method not allowed here; use {allow}"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}
