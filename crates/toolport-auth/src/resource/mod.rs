//! The OAuth 2.1 resource server (`basic/authorization`): an MCP endpoint
//! that accepts only access tokens its authorization server issued for it.
//!
//! Plug it into the HTTP transport with
//! [`toolport_http::HttpServer::with_authenticator`]:
//!
//! ```no_run
//! # async fn run(server: toolport_server::Server) -> std::io::Result<()> {
//! use std::sync::Arc;
//! use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig};
//! use toolport_http::{HttpConfig, HttpServer};
//!
//! let config = ResourceServerConfig::new(
//!     "https://mcp.example.com/mcp",
//!     "https://auth.example.com",
//!     JwksSource::Url("https://auth.example.com/jwks".into()),
//! )
//! .tool_scopes("delete_file", &["files:write"]);
//! let auth = ResourceServer::new(config).expect("a valid configuration");
//! let http = HttpServer::new(server, HttpConfig::default()).with_authenticator(Arc::new(auth));
//! http.bind().await?.serve(std::future::pending()).await
//! # }
//! ```

mod config;
mod introspection;
mod jwks;
mod metadata;
mod scopes;
pub(crate) mod token;
mod verified;

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use toolport_http::auth::{AuthFuture, Authenticator, Denial, Document};
use toolport_server::Principal;
use toolport_server::admission::{Authorizer, Forbidden, Target, TargetKind};

pub use crate::uri::WELL_KNOWN;
pub use config::{DEFAULT_ALGORITHMS, IntrospectionConfig, JwksSource, ResourceServerConfig};
pub use token::TokenError;

use crate::http::{HttpClient, HyperClient};
use jwks::JwksCache;
use scopes::ScopePolicy;
use verified::VerifiedTokens;

/// Why a configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The resource URI is not an absolute URI without a fragment.
    #[error("resource {0:?} is not an absolute URI without a fragment")]
    Resource(String),
    /// No issuer, or no authorization server to advertise.
    #[error("an issuer and at least one authorization server are required")]
    Issuer,
    /// The algorithm allowlist is empty or holds an HMAC algorithm.
    #[error("the algorithm allowlist must be non-empty and asymmetric (no HS256/384/512)")]
    Algorithms,
}

/// The resource server: validates bearer tokens, publishes its metadata,
/// and checks per-tool, per-resource and per-prompt scopes.
#[derive(Debug)]
pub struct ResourceServer {
    config: ResourceServerConfig,
    keys: JwksCache,
    policy: ScopePolicy,
    http: Arc<dyn HttpClient>,
    document: Bytes,
    document_paths: Vec<String>,
    document_url: String,
    verified: VerifiedTokens,
}

impl ResourceServer {
    /// With the built-in HTTP client for JWKS and introspection.
    pub fn new(config: ResourceServerConfig) -> Result<Self, ConfigError> {
        ResourceServer::with_http_client(config, Arc::new(HyperClient::default()))
    }

