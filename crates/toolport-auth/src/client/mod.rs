//! OAuth 2.1 on the client (`basic/authorization`): everything between an
//! MCP server's 401 and a request that carries a token it accepts.
//!
//! An MCP client library asks a [`TokenProvider`] for the token before each
//! request and tells it about 401 and 403 answers; [`OAuthClient`] is the
//! provider that does the work: protected-resource metadata discovery (the
//! challenge's `resource_metadata`, then the well-known paths), authorization
//! server metadata (RFC 8414 and OpenID Connect discovery, issuer checked),
//! client registration (pre-registered, Client ID Metadata Document, or
//! dynamic registration), authorization code with PKCE S256 and the RFC 8707
//! `resource` parameter, `iss` validation (RFC 9207), client credentials
//! (secret or private_key_jwt), refresh, and scope step-up on 403
//! `insufficient_scope` with a retry limit.

mod authorize;
mod challenge;
mod discovery;
mod dpop;
mod id_jag;
mod loopback;
mod pkce;
mod provider;
mod registration;
mod tokens;

use std::fmt;

pub use authorize::{HeadlessUserAgent, UserAgent};
pub use challenge::BearerChallenge;
pub use discovery::{ResourceMetadata, ServerMetadata, canonical_resource, server_metadata};
/// Signing algorithms, for [`PrivateKey`].
pub use jsonwebtoken::Algorithm;
pub use loopback::LoopbackUserAgent;
pub use provider::OAuthClient;
pub use registration::{ClientRegistration, client_metadata_document};
pub use tokens::TokenSet;

use crate::http::HttpFuture;

/// Why the client could not get a usable token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// Metadata could not be found or read.
    #[error("discovery failed: {0}")]
    Discovery(String),
    /// The protected-resource metadata speaks for another resource.
    #[error("the resource metadata names {resource:?}, which is not the server {server:?}; refusing to authorize")]
    ResourceMismatch {
        /// The `resource` in the metadata.
        resource: String,
        /// The MCP server the client talks to.
        server: String,
    },
    /// Metadata or an authorization response names another issuer.
    #[error("issuer mismatch: expected {expected:?}, got {found:?}")]
    IssuerMismatch {
        /// The issuer recorded.
        expected: String,
        /// The issuer presented.
        found: String,
    },
    /// The authorization server does not support PKCE S256.
    #[error("the authorization server does not support PKCE with S256; refusing to proceed")]
    NoPkce,
    /// No client id could be had.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization step failed or was refused.
    #[error("authorization failed: {0}")]
    Authorization(String),
    /// The token endpoint refused or answered nonsense.
    #[error("token request failed: {0}")]
    Token(String),
    /// A 403 that more scope cannot fix.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Step-up was tried as often as allowed for this challenge.
    #[error("scope step-up for {0:?} was tried too often; giving up")]
    StepUpLimit(String),
}

/// What an MCP client needs from an OAuth layer.
///
/// Before each HTTP request the client asks [`token`](Self::token) and sends
/// `Authorization: Bearer <token>` when there is one. On a 401 it calls
/// [`on_unauthorized`](Self::on_unauthorized) with the `WWW-Authenticate`
/// value and, if that succeeds, retries the request once with the new token;
/// on a 403 it calls [`on_forbidden`](Self::on_forbidden) likewise. An error
/// from either is final for that request.
pub trait TokenProvider: Send + Sync + fmt::Debug + 'static {
    /// The access token to send, refreshed first if it is about to expire;
    /// `None` before any authorization.
    fn token(&self) -> HttpFuture<'_, Result<Option<String>, AuthError>>;

    /// The server answered 401: discover, (re-)register and (re-)authorize.
    fn on_unauthorized<'a>(&'a self, www_authenticate: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>>;

    /// The server answered 403: step up to the challenged scopes (joined
    /// with those asked for before), within the retry limit.
    fn on_forbidden<'a>(&'a self, www_authenticate: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>>;

    /// What to send with one request (`method` on `url`): by default
    /// `Authorization: Bearer <token>`; for a DPoP-bound token the `DPoP`
    /// scheme and a fresh proof for this request.
    fn credentials<'a>(
        &'a self,
        method: &'a str,
        url: &'a str,
    ) -> HttpFuture<'a, Result<Option<Credentials>, AuthError>> {
        let _ = (method, url);
        Box::pin(async move { Ok(self.token().await?.map(Credentials::bearer)) })
    }

    /// The MCP server handed out a DPoP nonce (`DPoP-Nonce`): proofs from now
    /// on carry it. Ignored by providers without DPoP.
    fn resource_nonce(&self, nonce: &str) {
        let _ = nonce;
    }
}

