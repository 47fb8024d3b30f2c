//! Checks every request passes before its body is read: Origin and Host
//! (DNS rebinding), Content-Type, Accept.

use std::net::IpAddr;

use http::{StatusCode, header};

use crate::config::HttpConfig;
use crate::headers::RequestHeaders;

/// Why a request was turned away at the door.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The `Origin` header names a site that is not allowed.
    #[error("Forbidden: origin {0:?} is not allowed")]
    OriginRejected(String),
    /// The `Host` header names a host this server does not answer for.
    #[error("Forbidden: host {0:?} is not allowed")]
    HostRejected(String),
    /// The body is not `application/json`.
    #[error("Unsupported Media Type: Content-Type must be application/json")]
    UnsupportedMediaType,
    /// `Accept` lists neither `application/json` nor `text/event-stream`.
    #[error("Not Acceptable: {0}")]
    NotAcceptable(&'static str),
}

impl Rejection {
    /// The HTTP status it is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            Rejection::OriginRejected(_) | Rejection::HostRejected(_) => StatusCode::FORBIDDEN,
            Rejection::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Rejection::NotAcceptable(_) => StatusCode::NOT_ACCEPTABLE,
        }
    }
}

const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.1", "[::1]", "::1"];

fn is_loopback_name(host: &str) -> bool {
    LOOPBACK_NAMES.iter().any(|n| n.eq_ignore_ascii_case(host))
        || host.len() > 10
            && host
                .get(host.len() - 10..)
                .is_some_and(|tail| tail.eq_ignore_ascii_case(".localhost"))
}

/// `host[:port]` → `host`, keeping `[v6]` brackets.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.find(']').map_or(authority, |i| &authority[..=i]);
    }
    authority.rsplit_once(':').map_or(authority, |(host, _)| host)
}

/// Origin and Host checks against DNS rebinding (`basic/transports`,
/// security warning): a browser page on a foreign site must not reach a
/// server bound to this machine.
pub(crate) fn check_origin_and_host(headers: &RequestHeaders<'_>, config: &HttpConfig) -> Result<(), Rejection> {
    let host = headers.host.and_then(|h| h.to_str().ok()).unwrap_or("");
    if let Some(origin) = headers.origin {
        let origin = origin.to_str().unwrap_or("<not ASCII>");
        if !origin_allowed(origin, config) && !same_origin(origin, host, config) {
            return Err(Rejection::OriginRejected(origin.to_owned()));
        }
    }
    let name = strip_port(host);
    let allowed = match &config.allowed_hosts {
        Some(list) => list.iter().any(|h| h == "*" || h.eq_ignore_ascii_case(name)),
        None if config.bind.ip().is_loopback() => is_loopback_name(name),
        None => true,
    };
    if allowed {
        Ok(())
    } else {
        Err(Rejection::HostRejected(host.to_owned()))
    }
}

fn origin_allowed(origin: &str, config: &HttpConfig) -> bool {
    // Nothing but a well-formed origin is compared: `http://127.0.0.1:80@evil.example`
    // (user info) or `http://127.0.0.1:80.evil.example` (a host that only
    // starts like ours) must not pass for ours.
    let Some(origin) = Origin::parse(origin) else {
        return config.allowed_origins.iter().any(|o| o == "*");
    };
    if config
        .allowed_origins
        .iter()
        .any(|o| o == "*" || Origin::parse(o).is_some_and(|allowed| allowed == origin))
    {
        return true;
    }
    // Pages served from this machine may talk to a server bound to it.
    config.bind.ip().is_loopback()
        && (is_loopback_name(&origin.host) || origin.host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()))
}

