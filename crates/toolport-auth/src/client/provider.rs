//! [`OAuthClient`]: the [`TokenProvider`] that runs the flows.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use super::authorize::{self, Expected, UserAgent};
use super::challenge::BearerChallenge;
use super::discovery::{self, ResourceMetadata, ServerMetadata};
use super::dpop::{self, Dpop};
use super::id_jag;
use super::pkce::{self, Pkce};
use super::registration::{self, ClientRegistration};
use super::tokens::{self, Keys, TokenSet};
use super::{AuthError, Credentials, DpopPolicy, Grant, OAuthConfig, TokenProvider};
use crate::http::{HttpClient, HttpFuture};

/// Refresh this long before the access token expires.
const EXPIRY_SKEW: Duration = Duration::from_secs(30);

/// The OAuth client of one MCP server.
#[derive(Debug)]
pub struct OAuthClient {
    config: OAuthConfig,
    http: Arc<dyn HttpClient>,
    agent: Arc<dyn UserAgent>,
    /// One flow at a time; concurrent requests wait for its outcome.
    state: tokio::sync::Mutex<State>,
    /// The DPoP key, made when the first authorization server offers DPoP.
    dpop: std::sync::OnceLock<Dpop>,
}

#[derive(Debug, Default)]
struct State {
    token: Option<TokenSet>,
    server: Option<ServerMetadata>,
    resource: Option<String>,
    /// Registrations by issuer: never used with another issuer.
    registrations: BTreeMap<String, ClientRegistration>,
    /// Every scope asked for so far, so a step-up keeps what was granted.
    requested: BTreeSet<String>,
    /// Step-ups tried per challenged scope set.
    step_ups: BTreeMap<String, u32>,
    /// The last 401 was answered with a refresh: if another follows, the
    /// refreshed token is not enough either, and a new authorization is due.
    refreshed_on_401: bool,
    /// The issuer unbound pre-registered credentials were first used with.
    pre_registered_at: Option<String>,
    /// The MCP server's metadata says it takes DPoP-bound tokens.
    resource_takes_dpop: bool,
}

impl OAuthClient {
    /// A client using `http` for its requests and `agent` for the user's part.
    pub fn new(config: OAuthConfig, http: Arc<dyn HttpClient>, agent: Arc<dyn UserAgent>) -> Self {
        OAuthClient {
            config,
            http,
            agent,
            state: tokio::sync::Mutex::new(State::default()),
            dpop: std::sync::OnceLock::new(),
        }
    }

