//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay:
//! not an API.

/// Reads `data` as `Authorization` values (one per line) and as a
/// `WWW-Authenticate` challenge: a token read is non-empty base64url-ish;
/// a challenge's scopes come from its `scope` parameter.
pub fn bearer(data: &[u8]) {
    let mut headers = http::HeaderMap::new();
    for line in data.split(|b| *b == b'\n') {
        if let Ok(value) = http::HeaderValue::from_bytes(line) {
            headers.append(http::header::AUTHORIZATION, value);
        }
    }
    if let Ok(Some(token)) = crate::resource::bearer_token(&headers) {
        assert!(!token.is_empty());
        assert!(
            token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~+/=".contains(c))
        );
        let _ = crate::resource::token::looks_like_jwt(token);
    }
    let text = String::from_utf8_lossy(data);
    if let Some(challenge) = crate::client::BearerChallenge::parse(&text) {
        let _ = challenge.scopes();
        let _ = challenge.get("resource_metadata");
    }
}
