//! The hook for authorization over HTTP.
//!
//! The client itself knows no OAuth. It asks a [`TokenProvider`] for a token
//! before every HTTP request and sends it as `Authorization: Bearer <token>`;
//! when the server answers 401, or 403 with `error="insufficient_scope"`, it
//! hands the challenge to the provider, which may fetch or refresh a token
//! (discovery, authorization code with PKCE, client credentials, step-up to
//! more scopes) and ask for the request to be sent again. A request is sent at
//! most [`MAX_AUTH_ATTEMPTS`] times, so a provider that keeps failing cannot
//! loop forever. Tokens never appear in logs or errors.

use std::collections::BTreeMap;

use crate::handler::BoxFuture;

/// How many times one HTTP request is sent in all while authorization is
/// being sorted out (the spec asks clients to bound step-up retries).
pub const MAX_AUTH_ATTEMPTS: u32 = 3;

/// A 401 or 403 answer, as the provider needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    /// The MCP endpoint that answered (the OAuth protected resource).
    pub resource: String,
    /// 401 or 403.
    pub status: u16,
    /// The raw `WWW-Authenticate` header, when there was one.
    pub www_authenticate: Option<String>,
    /// Its `Bearer` parameters (`error`, `scope`, `resource_metadata`, ...),
    /// names in lower case.
    pub params: BTreeMap<String, String>,
    /// How many times this request has been sent so far (1 on the first answer).
    pub attempt: u32,
    /// The server's `DPoP-Nonce`, when it sent one (RFC 9449 §9).
    pub dpop_nonce: Option<String>,
}

impl AuthChallenge {
    pub(crate) fn new(
        resource: &str,
        status: u16,
        www_authenticate: Option<String>,
        attempt: u32,
        dpop_nonce: Option<String>,
    ) -> Self {
        let params = www_authenticate.as_deref().map(bearer_params).unwrap_or_default();
        AuthChallenge {
            resource: resource.to_owned(),
            status,
            www_authenticate,
            params,
            attempt,
            dpop_nonce,
        }
    }

    /// `error` of the challenge, for example `insufficient_scope` or `invalid_token`.
    pub fn error(&self) -> Option<&str> {
        self.params.get("error").map(String::as_str)
    }

    /// `scope` of the challenge: the scopes the server asks for.
    pub fn scope(&self) -> Option<&str> {
        self.params.get("scope").map(String::as_str)
    }

    /// `resource_metadata`: where the Protected Resource Metadata is (RFC 9728).
    pub fn resource_metadata(&self) -> Option<&str> {
        self.params.get("resource_metadata").map(String::as_str)
    }
}

/// What to do after a challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthDecision {
    /// A new token is ready: send the request again.
    Retry,
    /// Stop; the caller gets the 401/403 error.
    GiveUp,
}

/// Supplies bearer tokens and reacts to challenges. Implemented by the OAuth
/// client (crate `toolport-auth`) and by [`StaticToken`].
pub trait TokenProvider: Send + Sync + std::fmt::Debug + 'static {
    /// The token to send now, if any.
    fn token(&self) -> BoxFuture<'_, Option<String>>;

    /// The server answered 401: fetch or refresh a token and say whether to retry.
    fn on_unauthorized<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision>;

    /// The server answered 403 with `error="insufficient_scope"`: step up to
    /// the scopes in the challenge and say whether to retry. Other 403s are
    /// not retried.
    fn on_insufficient_scope<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        let _ = challenge;
        Box::pin(async { AuthDecision::GiveUp })
    }

    /// The headers for one request (`method` on `url`): by default
    /// `Authorization: Bearer <token()>`; a provider of DPoP-bound tokens
    /// sends the `DPoP` scheme and a fresh proof for this very request.
    fn credentials<'a>(&'a self, method: &'a str, url: &'a str) -> BoxFuture<'a, Option<Credentials>> {
        let _ = (method, url);
        Box::pin(async move {
            self.token().await.map(|token| Credentials {
                authorization: format!("Bearer {token}"),
                dpop: None,
            })
        })
    }
}

