//! The request headers 2026-07-28 requires to mirror the body
//! (`basic/transports/streamable-http#standard-headers`): `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`. A mismatch is 400 with `-32020 HeaderMismatch`.

use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, HeaderName, HeaderValue, header};
use serde_json::Value;
use toolport_protocol::meta::keys;
use toolport_protocol::{ErrorCode, ErrorObject};
use toolport_server::schema::{HeaderParam, HeaderParamKind};

// Header names as `HeaderName` constants: a lookup by `&str` parses the
// name again on every request.

/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Mcp-Method`.
pub const METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
pub const NAME: HeaderName = HeaderName::from_static("mcp-name");
/// `Mcp-Session-Id` (handshake era).
pub const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `Last-Event-ID` (handshake era).
pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// A request's headers, with the ones every request is checked on found in
/// one walk over the map: a lookup by name hashes the name, and eight of
/// them cost more than walking the dozen headers a request carries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestHeaders<'h> {
    /// Every header, for the ones read only on some paths.
    pub(crate) all: &'h HeaderMap,
    pub(crate) origin: Option<&'h HeaderValue>,
    pub(crate) host: Option<&'h HeaderValue>,
    pub(crate) content_type: Option<&'h HeaderValue>,
    /// The first `Accept`; `accepts_more` when there are several.
    pub(crate) accept: Option<&'h HeaderValue>,
    pub(crate) accepts_more: bool,
    pub(crate) protocol_version: Option<&'h HeaderValue>,
    pub(crate) method: Option<&'h HeaderValue>,
    pub(crate) name: Option<&'h HeaderValue>,
}

impl<'h> RequestHeaders<'h> {
    /// Finds the first value of each header the endpoint checks, as
    /// `HeaderMap::get` would.
    pub(crate) fn read(all: &'h HeaderMap) -> Self {
        let mut found = RequestHeaders {
            all,
            origin: None,
            host: None,
            content_type: None,
            accept: None,
            accepts_more: false,
            protocol_version: None,
            method: None,
            name: None,
        };
        for (name, value) in all {
            let slot = if name == header::ACCEPT {
                found.accepts_more |= found.accept.is_some();
                &mut found.accept
            } else if name == header::HOST {
                &mut found.host
            } else if name == header::CONTENT_TYPE {
                &mut found.content_type
            } else if name == header::ORIGIN {
                &mut found.origin
            } else if name == PROTOCOL_VERSION {
                &mut found.protocol_version
            } else if name == METHOD {
                &mut found.method
            } else if name == NAME {
                &mut found.name
            } else {
                continue;
            };
            slot.get_or_insert(value);
        }
        found
    }
}

/// A header's value, trimmed; `None` when absent; an error when not text.
fn value<'h>(value: Option<&'h HeaderValue>, name: &HeaderName) -> Result<Option<&'h str>, ErrorObject> {
    match value {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim_ascii()))
            .map_err(|_| mismatch(format!("the {} header is not valid ASCII", name.as_str()))),
    }
}

/// Decodes the `=?base64?...?=` form used for values that are not plain
/// ASCII; a plain value is borrowed as it is.
fn decode(value: &str) -> Result<Cow<'_, str>, ErrorObject> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        None => Ok(Cow::Borrowed(value)),
        Some(encoded) => STANDARD
            .decode(encoded)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .map(Cow::Owned)
            .ok_or_else(|| mismatch("a =?base64?...?= header value does not decode to UTF-8")),
    }
}

fn mismatch(why: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::HEADER_MISMATCH, format!("Header mismatch: {}", why.into()))
}

/// The protocol version header, if present.
pub(crate) fn protocol_version<'h>(headers: &RequestHeaders<'h>) -> Result<Option<&'h str>, ErrorObject> {
    value(headers.protocol_version, &PROTOCOL_VERSION)
}

/// The `io.modelcontextprotocol/protocolVersion` of a request's `_meta`, or
/// the -32602 error when `_meta` lacks a field 2026-07-28 requires.
pub(crate) fn body_version(params: Option<&Value>) -> Result<&str, ErrorObject> {
    let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
    let version = meta.and_then(|m| m.get(keys::PROTOCOL_VERSION)).and_then(Value::as_str);
    let capabilities = meta.and_then(|m| m.get(keys::CLIENT_CAPABILITIES));
    let missing = match (version, capabilities) {
        (Some(v), Some(_)) => return Ok(v),
        (None, _) => keys::PROTOCOL_VERSION,
        (_, None) => keys::CLIENT_CAPABILITIES,
    };
    Err(ErrorObject::invalid_params(format!(
        "_meta is missing {missing} (required by protocol version 2026-07-28)"
    )))
}

/// Checks an `Mcp-Param-{Name}` header for each `x-mcp-header` argument: a
/// value in the body needs its header, equal once decoded (integers compare
/// as numbers).
pub(crate) fn check_params(
    headers: &HeaderMap,
    params: &[HeaderParam],
    arguments: Option<&Value>,
) -> Result<(), ErrorObject> {
    for param in params {
        let value = arguments
            .and_then(|a| param.path.iter().try_fold(a, |v, key| v.get(key)))
            .filter(|v| !v.is_null());
        let Some(value) = value else { continue };
        let header = HeaderName::try_from(format!("mcp-param-{}", param.name.to_ascii_lowercase()))
            .map_err(|_| mismatch(format!("Mcp-Param-{} is not a valid header name", param.name)))?;
        let Some(raw) = self::value(headers.get(&header), &header)? else {
            return Err(mismatch(format!(
                "Mcp-Param-{} is required: the arguments carry {}",
                param.name,
                param.path.join(".")
            )));
        };
        let decoded = decode(raw)?;
        let equal = match (param.kind, value) {
            (HeaderParamKind::String, Value::String(s)) => decoded == s.as_str(),
            (HeaderParamKind::Integer, Value::Number(n)) => {
                decoded.parse::<i64>().ok().is_some_and(|h| Some(h) == n.as_i64())
            }
            (HeaderParamKind::Boolean, Value::Bool(b)) => decoded == if *b { "true" } else { "false" },
            _ => false,
        };
        if !equal {
            return Err(mismatch(format!(
                "Mcp-Param-{} {decoded:?} differs from the argument {}",
                param.name,
                param.path.join(".")
            )));
        }
    }
    Ok(())
}

/// Checks a 2026-07-28 request's headers against its body.
pub(crate) fn check_stateless(
    headers: &RequestHeaders<'_>,
    method: &str,
    params: Option<&Value>,
    body_version: &str,
) -> Result<(), ErrorObject> {
    match value(headers.protocol_version, &PROTOCOL_VERSION)? {
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
    match value(headers.method, &METHOD)?.map(decode).transpose()? {
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
        match (value(headers.name, &NAME)?.map(decode).transpose()?, expected) {
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
    fn param_headers_must_match_the_arguments() {
        let params = [
            HeaderParam {
                name: "Region".into(),
                path: vec!["region".into()],
                kind: HeaderParamKind::String,
            },
            HeaderParam {
                name: "N".into(),
                path: vec!["o".into(), "n".into()],
                kind: HeaderParamKind::Integer,
            },
        ];
        let args = json!({"region": "Hello", "o": {"n": 42}});
        let ok = |pairs: &[(&'static str, &str)]| check_params(&headers(pairs), &params, Some(&args));
        assert_eq!(
            ok(&[("mcp-param-region", "=?base64?SGVsbG8=?="), ("mcp-param-n", "42")]),
            Ok(())
        );
        assert_eq!(ok(&[("mcp-param-region", "Hello"), ("mcp-param-n", " 42 ")]), Ok(()));
        for bad in [
            &[("mcp-param-region", "=?base64?SGVsbG8?="), ("mcp-param-n", "42")][..],
            &[("mcp-param-region", "=?base64?SGVs!!!bG8=?="), ("mcp-param-n", "42")],
            &[("mcp-param-region", "Hello")],
            &[("mcp-param-region", "hello"), ("mcp-param-n", "42")],
            &[("mcp-param-region", "Hello"), ("mcp-param-n", "42.0")],
        ] {
            assert_eq!(ok(bad).unwrap_err().code, ErrorCode::HEADER_MISMATCH, "{bad:?}");
        }
        // Literal values that only look like the sentinel are compared as they are.
        let literal = json!({"region": "=?base64?SGVsbG8="});
        assert_eq!(
            check_params(
                &headers(&[("mcp-param-region", "=?base64?SGVsbG8=")]),
                &params[..1],
                Some(&literal)
            ),
            Ok(())
        );
        // No value in the body: no header needed.
        assert_eq!(
            check_params(&headers(&[]), &params, Some(&json!({"region": null}))),
            Ok(())
        );
        assert_eq!(
            body_version(Some(&json!({}))).unwrap_err().code,
            ErrorCode::INVALID_PARAMS
        );
    }

    #[test]
    fn one_walk_finds_what_lookups_find() {
        let mut map = HeaderMap::new();
        for (k, v) in [
            ("host", "127.0.0.1:8080"),
            ("Accept", "application/json"),
            ("accept", "text/event-stream"),
            ("content-type", "application/json"),
            ("x-other", "1"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-method", "second"),
            ("mcp-name", "echo"),
        ] {
            map.append(k, HeaderValue::from_static(v));
        }
        let found = RequestHeaders::read(&map);
        assert_eq!(found.host, map.get(header::HOST));
        assert_eq!(found.accept, map.get(header::ACCEPT));
        assert!(found.accepts_more);
        assert_eq!(found.content_type, map.get(header::CONTENT_TYPE));
        assert_eq!(found.origin, None);
        assert_eq!(found.protocol_version, map.get(PROTOCOL_VERSION));
        assert_eq!(found.method.map(HeaderValue::as_bytes), Some(&b"tools/call"[..]));
        assert_eq!(found.name, map.get(NAME));
        let empty = HeaderMap::new();
        let none = RequestHeaders::read(&empty);
        assert!(none.accept.is_none() && !none.accepts_more && none.host.is_none());
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
            check_stateless(&RequestHeaders::read(&good), "tools/call", Some(&params), "2026-07-28"),
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
            let err =
                check_stateless(&RequestHeaders::read(&bad), "tools/call", Some(&params), "2026-07-28").unwrap_err();
            assert_eq!(err.code, ErrorCode::HEADER_MISMATCH, "{bad:?}");
        }
        let list = headers(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")]);
        assert_eq!(
            check_stateless(&RequestHeaders::read(&list), "tools/list", None, "2026-07-28"),
            Ok(())
        );
    }
}