/// The headers that authorize one request. `Debug` hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The `Authorization` value: `Bearer <token>` or `DPoP <token>`.
    pub authorization: String,
    /// The `DPoP` proof, for a DPoP-bound token.
    pub dpop: Option<String>,
}

impl Credentials {
    /// `Authorization: Bearer <token>`.
    pub fn bearer(token: String) -> Credentials {
        Credentials {
            authorization: format!("Bearer {token}"),
            dpop: None,
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = self.authorization.split(' ').next().unwrap_or("");
        f.debug_struct("Credentials")
            .field("scheme", &scheme)
            .field("dpop", &self.dpop.is_some())
            .finish()
    }
}

/// A shared provider (so the caller keeps a handle on it, for its granted
/// scopes or registration) is a provider.
impl<T: TokenProvider + ?Sized> TokenProvider for std::sync::Arc<T> {
    fn token(&self) -> HttpFuture<'_, Result<Option<String>, AuthError>> {
        (**self).token()
    }
    fn on_unauthorized<'a>(&'a self, www_authenticate: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>> {
        (**self).on_unauthorized(www_authenticate)
    }
    fn on_forbidden<'a>(&'a self, www_authenticate: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>> {
        (**self).on_forbidden(www_authenticate)
    }
    fn credentials<'a>(
        &'a self,
        method: &'a str,
        url: &'a str,
    ) -> HttpFuture<'a, Result<Option<Credentials>, AuthError>> {
        (**self).credentials(method, url)
    }
    fn resource_nonce(&self, nonce: &str) {
        (**self).resource_nonce(nonce)
    }
}

/// Client credentials registered out of band.
#[derive(Clone, PartialEq, Eq)]
pub struct PreRegistered {
    /// The client id.
    pub client_id: String,
    /// The secret, if confidential.
    pub client_secret: Option<String>,
    /// The issuer they belong to; `None` trusts whichever authorization
    /// server the MCP server names first.
    pub issuer: Option<String>,
    /// The token-endpoint authentication method, if fixed.
    pub auth_method: Option<String>,
}

impl fmt::Debug for PreRegistered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreRegistered")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("issuer", &self.issuer)
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// A private key for `private_key_jwt` client authentication.
#[derive(Clone)]
pub struct PrivateKey {
    /// PKCS#8 PEM.
    pub pem: String,
    /// The signing algorithm (ES256, RS256, ...).
    pub algorithm: jsonwebtoken::Algorithm,
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrivateKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

/// How the client obtains tokens.
#[derive(Clone, PartialEq, Eq)]
pub enum Grant {
    /// A user authorizes: authorization code with PKCE.
    AuthorizationCode,
    /// The client acts on its own behalf: client credentials.
    ClientCredentials,
    /// Workload identity federation (RFC 7523 JWT bearer grant): the
    /// workload presents a JWT its platform issued for the authorization
    /// server (a Kubernetes service-account token, a cloud identity token).
    JwtBearer {
        /// The workload's JWT.
        assertion: String,
    },
    /// Enterprise-managed authorization (ID-JAG): the user's ID token from
    /// the enterprise identity provider is exchanged there (RFC 8693) for an
    /// identity assertion grant, which the authorization server takes with
    /// the JWT bearer grant.
    IdJag(IdJag),
}

impl Grant {
    /// Whether tokens come without a person (no redirect, no refresh token).
    pub(crate) fn is_machine(&self) -> bool {
        !matches!(self, Grant::AuthorizationCode)
    }

    /// The `grant_type` sent to the authorization server's token endpoint.
    pub(crate) fn grant_type(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::JwtBearer { .. } | Grant::IdJag(_) => tokens::JWT_BEARER,
        }
    }
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the assertion or the ID token.
        match self {
            Grant::AuthorizationCode => f.write_str("AuthorizationCode"),
            Grant::ClientCredentials => f.write_str("ClientCredentials"),
            Grant::JwtBearer { .. } => f.write_str("JwtBearer(<redacted>)"),
            Grant::IdJag(idjag) => f.debug_tuple("IdJag").field(idjag).finish(),
        }
    }
}

