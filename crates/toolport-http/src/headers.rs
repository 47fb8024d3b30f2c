//! The request headers the endpoint reads, found in one walk over the map.
//! The ones 2026-07-28 requires to mirror the body
//! (`basic/transports/streamable-http#standard-headers`: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) are handed to the server as
//! [`RoutingHeaders`]: what they must say depends on the method and the tool.

use http::{HeaderMap, HeaderName, HeaderValue, header};
use toolport_protocol::{ErrorCode, ErrorObject};
use toolport_server::RoutingHeaders;
use toolport_server::admission::headers as routing;

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
    /// The first single-valued MCP header that came more than once. Such a
    /// header has no one value: intermediaries disagree on which line
    /// counts, so the request is refused rather than judged by its first.
    pub(crate) repeated: Option<&'h HeaderName>,
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
            repeated: None,
        };
        let mut session_seen = false;
        let mut last_event_seen = false;
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
                let seen = if name == SESSION_ID {
                    &mut session_seen
                } else if name == LAST_EVENT_ID {
                    &mut last_event_seen
                } else {
                    if name.as_str().starts_with(PARAM_PREFIX) && all.get_all(name).iter().nth(1).is_some() {
                        found.repeated.get_or_insert(name);
                    }
                    continue;
                };
                if std::mem::replace(seen, true) {
                    found.repeated.get_or_insert(name);
                }
                continue;
            };
            let single_valued = name == PROTOCOL_VERSION || name == METHOD || name == NAME || name == header::ORIGIN;
            if single_valued && slot.is_some() {
                found.repeated.get_or_insert(name);
            }
            slot.get_or_insert(value);
        }
        found
    }

    /// Refuses a request that repeats a single-valued header the endpoint
    /// reads (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`, `Mcp-Session-Id`, `Last-Event-ID`, `Origin`): -32020,
    /// answered 400.
    pub(crate) fn check_single_valued(&self) -> Result<(), ErrorObject> {
        match &self.repeated {
            None => Ok(()),
            Some(name) => Err(ErrorObject::new(
                ErrorCode::HEADER_MISMATCH,
                format!("Header mismatch: the {name} header is sent more than once; send it once, with one value"),
            )),
        }
    }
}

/// The lowercase prefix of the `Mcp-Param-{Name}` headers.
const PARAM_PREFIX: &str = "mcp-param-";

/// The protocol version header, if present; an error when it is not text.
pub(crate) fn protocol_version<'a>(headers: &'a RequestHeaders<'_>) -> Result<Option<&'a str>, ErrorObject> {
    routing::text(headers, routing::PROTOCOL_VERSION)
}

impl RoutingHeaders for RequestHeaders<'_> {
    fn get(&self, name: &str) -> Option<&[u8]> {
        // The three every 2026-07-28 request is checked on were found in
        // the one walk; the rare `Mcp-Param-*` are looked up.
        let found = match name {
            routing::PROTOCOL_VERSION => self.protocol_version,
            routing::METHOD => self.method,
            routing::NAME => self.name,
            _ => self.all.get(name),
        };
        found.map(HeaderValue::as_bytes)
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

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
        assert_eq!(found.repeated, Some(&METHOD));
        assert_eq!(
            found.check_single_valued().unwrap_err().code,
            ErrorCode::HEADER_MISMATCH
        );
        let empty = HeaderMap::new();
        let none = RequestHeaders::read(&empty);
        assert!(none.accept.is_none() && !none.accepts_more && none.host.is_none());
        assert_eq!(none.check_single_valued(), Ok(()));
    }

    #[test]
    fn single_valued_headers_sent_twice_are_found() {
        for (twice, other) in [
            ("mcp-name", "mcp-method"),
            ("mcp-protocol-version", "mcp-name"),
            ("mcp-param-region", "mcp-param-zone"),
            ("mcp-session-id", "last-event-id"),
            ("last-event-id", "mcp-session-id"),
            ("origin", "host"),
        ] {
            let mut map = HeaderMap::new();
            map.append(other, HeaderValue::from_static("once"));
            map.append(twice, HeaderValue::from_static("a"));
            map.append("x-between", HeaderValue::from_static("b"));
            map.append(twice, HeaderValue::from_static("a"));
            let found = RequestHeaders::read(&map);
            assert_eq!(found.repeated.map(HeaderName::as_str), Some(twice), "{twice}");
            // Once each is fine, and so are headers that may repeat.
            let mut map = HeaderMap::new();
            map.append(other, HeaderValue::from_static("once"));
            map.append(twice, HeaderValue::from_static("a"));
            map.append("accept", HeaderValue::from_static("application/json"));
            map.append("accept", HeaderValue::from_static("text/event-stream"));
            assert_eq!(RequestHeaders::read(&map).repeated, None, "{twice}");
        }
    }

    #[test]
    fn routing_headers_are_read_as_sent() {
        let mut map = HeaderMap::new();
        for (k, v) in [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
            ("mcp-param-region", "eu"),
        ] {
            map.append(k, HeaderValue::from_static(v));
        }
        let found = RequestHeaders::read(&map);
        let get = |name: &str| RoutingHeaders::get(&found, name);
        assert_eq!(get("mcp-protocol-version"), Some(&b"2026-07-28"[..]));
        assert_eq!(get("mcp-method"), Some(&b"tools/call"[..]));
        assert_eq!(get("mcp-name"), Some(&b"echo"[..]));
        assert_eq!(get("mcp-param-region"), Some(&b"eu"[..]));
        assert_eq!(get("mcp-param-other"), None);
    }
}
