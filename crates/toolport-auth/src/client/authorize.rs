//! The authorization request and its response: the user agent that carries
//! the user to the authorization server and back, and the checks on what
//! comes back (RFC 9207 `iss`, `state`) before the code is used anywhere.

use std::collections::BTreeMap;
use std::fmt;

use bytes::Bytes;
use http::{Method, Request, header};

use super::AuthError;
use crate::http::{HttpClient, HttpFuture};

/// Takes the user to the authorization URL and returns the URL the
/// authorization server redirected back to (the redirect URI with `code`,
/// `state`, `iss` or `error`).
pub trait UserAgent: Send + Sync + fmt::Debug + 'static {
    /// Completes the authorization step for `url`.
    fn authorize<'a>(&'a self, url: &'a str, redirect_uri: &'a str) -> HttpFuture<'a, Result<String, AuthError>>;
}

/// For authorization servers that approve without a person (test servers,
/// pre-consented clients): GET the authorization URL with redirects disabled
/// and take the `Location` that points back at the redirect URI.
#[derive(Debug)]
pub struct HeadlessUserAgent {
    http: std::sync::Arc<dyn HttpClient>,
}

impl HeadlessUserAgent {
    /// Uses `http` for the GET.
    pub fn new(http: std::sync::Arc<dyn HttpClient>) -> Self {
        HeadlessUserAgent { http }
    }
}

impl UserAgent for HeadlessUserAgent {
    fn authorize<'a>(&'a self, url: &'a str, redirect_uri: &'a str) -> HttpFuture<'a, Result<String, AuthError>> {
        Box::pin(async move {
            let request = Request::builder()
                .method(Method::GET)
                .uri(url)
                .body(Bytes::new())
                .map_err(|_| AuthError::Authorization(format!("{url:?} is not a valid URI")))?;
            let response = self
                .http
                .send(request)
                .await
                .map_err(|e| AuthError::Authorization(e.to_string()))?;
            let location = response
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .filter(|_| response.status().is_redirection())
                .ok_or_else(|| {
                    AuthError::Authorization(format!(
                        "the authorization server answered {} instead of redirecting back",
                        response.status()
                    ))
                })?;
            if !location.starts_with(redirect_uri) {
                return Err(AuthError::Authorization(
                    "the authorization server redirected somewhere other than the redirect URI (a login page?)".into(),
                ));
            }
            Ok(location.to_owned())
        })
    }
}

/// The query parameters of a callback URL.
pub(crate) fn callback_params(callback: &str) -> BTreeMap<String, String> {
    let query = callback.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or("");
    form_urlencoded::parse(query.as_bytes()).into_owned().collect()
}

/// What the client recorded before sending the user off.
#[derive(Debug, Clone)]
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) iss_supported: bool,
    pub(crate) state: &'a str,
}

/// Checks an authorization response and returns its code. `iss` is checked
/// first (RFC 9207 §2.4, with MCP's rule that a present `iss` is always
/// compared, by simple string comparison): on a mismatch nothing else in the
/// response, not even an error, is acted on.
pub(crate) fn code_from(params: &BTreeMap<String, String>, expected: &Expected<'_>) -> Result<String, AuthError> {
    match params.get("iss") {
        Some(iss) if iss != expected.issuer => {
            return Err(AuthError::IssuerMismatch {
                expected: expected.issuer.to_owned(),
                found: iss.clone(),
            });
        }
        None if expected.iss_supported => {
            return Err(AuthError::Authorization(
                "the authorization server promises `iss` in its responses but this one has none".into(),
            ));
        }
        _ => {}
    }
    if params.get("state").map(String::as_str) != Some(expected.state) {
        return Err(AuthError::Authorization(
            "the response's state does not match the request's".into(),
        ));
    }
    if let Some(error) = params.get("error") {
        let description = params.get("error_description").cloned().unwrap_or_default();
        return Err(AuthError::Authorization(format!("refused: {error} {description}")));
    }
    params
        .get("code")
        .cloned()
        .ok_or_else(|| AuthError::Authorization("the response carries no code".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(query: &str) -> BTreeMap<String, String> {
        callback_params(&format!("http://127.0.0.1/cb?{query}"))
    }

    #[test]
    fn iss_is_compared_exactly_and_first() {
        let supported = Expected {
            issuer: "https://as.example",
            iss_supported: true,
            state: "s1",
        };
        assert_eq!(
            code_from(&params("code=c&state=s1&iss=https%3A%2F%2Fas.example"), &supported).unwrap(),
            "c"
        );
        assert!(matches!(
            code_from(&params("code=c&state=s1&iss=https%3A%2F%2Fas.example%2F"), &supported),
            Err(AuthError::IssuerMismatch { .. })
        ));
        assert!(code_from(&params("code=c&state=s1"), &supported).is_err());
        assert!(matches!(
            code_from(
                &params("error=access_denied&state=s1&iss=https%3A%2F%2Fevil"),
                &supported
            ),
            Err(AuthError::IssuerMismatch { .. })
        ));
        let unadvertised = Expected {
            iss_supported: false,
            ..supported.clone()
        };
        assert_eq!(code_from(&params("code=c&state=s1"), &unadvertised).unwrap(), "c");
        assert!(code_from(&params("code=c&state=s1&iss=https%3A%2F%2Fevil"), &unadvertised).is_err());
        assert!(code_from(&params("code=c&state=other"), &unadvertised).is_err());
    }
}