/// Where and how the user's ID token is exchanged for an ID-JAG.
#[derive(Clone, PartialEq, Eq)]
pub struct IdJag {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// This client's id at the identity provider.
    pub idp_client_id: String,
    /// Its secret there, if it has one (sent in the form).
    pub idp_client_secret: Option<String>,
    /// The user's ID token from the identity provider.
    pub id_token: String,
}

impl fmt::Debug for IdJag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdJag")
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .field(
                "idp_client_secret",
                &self.idp_client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("id_token", &"<redacted>")
            .finish()
    }
}

/// Settings of the OAuth client.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// The MCP endpoint, for example `https://mcp.example.com/mcp`.
    pub server_url: String,
    /// The client's name, for registration and consent screens.
    pub client_name: String,
    /// Where the authorization server sends the user back (loopback or HTTPS).
    pub redirect_uri: String,
    /// The client's Client ID Metadata Document URL (HTTPS), if it has one.
    pub client_metadata_url: Option<String>,
    /// Pre-registered credentials, used first when they fit the server.
    pub pre_registered: Option<PreRegistered>,
    /// The key for `private_key_jwt`.
    pub private_key: Option<PrivateKey>,
    /// Authorization code or client credentials.
    pub grant: Grant,
    /// Ask for `offline_access` (a refresh token) when the authorization
    /// server lists it.
    pub want_refresh_token: bool,
    /// Step-up attempts allowed per challenged scope set.
    pub max_step_ups: u32,
    /// When to bind tokens to a key of this client with DPoP (RFC 9449).
    pub dpop: DpopPolicy,
}

/// When the client asks for DPoP-bound tokens. Never unless the
/// authorization server offers DPoP with ES256.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DpopPolicy {
    /// When the MCP server's protected-resource metadata says it takes DPoP
    /// tokens too: a server that does not would refuse them.
    #[default]
    WhenResourceTakesIt,
    /// Whenever the authorization server offers it.
    Always,
    /// Bearer tokens only.
    Never,
}

impl OAuthConfig {
    /// An authorization-code client for `server_url`.
    pub fn new(server_url: impl Into<String>, client_name: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        OAuthConfig {
            server_url: server_url.into(),
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            client_metadata_url: None,
            pre_registered: None,
            private_key: None,
            grant: Grant::AuthorizationCode,
            want_refresh_token: true,
            max_step_ups: 2,
            dpop: DpopPolicy::default(),
        }
    }
}

/// A fixed bearer token (a CLI's `--bearer`, a service account's token):
/// sent as is; a 401 or 403 is final.
#[derive(Clone)]
pub struct StaticToken(pub String);

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticToken(<redacted>)")
    }
}

impl TokenProvider for StaticToken {
    fn token(&self) -> HttpFuture<'_, Result<Option<String>, AuthError>> {
        Box::pin(async move { Ok(Some(self.0.clone())) })
    }

    fn on_unauthorized<'a>(&'a self, _: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>> {
        Box::pin(async {
            Err(AuthError::Authorization(
                "the server refused the configured token".into(),
            ))
        })
    }

    fn on_forbidden<'a>(&'a self, _: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>> {
        Box::pin(async { Err(AuthError::Forbidden("the configured token lacks a needed scope".into())) })
    }
}

#[cfg(test)]
mod tests {
    use super::{Grant, IdJag};

    #[test]
    fn grants_never_print_their_secrets() {
        let wif = Grant::JwtBearer {
            assertion: "eyJ.workload.jwt".into(),
        };
        let idjag = Grant::IdJag(IdJag {
            idp_token_endpoint: "https://idp.example/token".into(),
            idp_client_id: "agent".into(),
            idp_client_secret: Some("s3cret".into()),
            id_token: "eyJ.id.token".into(),
        });
        let printed = format!("{wif:?} {idjag:?}");
        for secret in ["eyJ.workload.jwt", "s3cret", "eyJ.id.token"] {
            assert!(!printed.contains(secret), "{printed}");
        }
        assert!(printed.contains("https://idp.example/token"), "{printed}");
        assert_eq!(wif.grant_type(), "urn:ietf:params:oauth:grant-type:jwt-bearer");
        assert!(wif.is_machine() && !Grant::AuthorizationCode.is_machine());
    }
}
