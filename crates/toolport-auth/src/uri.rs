//! Absolute URIs as OAuth uses them, without a URL-parsing dependency.

/// The RFC 9728 well-known path prefix.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// `scheme://authority` and the path of an absolute URI; `None` when it is
/// not one (or carries a fragment, which a resource identifier must not).
pub(crate) fn split_origin(uri: &str) -> Option<(&str, &str)> {
    if uri.contains('#') {
        return None;
    }
    let scheme_end = uri.find("://")?;
    let rest = &uri[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    if authority_end == 0 {
        return None;
    }
    let origin_len = scheme_end + 3 + authority_end;
    let path = &uri[origin_len..];
    let path = path.split('?').next().unwrap_or("");
    Some((&uri[..origin_len], path))
}