/// A web origin as browsers serialize it (RFC 6454 section 6.1):
/// `scheme "://" host [ ":" port ]`, nothing more — no user info, path,
/// query or fragment. Scheme and host compare case-insensitively (they are
/// kept lowercase), and a missing port is the scheme's default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) scheme: String,
    /// Lowercase; an IPv6 address without its brackets.
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl Origin {
    /// Reads an `http` or `https` origin; `None` for anything else
    /// (including `null`, opaque origins and other schemes).
    pub(crate) fn parse(text: &str) -> Option<Origin> {
        let (scheme, authority) = text.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (address, rest) = bracketed.split_once(']')?;
            address.parse::<std::net::Ipv6Addr>().ok()?;
            (address, rest)
        } else {
            let end = authority.find(':').unwrap_or(authority.len());
            let (host, rest) = authority.split_at(end);
            let label_ok = |label: &str| {
                !label.is_empty()
                    && label.len() <= 63
                    && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            };
            if host.is_empty() || host.len() > 253 || !host.split('.').all(label_ok) {
                return None;
            }
            (host, rest)
        };
        let port = match port.strip_prefix(':') {
            None if port.is_empty() => default_port,
            None => return None,
            Some(digits) if (1..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) => {
                digits.parse().ok()?
            }
            Some(_) => return None,
        };
        Some(Origin {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

/// A page of this server calling it back: the Origin's authority is the
/// request's Host. Only where the Host is checked (loopback binding or
/// `allowed_hosts`): elsewhere a rebinding page would name its own host in
/// both.
fn same_origin(origin: &str, host: &str, config: &HttpConfig) -> bool {
    let host_checked = config.allowed_hosts.is_some() || config.bind.ip().is_loopback();
    if !(config.same_origin && host_checked) || host.is_empty() {
        return false;
    }
    // The Host read as an authority of the Origin's scheme: the same parts
    // (the default port filled in) or not the same site.
    Origin::parse(origin)
        .is_some_and(|origin| Origin::parse(&format!("{}://{host}", origin.scheme)).is_some_and(|own| own == origin))
}

/// What the client's `Accept` header allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

/// The `Accept` values MCP clients send, byte for byte, and what each allows:
/// a request carrying one of them is answered without parsing the header.
const COMMON_ACCEPTS: &[(&[u8], Accepts)] = &[
    (
        b"application/json, text/event-stream",
        Accepts { json: true, sse: true },
    ),
    (
        b"text/event-stream, application/json",
        Accepts { json: true, sse: true },
    ),
    (b"application/json", Accepts { json: true, sse: false }),
    (b"text/event-stream", Accepts { json: false, sse: true }),
];

pub(crate) fn accepts(headers: &RequestHeaders<'_>) -> Accepts {
    if let (Some(only), false) = (headers.accept, headers.accepts_more)
        && let Some((_, known)) = COMMON_ACCEPTS.iter().find(|(value, _)| *value == only.as_bytes())
    {
        return *known;
    }
    parse_accepts(
        headers
            .all
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
}

/// Reads media ranges leniently: parameters (`;q=0.9`) ignored, case ignored,
/// wildcards honoured.
fn parse_accepts<'a>(values: impl Iterator<Item = &'a str>) -> Accepts {
    let mut accepts = Accepts {
        json: false,
        sse: false,
    };
    for range in values.flat_map(|v| v.split(',')) {
        let media = range.split(';').next().unwrap_or("").trim_ascii();
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        if is("application/json") || is("application/*") {
            accepts.json = true;
        } else if is("text/event-stream") || is("text/*") {
            accepts.sse = true;
        } else if is("*/*") {
            accepts.json = true;
            accepts.sse = true;
        }
    }
    accepts
}

pub(crate) fn check_content_type(headers: &RequestHeaders<'_>) -> Result<(), Rejection> {
    let content_type = headers.content_type.and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim_ascii();
    if media.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(Rejection::UnsupportedMediaType)
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderValue};

    use super::*;

    /// Runs `check` on the headers `pairs` make, as the endpoint reads them.
    fn with<T>(pairs: &[(&'static str, &'static str)], check: impl FnOnce(&RequestHeaders<'_>) -> T) -> T {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_static(v));
        }
        check(&RequestHeaders::read(&map))
    }

    #[test]
    fn loopback_servers_refuse_foreign_origins_and_hosts() {
        let config = HttpConfig::default();
        for ok in [
            &[("host", "127.0.0.1:8080")][..],
            &[("host", "localhost:3000"), ("origin", "http://localhost:5173")],
            &[("host", "[::1]:8080"), ("origin", "http://127.0.0.1")],
        ] {
            assert_eq!(with(ok, |h| check_origin_and_host(h, &config)), Ok(()), "{ok:?}");
        }
        for bad in [
            &[("host", "evil.example:8080")][..],
            &[("host", "127.0.0.1:8080"), ("origin", "http://evil.example")],
            &[("host", "127.0.0.1:8080"), ("origin", "null")],
            &[("host", "localhost.evil.example")],
        ] {
            let err = with(bad, |h| check_origin_and_host(h, &config)).unwrap_err();
            assert_eq!(err.status(), StatusCode::FORBIDDEN, "{bad:?}");
        }
        let open = HttpConfig {
            allowed_origins: vec!["https://app.example".into()],
            ..HttpConfig::default()
        };
        assert!(
            with(&[("host", "localhost"), ("origin", "https://app.example")], |h| {
                check_origin_and_host(h, &open)
            })
            .is_ok()
        );
    }

    #[test]
    fn a_page_of_this_server_passes_only_where_the_host_is_checked() {
        let public: std::net::SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let console = HttpConfig {
            bind: public,
            allowed_hosts: Some(vec!["mcp.example".into()]),
            same_origin: true,
            ..HttpConfig::default()
        };
        let page = [("host", "mcp.example:8080"), ("origin", "http://mcp.example:8080")];
        assert!(with(&page, |h| check_origin_and_host(h, &console)).is_ok());
        let secure = [("host", "MCP.example"), ("origin", "https://mcp.example")];
        assert!(with(&secure, |h| check_origin_and_host(h, &console)).is_ok());
        for bad in [
            // Another port, another scheme's authority, another site, a path.
            &[("host", "mcp.example:8080"), ("origin", "http://mcp.example:9090")][..],
            &[("host", "mcp.example:8080"), ("origin", "ftp://mcp.example:8080")],
            &[("host", "mcp.example:8080"), ("origin", "http://evil.example:8080")],
            &[("host", "mcp.example:8080"), ("origin", "http://mcp.example:8080/x")],
            &[("origin", "http://mcp.example:8080")],
        ] {
            assert!(with(bad, |h| check_origin_and_host(h, &console)).is_err(), "{bad:?}");
        }
        // Off unless asked for.
        let off = HttpConfig {
            same_origin: false,
            ..console.clone()
        };
        assert!(with(&page, |h| check_origin_and_host(h, &off)).is_err());
        // A server that answers any Host would let a rebinding page name
        // its own host in both headers: not there.
        let any_host = HttpConfig {
            allowed_hosts: None,
            ..console
        };
        let rebinding = [("host", "evil.example:8080"), ("origin", "http://evil.example:8080")];
        assert!(with(&rebinding, |h| check_origin_and_host(h, &any_host)).is_err());
    }

    #[test]
    fn origins_are_parsed_and_compared_exactly() {
        let config = HttpConfig::default();
        let origin = |value: &'static str| {
            with(&[("host", "127.0.0.1:8080"), ("origin", value)], |h| {
                check_origin_and_host(h, &config)
            })
        };
        for ok in [
            "http://127.0.0.1:8080",
            "http://localhost",
            "HTTP://LOCALHOST:5173",
            "https://[::1]:8443",
            "http://app.localhost:3000",
        ] {
            assert_eq!(origin(ok), Ok(()), "{ok}");
        }
        for hostile in [
            "http://127.0.0.1:8080@evil.example",
            "http://127.0.0.1:8080.evil.example",
            "http://127.0.0.1.evil.example",
            "http://localhost@evil.example",
            "http://localhost:8080/path",
            "http://localhost:8080/",
            "http://localhost:99999",
            "http://localhost:",
            "http://localhost:8080?x",
            "http://[::1",
            "http://[::1]evil",
            "ftp://localhost",
            "http://",
            "null",
            "http://local host",
        ] {
            let err = origin(hostile).unwrap_err();
            assert_eq!(err.status(), StatusCode::FORBIDDEN, "{hostile}");
        }
        // A configured origin is compared by its parts, the default port filled in.
        let open = HttpConfig {
            allowed_origins: vec!["https://app.example".into()],
            bind: "0.0.0.0:8080".parse().unwrap(),
            ..HttpConfig::default()
        };
        let against = |value: &'static str| {
            with(&[("host", "api.example"), ("origin", value)], |h| {
                check_origin_and_host(h, &open)
            })
        };
        assert_eq!(against("https://APP.example:443"), Ok(()));
        for hostile in [
            "https://app.example.evil",
            "https://app.example@evil",
            "http://app.example",
            "https://app.example:444",
        ] {
            assert!(against(hostile).is_err(), "{hostile}");
        }
    }

    #[test]
    fn common_accept_values_mean_what_parsing_them_means() {
        for (value, known) in COMMON_ACCEPTS {
            let text = std::str::from_utf8(value).unwrap();
            assert_eq!(parse_accepts(std::iter::once(text)), *known, "{text}");
            assert_eq!(with(&[("accept", text)], accepts), *known, "{text}");
        }
        // Two headers are read together, not as the first alone.
        assert_eq!(
            with(
                &[("accept", "application/json"), ("accept", "text/event-stream")],
                accepts
            ),
            Accepts { json: true, sse: true }
        );
    }

    #[test]
    fn accept_and_content_type_are_read_leniently_but_strictly() {
        assert_eq!(
            with(&[("accept", "application/json, text/event-stream")], accepts),
            Accepts { json: true, sse: true }
        );
        assert_eq!(
            with(&[("accept", "text/event-stream;q=0.9")], accepts),
            Accepts { json: false, sse: true }
        );
        assert_eq!(with(&[("accept", "*/*")], accepts), Accepts { json: true, sse: true });
        assert_eq!(
            with(&[("accept", "text/html")], accepts),
            Accepts {
                json: false,
                sse: false
            }
        );
        assert!(
            with(
                &[("content-type", "application/json; charset=utf-8")],
                check_content_type
            )
            .is_ok()
        );
        // Optional whitespace (spaces, tabs) around a media type is not part of it.
        assert!(
            with(
                &[("content-type", "\tapplication/json ; charset=utf-8")],
                check_content_type
            )
            .is_ok()
        );
        assert_eq!(
            with(&[("accept", "application/json,\ttext/event-stream ;q=0.5")], accepts),
            Accepts { json: true, sse: true }
        );
        assert!(with(&[("content-type", "text/plain")], check_content_type).is_err());
        assert!(with(&[], check_content_type).is_err());
    }
}