    /// The keys for token requests to `server`: the private key for
    /// `private_key_jwt`, and the DPoP key when the server offers DPoP and
    /// the policy (and the resource) agree.
    fn keys(&self, server: &ServerMetadata, resource_takes_dpop: bool) -> Result<Keys<'_>, AuthError> {
        let offered = server
            .dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == dpop::ALGORITHM));
        let wanted = match self.config.dpop {
            DpopPolicy::Always => offered,
            DpopPolicy::WhenResourceTakesIt => offered && resource_takes_dpop,
            DpopPolicy::Never => false,
        };
        let dpop = match (wanted, self.dpop.get()) {
            (false, _) => None,
            (true, Some(key)) => Some(key),
            (true, None) => {
                let _ = self.dpop.set(Dpop::generate()?);
                self.dpop.get()
            }
        };
        Ok(Keys {
            private_key: self.config.private_key.as_ref(),
            dpop,
        })
    }

    /// The settings.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The scopes of the current token.
    pub async fn granted_scopes(&self) -> Vec<String> {
        self.state
            .lock()
            .await
            .token
            .as_ref()
            .map(|t| t.scopes.clone())
            .unwrap_or_default()
    }

    /// Treats the access token as expired (after a revocation, say): the
    /// next [`TokenProvider::token`] refreshes it, or drops it when it
    /// cannot be refreshed.
    pub async fn expire_access_token(&self) {
        if let Some(token) = self.state.lock().await.token.as_mut() {
            token.expires_at = Some(std::time::Instant::now());
        }
    }

    /// Whether a refresh token is held.
    pub async fn can_refresh(&self) -> bool {
        self.state
            .lock()
            .await
            .token
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some())
    }

    /// The registration in use with `issuer`, if any.
    pub async fn registration(&self, issuer: &str) -> Option<ClientRegistration> {
        self.state.lock().await.registrations.get(issuer).cloned()
    }

    /// Discovers the authorization server of the MCP server; returns its
    /// metadata and the resource identifier to ask tokens for.
    async fn discover(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<(Option<ResourceMetadata>, ServerMetadata, String), AuthError> {
        let server_url = &self.config.server_url;
        let prm = discovery::resource_metadata(
            self.http.as_ref(),
            server_url,
            challenge.and_then(|c| c.get("resource_metadata")),
        )
        .await?;
        let (server, resource) = match &prm {
            Some(prm) => {
                let issuer = &prm.authorization_servers[0];
                let server = discovery::server_metadata(self.http.as_ref(), issuer).await?;
                (server, discovery::canonical_resource(&prm.resource)?)
            }
            None => {
                tracing::debug!("no protected-resource metadata: falling back to 2025-03-26 discovery");
                let server = discovery::legacy_server_metadata(self.http.as_ref(), server_url).await?;
                (server, discovery::canonical_resource(server_url)?)
            }
        };
        Ok((prm, server, resource))
    }

    /// The scopes to ask for first: the challenge's, else the metadata's
    /// `scopes_supported`, else none (then `scope` is left out).
    fn initial_scopes(challenge: Option<&BearerChallenge>, prm: Option<&ResourceMetadata>) -> Vec<String> {
        let from_challenge = challenge.map(BearerChallenge::scopes).unwrap_or_default();
        if !from_challenge.is_empty() {
            return from_challenge;
        }
        prm.and_then(|p| p.scopes_supported.clone()).unwrap_or_default()
    }

    /// Registers (if needed) and runs the grant for `scopes`.
    async fn obtain(
        &self,
        state: &mut State,
        server: &ServerMetadata,
        resource: &str,
        scopes: &[String],
    ) -> Result<(), AuthError> {
        let machine = self.config.grant.is_machine();
        let registration = match state.registrations.get(&server.issuer) {
            Some(r) => r.clone(),
            None => {
                let r = registration::register(
                    self.http.as_ref(),
                    &self.config,
                    server,
                    state.pre_registered_at.as_deref(),
                )
                .await?;
                if self
                    .config
                    .pre_registered
                    .as_ref()
                    .is_some_and(|p| p.client_id == r.client_id)
                {
                    state.pre_registered_at.get_or_insert_with(|| server.issuer.clone());
                }
                state.registrations.insert(server.issuer.clone(), r.clone());
                r
            }
        };
        let mut scopes: Vec<String> = scopes.to_vec();
        if self.config.want_refresh_token
            && !machine
            && server
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|x| x == "offline_access"))
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
        state
            .requested
            .extend(scopes.iter().filter(|s| *s != "offline_access").cloned());
        let scope = scopes.join(" ");
        let assertion = match &self.config.grant {
            Grant::JwtBearer { assertion } => Some(assertion.clone()),
            Grant::IdJag(idjag) => {
                Some(id_jag::exchange(self.http.as_ref(), idjag, &server.issuer, resource, &scope).await?)
            }
            Grant::AuthorizationCode | Grant::ClientCredentials => None,
        };
        let token = if machine {
            let mut params = vec![("grant_type", self.config.grant.grant_type()), ("resource", resource)];
            if let Some(assertion) = &assertion {
                params.push(("assertion", assertion));
            }
            if !scope.is_empty() {
                params.push(("scope", &scope));
            }
            tokens::request(
                self.http.as_ref(),
                &server.token_endpoint,
                &server.issuer,
                &registration,
                self.keys(server, state.resource_takes_dpop)?,
                &params,
                &scopes,
            )
            .await?
        } else {
            let keys = self.keys(server, state.resource_takes_dpop)?;
            self.authorization_code(server, &registration, resource, (&scope, &scopes), keys)
                .await?
        };
        tracing::debug!(issuer = %server.issuer, scopes = ?token.scopes, "access token obtained");
        state.token = Some(token);
        state.server = Some(server.clone());
        state.resource = Some(resource.to_owned());
        Ok(())
    }

    async fn authorization_code(
        &self,
        server: &ServerMetadata,
        registration: &ClientRegistration,
        resource: &str,
        (scope, scopes): (&str, &[String]),
        keys: Keys<'_>,
    ) -> Result<TokenSet, AuthError> {
        let endpoint = server
            .authorization_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::Discovery(format!("{} has no authorization_endpoint", server.issuer)))?;
        if !server
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|x| x == "S256"))
        {
            return Err(AuthError::NoPkce);
        }
        let pkce = Pkce::new();
        let state_value = pkce::random(16);
        let query = {
            let mut query = form_urlencoded::Serializer::new(String::new());
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &self.config.redirect_uri)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state_value)
                .append_pair("resource", resource);
            if !scope.is_empty() {
                query.append_pair("scope", scope);
            }
            query.finish()
        };
        let separator = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{separator}{query}");
        let callback = self.agent.authorize(&url, &self.config.redirect_uri).await?;
        let code = authorize::code_from(
            &authorize::callback_params(&callback),
            &Expected {
                issuer: &server.issuer,
                iss_supported: server.authorization_response_iss_parameter_supported,
                state: &state_value,
            },
        )?;
        tokens::request(
            self.http.as_ref(),
            &server.token_endpoint,
            &server.issuer,
            registration,
            keys,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &self.config.redirect_uri),
                ("code_verifier", &pkce.verifier),
                ("resource", resource),
            ],
            scopes,
        )
        .await
    }

    /// Refreshes the access token; `false` when there is nothing to refresh
    /// with or the server refused.
    async fn refresh(&self, state: &mut State) -> bool {
        let (Some(token), Some(server), Some(resource)) = (&state.token, &state.server, &state.resource) else {
            return false;
        };
        let Some(refresh_token) = token.refresh_token.clone() else {
            return false;
        };
        let Some(registration) = state.registrations.get(&server.issuer).cloned() else {
            return false;
        };
        let scopes = token.scopes.clone();
        let Ok(keys) = self.keys(server, state.resource_takes_dpop) else {
            return false;
        };
        let outcome = tokens::request(
            self.http.as_ref(),
            &server.token_endpoint,
            &server.issuer,
            &registration,
            keys,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh_token),
                ("resource", resource),
            ],
            &scopes,
        )
        .await;
        match outcome {
            Ok(mut fresh) => {
                // A server that does not rotate refresh tokens keeps the old one valid.
                fresh.refresh_token = fresh.refresh_token.or(Some(refresh_token));
                state.token = Some(fresh);
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, "refresh failed");
                false
            }
        }
    }
}

