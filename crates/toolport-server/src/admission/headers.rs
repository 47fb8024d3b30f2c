//! The request headers 2026-07-28 requires Streamable HTTP to mirror from the
//! body (`basic/transports/streamable-http#standard-headers`):
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and an `Mcp-Param-{Name}`
//! for each argument a tool marks with `x-mcp-header`. A mismatch is
//! `-32020 HeaderMismatch`. The transport only hands the headers over; what
//! they must say depends on the method and the tool, which the server knows.

use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};
use toolport_protocol::{ErrorCode, ErrorObject, prompts, resources, tasks, tools};

use crate::schema::{HeaderParam, HeaderParamKind};

/// `MCP-Protocol-Version`, lowercase.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`, lowercase.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name`, lowercase.
pub const NAME: &str = "mcp-name";

/// A transport's request headers, as the server reads them.
pub trait RoutingHeaders {
    /// The first value of the header with this lowercase name, as sent.
    fn get(&self, name: &str) -> Option<&[u8]>;
}

/// A header's value, trimmed; `None` when absent; an error when it is not
/// text (visible ASCII, spaces and tabs).
pub fn text<'h>(headers: &'h dyn RoutingHeaders, name: &str) -> Result<Option<&'h str>, ErrorObject> {
    let Some(raw) = headers.get(name) else {
        return Ok(None);
    };
    let visible = raw.iter().all(|&b| b == b'\t' || (b' '..=b'~').contains(&b));
    match std::str::from_utf8(raw) {
        Ok(value) if visible => Ok(Some(value.trim_ascii())),
        _ => Err(mismatch(format!("the {name} header is not valid ASCII"))),
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

/// Checks a 2026-07-28 request's headers against its body.
pub(crate) fn check_stateless(
    headers: &dyn RoutingHeaders,
    method: &str,
    params: &Map<String, Value>,
    body_version: &str,
) -> Result<(), ErrorObject> {
    match text(headers, PROTOCOL_VERSION)? {
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
    match text(headers, METHOD)?.map(decode).transpose()? {
        None => return Err(mismatch("Mcp-Method is required with protocol version 2026-07-28")),
        Some(m) if m != method => {
            return Err(mismatch(format!(
                "Mcp-Method {m:?} differs from the body's method {method:?}"
            )));
        }
        Some(_) => {}
    }
    let key = match method {
        tools::CALL | prompts::GET => Some("name"),
        resources::READ => Some("uri"),
        // The tasks extension routes by task (SEP-2663).
        tasks::GET | tasks::UPDATE | tasks::CANCEL => Some("taskId"),
        _ => None,
    };
    if let Some(key) = key {
        let expected = params.get(key).and_then(Value::as_str);
        match (text(headers, NAME)?.map(decode).transpose()?, expected) {
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

/// Checks an `Mcp-Param-{Name}` header for each `x-mcp-header` argument: a
/// value in the body needs its header, equal once decoded (integers compare
/// as numbers).
pub(crate) fn check_params(
    headers: &dyn RoutingHeaders,
    params: &[HeaderParam],
    arguments: Option<&Value>,
) -> Result<(), ErrorObject> {
    for param in params {
        let value = arguments
            .and_then(|a| param.path.iter().try_fold(a, |v, key| v.get(key)))
            .filter(|v| !v.is_null());
        let Some(value) = value else { continue };
        let name = format!("mcp-param-{}", param.name.to_ascii_lowercase());
        let Some(raw) = text(headers, &name)? else {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Headers as a list of pairs, names lowercase, the first value wins.
    struct Pairs(Vec<(&'static str, Vec<u8>)>);

    impl RoutingHeaders for Pairs {
        fn get(&self, name: &str) -> Option<&[u8]> {
            self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_slice())
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> Pairs {
        Pairs(pairs.iter().map(|(k, v)| (*k, v.as_bytes().to_vec())).collect())
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
    }

    #[test]
    fn headers_must_mirror_the_body() {
        let params = json!({"name": "héllo"}).as_object().cloned().unwrap();
        let good = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", " tools/call "),
            ("mcp-name", "=?base64?aMOpbGxv?="),
        ]);
        assert_eq!(check_stateless(&good, "tools/call", &params, "2026-07-28"), Ok(()));
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
            let err = check_stateless(&bad, "tools/call", &params, "2026-07-28").unwrap_err();
            assert_eq!(err.code, ErrorCode::HEADER_MISMATCH, "{:?}", bad.0);
        }
        let list = headers(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")]);
        assert_eq!(check_stateless(&list, "tools/list", &Map::new(), "2026-07-28"), Ok(()));
    }

    #[test]
    fn header_values_that_are_not_text_are_a_mismatch() {
        let mut control = headers(&[("mcp-method", "tools/list")]);
        control.0[0].1 = b"tools/\x01list".to_vec();
        assert_eq!(text(&control, METHOD).unwrap_err().code, ErrorCode::HEADER_MISMATCH);
        let mut latin1 = headers(&[("mcp-method", "x")]);
        latin1.0[0].1 = vec![0xe9];
        assert_eq!(text(&latin1, METHOD).unwrap_err().code, ErrorCode::HEADER_MISMATCH);
        let tabbed = headers(&[("mcp-method", "\ttools/list ")]);
        assert_eq!(text(&tabbed, METHOD), Ok(Some("tools/list")));
    }
}
