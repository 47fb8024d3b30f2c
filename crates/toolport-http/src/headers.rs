//! The request headers 2026-07-28 requires to mirror the body
//! (`basic/transports/streamable-http#standard-headers`): `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`. A mismatch is 400 with `-32020 HeaderMismatch`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;
use serde_json::Value;
use toolport_protocol::{ErrorCode, ErrorObject};

/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub const NAME: &str = "mcp-name";
/// `Mcp-Session-Id` (handshake era).
pub const SESSION_ID: &str = "mcp-session-id";
/// `Last-Event-ID` (handshake era).
pub const LAST_EVENT_ID: &str = "last-event-id";

/// A header's value, trimmed; `None` when absent; an error when not text.
fn value<'h>(headers: &'h HeaderMap, name: &str) -> Result<Option<&'h str>, ErrorObject> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()))
            .map_err(|_| mismatch(format!("the {name} header is not valid ASCII"))),
    }
}

/// Decodes the `=?base64?...?=` form used for values that are not plain ASCII.
fn decode(value: &str) -> Result<String, ErrorObject> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        None => Ok(value.to_owned()),
        Some(encoded) => STANDARD
            .decode(encoded)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| mismatch("a =?base64?...?= header value does not decode to UTF-8")),
    }
}

fn mismatch(why: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::HEADER_MISMATCH, format!("Header mismatch: {}", why.into()))
}

/// The protocol version header, if present.
pub(crate) fn protocol_version(headers: &HeaderMap) -> Result<Option<&str>, ErrorObject> {
    value(headers, PROTOCOL_VERSION)
}

/// Checks a 2026-07-28 request's headers against its body.
pub(crate) fn check_stateless(
    headers: &HeaderMap,
    method: &str,
    params: Option<&Value>,
    body_version: &str,
) -> Result<(), ErrorObject> {
    match value(headers, PROTOCOL_VERSION)? {
        None => {
            return Err(mismatch(
                "MCP-Protocol-Version is required with protocol version 2026-07-28",
            ));
        }
        Some(v) if v != body_version => {
            return Err(mismatch(format!(
                "MCP-Protocol-Version {v:?} differs from _meta protocolVersion {body_version:?}"
            )));
        }
        Some(_) => {}
    }
    match value(headers, METHOD)?.map(decode).transpose()? {
        None => return Err(mismatch("Mcp-Method is required with protocol version 2026-07-28")),
        Some(m) if m != method => {
            return Err(mismatch(format!(
                "Mcp-Method {m:?} differs from the body's method {method:?}"
            )));
        }
        Some(_) => {}
    }
    let key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = key {
        let expected = params.and_then(|p| p.get(key)).and_then(Value::as_str);
        match (value(headers, NAME)?.map(decode).transpose()?, expected) {
            (None, _) => return Err(mismatch(format!("Mcp-Name is required for {method}"))),
            (Some(name), Some(expected)) if name != expected => {
                return Err(mismatch(format!(
                    "Mcp-Name {name:?} differs from the body's {key} {expected:?}"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;
    use serde_json::json;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn headers_must_mirror_the_body() {
        let params = json!({"name": "héllo"});
        let good = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", " tools/call "),
            ("mcp-name", "=?base64?aMOpbGxv?="),
        ]);
        assert_eq!(
            check_stateless(&good, "tools/call", Some(&params), "2026-07-28"),
            Ok(())
        );
        for bad in [
            headers(&[("mcp-method", "tools/call"), ("mcp-name", "x")]),
            headers(&[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "x"),
            ]),
            headers(&[("mcp-protocol-version", "2026-07-28"), ("mcp-name", "x")]),
            headers(&[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "TOOLS/CALL"),
                ("mcp-name", "hello"),
            ]),
            headers(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call")]),
            headers(&[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "other"),
            ]),
            headers(&[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?!!?="),
            ]),
        ] {
            let err = check_stateless(&bad, "tools/call", Some(&params), "2026-07-28").unwrap_err();
            assert_eq!(err.code, ErrorCode::HEADER_MISMATCH, "{bad:?}");
        }
        let list = headers(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")]);
        assert_eq!(check_stateless(&list, "tools/list", None, "2026-07-28"), Ok(()));
    }
}
