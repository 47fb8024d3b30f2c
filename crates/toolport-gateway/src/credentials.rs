//! What an HTTP upstream is told about who calls: the gateway's own
//! credential (a fixed `bearer`, or OAuth client credentials), or, with
//! `forward_token`, the token of the caller a slot serves. Tokens are never
//! logged: every type here hides them from `Debug`.

use std::sync::{Arc, Mutex};

use toolport_client::handler::BoxFuture;
use toolport_client::oauth::OAuth;
use toolport_client::{AuthChallenge, AuthDecision, StaticToken, TokenProvider};
use toolport_server::Credential;

use crate::config::UpstreamConfig;

/// The gateway's own credential for `config`'s upstream at `url`, if it has one.
pub(crate) fn own(config: &UpstreamConfig, url: &str) -> Option<Arc<dyn TokenProvider>> {
    if let Some(token) = &config.bearer {
        return Some(Arc::new(StaticToken::new(token.0.clone())));
    }
    match (&config.client_id, &config.client_secret) {
        (Some(id), Some(secret)) => Some(Arc::new(OAuth::client_credentials(url, id, &secret.0))),
        _ => None,
    }
}

/// The newest token of the one caller a slot serves.
#[derive(Default)]
pub(crate) struct CallerToken(Mutex<Option<Credential>>);

impl CallerToken {
    pub(crate) fn new(token: Option<Credential>) -> Self {
        CallerToken(Mutex::new(token))
    }

    /// Replaces the token (the caller came back with a newer one).
    pub(crate) fn set(&self, token: Option<Credential>) {
        if token.is_some() {
            *self.0.lock().unwrap_or_else(|p| p.into_inner()) = token;
        }
    }

    fn get(&self) -> Option<Credential> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl std::fmt::Debug for CallerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallerToken(<redacted>)")
    }
}

impl TokenProvider for CallerToken {
    fn token(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move { self.get().map(|t| t.expose().to_owned()) })
    }

    /// The caller's token is the caller's to renew: a 401 goes back to it.
    fn on_unauthorized<'a>(&'a self, _: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        Box::pin(async { AuthDecision::GiveUp })
    }
}
