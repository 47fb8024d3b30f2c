//! OAuth 2.1 for the client: any `toolport-auth` token provider (usually
//! [`OAuthClient`](toolport_auth::client::OAuthClient)) as this client's
//! [`TokenProvider`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolport_client::ClientError> {
//! use std::sync::Arc;
//! use toolport_auth::client::{LoopbackUserAgent, OAuthClient, OAuthConfig};
//! use toolport_auth::http::HyperClient;
//! use toolport_client::{Client, oauth::OAuth};
//!
//! let url = "https://mcp.example.com/mcp";
//! let http = Arc::new(HyperClient::default());
//! let config = OAuthConfig::new(url, "my agent", "http://127.0.0.1:53682/callback");
//! // Opens the authorization URL for the person; waits two minutes for the redirect.
//! let browser = LoopbackUserAgent::new(|url| eprintln!("open {url}"), std::time::Duration::from_secs(120));
//! let oauth = OAuthClient::new(config, http, Arc::new(browser));
//! let client = Client::http(url).auth(OAuth::new(oauth)).connect().await?;
//! # let _ = client; Ok(()) }
//! ```

use std::fmt;

use toolport_auth::client::TokenProvider as OAuthFlows;

use crate::auth::{AuthChallenge, AuthDecision, Credentials, TokenProvider};
use crate::handler::BoxFuture;

/// Adapts OAuth flows to the client's token hook: credentials (Bearer, or
/// DPoP with a fresh proof) before every request, a new authorization (or a
/// new DPoP nonce) on 401, a scope step-up on 403
/// `insufficient_scope`. Why a flow failed goes to the log (never a token);
/// the caller gets the 401 or 403 error.
pub struct OAuth<P>(P);

impl<P: OAuthFlows> OAuth<P> {
    /// Wraps `flows`.
    pub fn new(flows: P) -> Self {
        OAuth(flows)
    }

    /// The wrapped flows (for their granted scopes, registration, ...).
    pub fn flows(&self) -> &P {
        &self.0
    }
}

impl OAuth<toolport_auth::client::OAuthClient> {
    /// The client-credentials flow of a service (no person takes part) for
    /// the MCP endpoint `url`: its authorization server is discovered from
    /// the endpoint's 401 and metadata, and a token for it is asked for as
    /// the pre-registered client `id` with `secret`.
    pub fn client_credentials(url: &str, id: &str, secret: &str) -> Self {
        use std::sync::Arc;
        use toolport_auth::client::{Grant, HeadlessUserAgent, OAuthClient, OAuthConfig, PreRegistered};
        use toolport_auth::http::{HttpClient, HyperClient};

        let http: Arc<dyn HttpClient> = Arc::new(HyperClient::default());
        // No person takes part: the redirect URI is never visited.
        let mut config = OAuthConfig::new(url, "toolport", "http://127.0.0.1:1/unused");
        config.grant = Grant::ClientCredentials;
        config.pre_registered = Some(PreRegistered {
            client_id: id.to_owned(),
            client_secret: Some(secret.to_owned()),
            issuer: None,
            auth_method: None,
        });
        let nobody = Arc::new(HeadlessUserAgent::new(http.clone()));
        OAuth::new(OAuthClient::new(config, http, nobody))
    }
}

impl<P: OAuthFlows> fmt::Debug for OAuth<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OAuth").field(&self.0).finish()
    }
}

/// Retry when the flow succeeded; give up, with the reason logged, when not.
fn decide(step: &str, outcome: Result<(), toolport_auth::client::AuthError>) -> AuthDecision {
    match outcome {
        Ok(()) => AuthDecision::Retry,
        Err(e) => {
            tracing::warn!(error = %e, "OAuth {step} failed");
            AuthDecision::GiveUp
        }
    }
}

impl<P: OAuthFlows> TokenProvider for OAuth<P> {
    fn token(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move {
            self.0.token().await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "no OAuth access token");
                None
            })
        })
    }

    fn credentials<'a>(&'a self, method: &'a str, url: &'a str) -> BoxFuture<'a, Option<Credentials>> {
        Box::pin(async move {
            match self.0.credentials(method, url).await {
                Ok(credentials) => credentials.map(|c| Credentials {
                    authorization: c.authorization,
                    dpop: c.dpop,
                }),
                Err(e) => {
                    tracing::warn!(error = %e, "no OAuth credentials");
                    None
                }
            }
        })
    }

    fn on_unauthorized<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        Box::pin(async move {
            if let Some(nonce) = &challenge.dpop_nonce {
                self.0.resource_nonce(nonce);
            }
            decide(
                "authorization",
                self.0.on_unauthorized(challenge.www_authenticate.as_deref()).await,
            )
        })
    }

    fn on_insufficient_scope<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        Box::pin(async move {
            decide(
                "scope step-up",
                self.0.on_forbidden(challenge.www_authenticate.as_deref()).await,
            )
        })
    }
}
