//! `file://` URIs (RFC 8089) for paths, and back.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Bytes kept as they are in a path: RFC 3986 unreserved characters, `/`
/// and the sub-delimiters that are harmless in a path.
fn keep(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b)
}

/// Percent-encodes a path for a URI.
pub(crate) fn encode_path(path: &Path) -> String {
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `file://` URI of an absolute path.
pub(crate) fn file_uri(path: &Path) -> String {
    format!("file://{}", encode_path(path))
}

/// The absolute path a `file://` URI names (host empty or `localhost`), if it
/// is one and has no `.`/`..` components.
pub(crate) fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') || rest.contains(['?', '#']) {
        return None;
    }
    let bytes = decode(rest)?;
    if bytes.contains(&0) {
        return None;
    }
    let path = PathBuf::from(OsStr::from_bytes(&bytes));
    path.components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        .then_some(path)
}

/// Percent-decodes; `None` for a malformed escape.
pub(crate) fn decode(s: &str) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_file_uris() {
        for p in ["/srv/data/a b.txt", "/x/ünï%code#?.md", "/"] {
            let uri = file_uri(Path::new(p));
            assert!(!uri[7..].contains([' ', '#', '?']), "{uri}");
            assert_eq!(file_path(&uri).unwrap(), PathBuf::from(p), "{uri}");
        }
        assert_eq!(file_uri(Path::new("/a b")), "file:///a%20b");
        assert_eq!(file_path("file://localhost/etc").unwrap(), PathBuf::from("/etc"));
    }

    #[test]
    fn odd_uris_name_no_path() {
        for bad in [
            "http://x/a",
            "file://host/a",
            "file:///a/../b",
            "file:///a/%2e%2e/b",
            "file:///a%00b",
            "file:///a%zz",
            "file:///a?x",
            "file:relative",
        ] {
            assert_eq!(file_path(bad), None, "{bad}");
        }
    }
}