/// The headers that authorize one request. `Debug` hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The `Authorization` value: `Bearer <token>` or `DPoP <token>`.
    pub authorization: String,
    /// The `DPoP` proof header, for a DPoP-bound token.
    pub dpop: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = self.authorization.split(' ').next().unwrap_or("");
        f.debug_struct("Credentials")
            .field("scheme", &scheme)
            .field("dpop", &self.dpop.is_some())
            .finish()
    }
}

/// A shared provider (so the caller can keep a handle on it) is a provider.
impl<T: TokenProvider + ?Sized> TokenProvider for std::sync::Arc<T> {
    fn token(&self) -> BoxFuture<'_, Option<String>> {
        (**self).token()
    }
    fn on_unauthorized<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        (**self).on_unauthorized(challenge)
    }
    fn on_insufficient_scope<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        (**self).on_insufficient_scope(challenge)
    }
    fn credentials<'a>(&'a self, method: &'a str, url: &'a str) -> BoxFuture<'a, Option<Credentials>> {
        (**self).credentials(method, url)
    }
}

/// A fixed token (from a flag or an environment variable). Never retries.
#[derive(Clone)]
pub struct StaticToken(String);

impl StaticToken {
    /// A provider that always sends `token`.
    pub fn new(token: impl Into<String>) -> Self {
        StaticToken(token.into())
    }
}

impl std::fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token itself.
        f.write_str("StaticToken(<redacted>)")
    }
}

impl TokenProvider for StaticToken {
    fn token(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move { Some(self.0.clone()) })
    }

    fn on_unauthorized<'a>(&'a self, _: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        Box::pin(async { AuthDecision::GiveUp })
    }
}

/// The parameters of the `Bearer` challenge in a `WWW-Authenticate` header
/// (RFC 6750 §3; values may be quoted strings with `\` escapes), or of the
/// `DPoP` challenge (RFC 9449 §7.1) when there is no `Bearer` one.
///
/// ```
/// use toolport_client::auth::bearer_params;
/// let p = bearer_params(r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x/.well-known/oauth-protected-resource""#);
/// assert_eq!(p["error"], "insufficient_scope");
/// assert_eq!(p["scope"], "files:read files:write");
/// ```
pub fn bearer_params(header: &str) -> BTreeMap<String, String> {
    let mut params = BTreeMap::new();
    let Some(start) = find_scheme(header, "bearer").or_else(|| find_scheme(header, "dpop")) else {
        return params;
    };
    let mut rest = header[start..].trim_start();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some(eq) = rest.find('=') else { break };
        let name = rest[..eq].trim();
        // A bare token followed by a space starts the next scheme.
        if name.is_empty() || name.contains(' ') {
            break;
        }
        rest = rest[eq + 1..].trim_start();
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            out.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            value = out;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        params.insert(name.to_ascii_lowercase(), value);
    }
    params
}

/// Where the parameters of `scheme` start (after the scheme name).
fn find_scheme(header: &str, scheme: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = lower[from..].find(scheme) {
        let at = from + pos;
        let before_ok = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',');
        let after = at + scheme.len();
        let after_ok = after == lower.len() || lower.as_bytes()[after] == b' ';
        if before_ok && after_ok {
            return Some(after);
        }
        from = after;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse_with_escapes_and_other_schemes() {
        let p = bearer_params(
            r#"Basic realm="x", Bearer realm="mcp", error="invalid_token", error_description="say \"hi\"""#,
        );
        assert_eq!(p["realm"], "mcp");
        assert_eq!(p["error"], "invalid_token");
        assert_eq!(p["error_description"], "say \"hi\"");
        let p = bearer_params("Bearer scope=read");
        assert_eq!(p["scope"], "read");
        assert!(bearer_params("Basic realm=\"x\"").is_empty());
        assert!(bearer_params("Bearer").is_empty());
        assert!(bearer_params("Bearer error=\"unterminated").contains_key("error"));
        let c = AuthChallenge::new(
            "http://h/mcp",
            403,
            Some("Bearer error=\"insufficient_scope\", scope=\"a b\"".into()),
            1,
            None,
        );
        assert_eq!((c.error(), c.scope()), (Some("insufficient_scope"), Some("a b")));
        assert_eq!(format!("{:?}", StaticToken::new("secret")), "StaticToken(<redacted>)");
    }
}