impl OAuthClient {
    /// The current token, refreshed first when it is about to expire.
    async fn current(&self) -> Option<TokenSet> {
        let mut state = self.state.lock().await;
        if state.token.as_ref().is_some_and(|t| t.expires_within(EXPIRY_SKEW)) && !self.refresh(&mut state).await {
            // Expired and not refreshable: send nothing, and let the 401 start a new flow.
            state.token = None;
        }
        state.token.clone()
    }
}

impl TokenProvider for OAuthClient {
    fn token(&self) -> HttpFuture<'_, Result<Option<String>, AuthError>> {
        Box::pin(async move { Ok(self.current().await.map(|t| t.access_token)) })
    }

    fn credentials<'a>(
        &'a self,
        method: &'a str,
        url: &'a str,
    ) -> HttpFuture<'a, Result<Option<Credentials>, AuthError>> {
        Box::pin(async move {
            let Some(token) = self.current().await else {
                return Ok(None);
            };
            match self.dpop.get().filter(|_| token.dpop) {
                None => Ok(Some(Credentials::bearer(token.access_token))),
                Some(key) => {
                    let nonce = Dpop::nonce(&key.resource_nonce);
                    let proof = key.proof(method, url, nonce.as_deref(), Some(&token.access_token))?;
                    Ok(Some(Credentials {
                        authorization: format!("DPoP {}", token.access_token),
                        dpop: Some(proof),
                    }))
                }
            }
        })
    }

    fn resource_nonce(&self, nonce: &str) {
        if let Some(key) = self.dpop.get() {
            Dpop::remember(&key.resource_nonce, nonce);
        }
    }

    fn on_unauthorized<'a>(&'a self, www_authenticate: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>> {
        Box::pin(async move {
            let challenge = www_authenticate.and_then(BearerChallenge::parse);
            let mut state = self.state.lock().await;
            // The MCP server wants a fresh DPoP nonce (already remembered
            // through `resource_nonce`): the same token, a new proof.
            if challenge.as_ref().and_then(|c| c.get("error")) == Some("use_dpop_nonce")
                && state.token.as_ref().is_some_and(|t| t.dpop)
            {
                return Ok(());
            }
            let (prm, server, resource) = self.discover(challenge.as_ref()).await?;
            state.resource_takes_dpop = prm.as_ref().is_some_and(ResourceMetadata::takes_dpop);
            let same_server = state.server.as_ref().is_some_and(|s| s.issuer == server.issuer);
            let challenged = challenge.as_ref().map(BearerChallenge::scopes).unwrap_or_default();
            let covered = state
                .token
                .as_ref()
                .is_some_and(|t| challenged.iter().all(|s| t.scopes.contains(s)));
            if same_server && covered && !state.refreshed_on_401 && self.refresh(&mut state).await {
                state.refreshed_on_401 = true;
                return Ok(());
            }
            state.refreshed_on_401 = false;
            if !same_server {
                // A new authorization server: nothing from the old one carries over.
                state.token = None;
            }
            let mut scopes = Self::initial_scopes(challenge.as_ref(), prm.as_ref());
            if same_server {
                scopes.extend(state.requested.iter().cloned());
                scopes.sort();
                scopes.dedup();
            }
            self.obtain(&mut state, &server, &resource, &scopes).await
        })
    }

    fn on_forbidden<'a>(&'a self, www_authenticate: Option<&'a str>) -> HttpFuture<'a, Result<(), AuthError>> {
        Box::pin(async move {
            let challenge = www_authenticate.and_then(BearerChallenge::parse);
            let Some(challenge) = challenge.filter(|c| c.get("error") == Some("insufficient_scope")) else {
                return Err(AuthError::Forbidden(
                    "the server refused the request, and not for lack of scope".into(),
                ));
            };
            let challenged = challenge.scopes();
            let mut key = challenged.clone();
            key.sort();
            let key = key.join(" ");
            let mut state = self.state.lock().await;
            let tries = state.step_ups.entry(key.clone()).or_default();
            *tries += 1;
            if *tries > self.config.max_step_ups {
                return Err(AuthError::StepUpLimit(key));
            }
            let (server, resource) = match (&state.server, &state.resource) {
                (Some(s), Some(r)) => (s.clone(), r.clone()),
                _ => {
                    let (prm, server, resource) = self.discover(Some(&challenge)).await?;
                    state.resource_takes_dpop = prm.as_ref().is_some_and(ResourceMetadata::takes_dpop);
                    (server, resource)
                }
            };
            // The union of what was asked for before and what is challenged now.
            let mut scopes: BTreeSet<String> = state.requested.clone();
            scopes.extend(challenged);
            let scopes: Vec<String> = scopes.into_iter().collect();
            self.obtain(&mut state, &server, &resource, &scopes).await
        })
    }
}