    /// With the given HTTP client (TLS, proxies).
    pub fn with_http_client(config: ResourceServerConfig, http: Arc<dyn HttpClient>) -> Result<Self, ConfigError> {
        if crate::uri::split_origin(&config.resource).is_none() {
            return Err(ConfigError::Resource(config.resource));
        }
        if config.issuer.is_empty() || config.authorization_servers.is_empty() {
            return Err(ConfigError::Issuer);
        }
        if config.algorithms.is_empty()
            || config.algorithms.iter().any(|a| {
                matches!(
                    a,
                    jsonwebtoken::Algorithm::HS256 | jsonwebtoken::Algorithm::HS384 | jsonwebtoken::Algorithm::HS512
                )
            })
        {
            return Err(ConfigError::Algorithms);
        }
        let keys = JwksCache::new(
            config.jwks.clone(),
            http.clone(),
            config.jwks_refetch_interval,
            config.jwks_max_age,
        );
        Ok(ResourceServer {
            policy: ScopePolicy::new(&config),
            keys,
            http,
            document: Bytes::from(metadata::document(&config).to_string()),
            document_paths: metadata::document_paths(&config.resource),
            document_url: metadata::document_url(&config.resource),
            verified: VerifiedTokens::default(),
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &ResourceServerConfig {
        &self.config
    }

    /// The URL of the protected-resource metadata named in challenges.
    pub fn metadata_url(&self) -> &str {
        &self.document_url
    }

    /// How many times the issuer's keys were fetched.
    pub fn jwks_fetches(&self) -> u64 {
        self.keys.fetches()
    }

    /// Verifies an access token: a JWT against the issuer's keys, or an
    /// opaque token by introspection when that is configured.
    pub async fn verify(&self, token: &str) -> Result<Principal, TokenError> {
        let generation = self.keys.fetches();
        if let Some(principal) = self.verified.get(token, generation) {
            return Ok(principal);
        }
        let (principal, exp, ttl) = if token::looks_like_jwt(token) {
            let (principal, exp) = token::verify_jwt(token, &self.config, &self.keys).await?;
            (principal, exp, self.config.verified_token_ttl)
        } else {
            let Some(introspection) = &self.config.introspection else {
                return Err(TokenError::Malformed);
            };
            let (principal, exp) =
                introspection::introspect(token, introspection, &self.config, self.http.as_ref()).await?;
            (principal, exp, self.config.introspection_cache_ttl)
        };
        // Remembered under the keys' generation from before verifying: had a
        // fetch happened meanwhile, the entry is void and the next request
        // verifies again under the new keys.
        self.verified.put(token, &principal, exp, ttl, generation);
        Ok(principal)
    }

    fn unauthorized(&self, error: Option<(&str, &str)>) -> Denial {
        let scope = self.config.scopes_supported.join(" ");
        let mut params: Vec<(&str, &str)> = Vec::new();
        if let Some((code, description)) = error {
            params.push(("error", code));
            params.push(("error_description", description));
        }
        params.push(("resource_metadata", &self.document_url));
        if !scope.is_empty() {
            params.push(("scope", &scope));
        }
        let status = match error {
            Some(("invalid_request", _)) => StatusCode::BAD_REQUEST,
            _ => StatusCode::UNAUTHORIZED,
        };
        Denial {
            status,
            challenge: Some(metadata::challenge(&params)),
            message: match error {
                Some((_, description)) => format!("Unauthorized: {description}"),
                None => "Unauthorized: send an access token for this server (Authorization: Bearer)".to_owned(),
            },
        }
    }
}

/// The bearer token of a request: `Ok(None)` without one; `Err` for a
/// malformed `Authorization` (several of them, or an empty or invalid
/// token), which RFC 6750 answers with 400 `invalid_request`.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err("more than one Authorization header");
    }
    let value = value.to_str().map_err(|_| "the Authorization header is not ASCII")?;
    let Some((scheme, token)) = value.split_once(' ') else {
        return if value.eq_ignore_ascii_case("bearer") {
            Err("the Bearer credential is empty")
        } else {
            Ok(None)
        };
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = token.trim();
    let b64token = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    if token.is_empty() || !token.chars().all(b64token) {
        return Err("the Bearer credential is not a valid token");
    }
    Ok(Some(token))
}

impl Authenticator for ResourceServer {
    fn document(&self, path: &str) -> Option<Document> {
        self.document_paths.iter().any(|p| p == path).then(|| Document {
            content_type: "application/json",
            body: self.document.clone(),
        })
    }

    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthFuture<'a, Result<Principal, Denial>> {
        Box::pin(async move {
            let token = match bearer_token(headers) {
                Ok(Some(token)) => token,
                Ok(None) => {
                    tracing::info!(target: "toolport::auth", outcome = "unauthenticated", "no access token");
                    return Err(self.unauthorized(None));
                }
                Err(why) => {
                    tracing::info!(target: "toolport::auth", outcome = "malformed", why, "bad Authorization header");
                    return Err(self.unauthorized(Some(("invalid_request", why))));
                }
            };
            match self.verify(token).await {
                Ok(principal) => {
                    tracing::debug!(
                        target: "toolport::auth",
                        subject = %principal.subject,
                        client = principal.client_id.as_deref().unwrap_or(""),
                        "authenticated"
                    );
                    Ok(principal)
                }
                Err(why) => {
                    tracing::info!(target: "toolport::auth", outcome = "invalid_token", %why, "access token refused");
                    Err(self.unauthorized(Some(("invalid_token", &why.to_string()))))
                }
            }
        })
    }
}

impl Authorizer for ResourceServer {
    fn authorize(&self, principal: &Principal, method: &str, target: Option<Target<'_>>) -> Result<(), Forbidden> {
        let effective = self.policy.effective(&principal.scopes);
        let Some(needed) = self.policy.missing(&effective, target) else {
            // Uses of tools are in the server's audit stream; this is a log.
            if let Some((_, name)) = target {
                tracing::debug!(
                    target: "toolport::auth",
                    subject = %principal.subject,
                    client = principal.client_id.as_deref().unwrap_or(""),
                    method,
                    name,
                    outcome = "allowed",
                    "request authorized"
                );
            }
            return Ok(());
        };
        let scope = needed.join(" ");
        let what = match target {
            Some((TargetKind::Tool, name)) => format!("the tool {name:?}"),
            Some((TargetKind::Resource, uri)) => format!("the resource {uri:?}"),
            Some((TargetKind::Prompt, name)) => format!("the prompt {name:?}"),
            None => method.to_owned(),
        };
        let description = format!("{what} needs the scope(s) {scope}");
        tracing::info!(
            target: "toolport::auth",
            subject = %principal.subject,
            client = principal.client_id.as_deref().unwrap_or(""),
            method,
            name = target.map_or("", |(_, name)| name),
            needed = %scope,
            outcome = "insufficient_scope",
            "request refused"
        );
        Err(Forbidden {
            challenge: Some(metadata::challenge(&[
                ("error", "insufficient_scope"),
                ("scope", &scope),
                ("resource_metadata", &self.document_url),
                ("error_description", &description),
            ])),
            message: format!("Forbidden: {description}"),
        })
    }

