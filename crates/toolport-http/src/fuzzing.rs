//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay:
//! not an API.

use http::{HeaderMap, HeaderName, HeaderValue};

/// Reads `data` as request headers (`name: value` lines): the one walk
/// agrees with `HeaderMap` lookups, the Origin and Host checks and the
/// single-valued check answer without panicking.
pub fn headers(data: &[u8]) {
    let mut map = HeaderMap::new();
    for line in data.split(|b| *b == b'\n') {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(line[..colon].trim_ascii()),
            HeaderValue::from_bytes(line[colon + 1..].trim_ascii()),
        ) else {
            continue;
        };
        map.append(name, value);
    }
    let found = crate::headers::RequestHeaders::read(&map);
    assert_eq!(found.host, map.get(http::header::HOST));
    assert_eq!(found.origin, map.get(http::header::ORIGIN));
    let repeated = |name: &HeaderName| map.get_all(name).iter().count() > 1;
    if [
        crate::headers::METHOD,
        crate::headers::NAME,
        crate::headers::PROTOCOL_VERSION,
    ]
    .iter()
    .any(repeated)
    {
        assert!(
            found.check_single_valued().is_err(),
            "a repeated header was let through"
        );
    }
    let config = crate::HttpConfig::default();
    let _ = crate::guard::check_origin_and_host(&found, &config);
    let _ = crate::guard::accepts(&found);
    let _ = crate::guard::check_content_type(&found);
}

/// Parses `data` as an Origin: what parses has no user info, path, query
/// or fragment, and a port that fits.
pub fn origin(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Some(origin) = crate::guard::Origin::parse(&text) {
        assert!(!origin.host.is_empty());
        assert!(!origin.host.contains(['@', '/', '?', '#', ' ']), "{origin:?}");
        assert!(matches!(origin.scheme.as_str(), "http" | "https"));
        assert_eq!(
            crate::guard::Origin::parse(&format!("{}://{}", origin.scheme, bracket(&origin.host))).map(|o| o.host),
            Some(origin.host.clone())
        );
    }
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// Parses `data` as a `Last-Event-ID`: an id this server made round-trips.
pub fn event_id(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::live::parse_event_id(&text);
    let (stream, seq) = (data.len() as u64, u64::from(data.first().copied().unwrap_or(0)));
    assert_eq!(
        crate::live::parse_event_id(&crate::live::event_id(stream, seq)),
        Some((stream, seq))
    );
}