    fn visible<'a>(&'a self, principal: &'a Principal) -> Box<dyn Fn(Target<'_>) -> bool + Send + Sync + 'a> {
        let effective = self.policy.effective(&principal.scopes);
        Box::new(move |target| self.policy.missing(&effective, Some(target)).is_none())
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(values: &[&'static str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::AUTHORIZATION, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn bearer_tokens_are_read_strictly() {
        assert_eq!(bearer_token(&headers(&[])), Ok(None));
        assert_eq!(
            bearer_token(&headers(&["Bearer abc.def-ghi_~+/="])),
            Ok(Some("abc.def-ghi_~+/="))
        );
        assert_eq!(bearer_token(&headers(&["bearer abc"])), Ok(Some("abc")));
        assert_eq!(bearer_token(&headers(&["Basic dXNlcjpwdw=="])), Ok(None));
        assert!(bearer_token(&headers(&["Bearer"])).is_err());
        assert!(bearer_token(&headers(&["Bearer a b"])).is_err());
        assert!(bearer_token(&headers(&["Bearer a", "Bearer b"])).is_err());
    }

    #[test]
    fn configurations_that_would_be_unsafe_are_refused() {
        let base = || {
            ResourceServerConfig::new(
                "https://mcp.example.com/mcp",
                "https://as.example.com",
                JwksSource::Static(Default::default()),
            )
        };
        assert!(ResourceServer::new(base()).is_ok());
        let mut hmac = base();
        hmac.algorithms.push(jsonwebtoken::Algorithm::HS256);
        assert_eq!(ResourceServer::new(hmac).unwrap_err(), ConfigError::Algorithms);
        let mut relative = base();
        relative.resource = "mcp.example.com".into();
        assert!(matches!(ResourceServer::new(relative), Err(ConfigError::Resource(_))));
    }
}
