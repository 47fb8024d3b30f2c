//! The issuer's signing keys: cached, refreshed when old, and refetched when
//! a token names a key the cache does not know (a rotation), at most once per
//! `refetch_interval` so forged key ids cannot turn this server into a
//! flood against the issuer.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{Jwk, JwkSet};

use super::config::JwksSource;
use crate::http::{self, HttpClient};

/// Cached keys of one issuer.
#[derive(Debug)]
pub(crate) struct JwksCache {
    source: JwksSource,
    http: Arc<dyn HttpClient>,
    refetch_interval: Duration,
    max_age: Duration,
    state: Mutex<CacheState>,
    /// One fetch at a time; the others wait and read its result.
    fetching: tokio::sync::Mutex<()>,
}

/// A published key and, when its parameters are usable, the verifying key
/// made from them once rather than on every request.
#[derive(Clone)]
pub(crate) struct CachedKey {
    pub(crate) jwk: Jwk,
    pub(crate) key: Option<DecodingKey>,
}

impl std::fmt::Debug for CachedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedKey")
            .field("kid", &self.jwk.common.key_id)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Keys {
    keys: Vec<CachedKey>,
}

impl Keys {
    fn new(set: &JwkSet) -> Self {
        Keys {
            keys: set
                .keys
                .iter()
                .map(|jwk| CachedKey {
                    key: DecodingKey::from_jwk(jwk).ok(),
                    jwk: jwk.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Default)]
struct CacheState {
    keys: Option<Arc<Keys>>,
    fetched_at: Option<Instant>,
    attempted_at: Option<Instant>,
    fetches: u64,
}

/// Why no key could be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KeyError {
    #[error("the token names a signing key the issuer does not publish")]
    Unknown,
    #[error("the issuer's keys could not be fetched: {0}")]
    Unavailable(String),
}

impl JwksCache {
    pub(crate) fn new(
        source: JwksSource,
        http: Arc<dyn HttpClient>,
        refetch_interval: Duration,
        max_age: Duration,
    ) -> Self {
        let state = match &source {
            JwksSource::Static(set) => CacheState {
                keys: Some(Arc::new(Keys::new(set))),
                ..CacheState::default()
            },
            JwksSource::Url(_) => CacheState::default(),
        };
        JwksCache {
            source,
            http,
            refetch_interval,
            max_age,
            state: Mutex::new(state),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many times the keys were fetched (for tests and metrics); also
    /// the generation of the keys, which voids verifications made with older ones.
    pub(crate) fn fetches(&self) -> u64 {
        self.state().fetches
    }

    /// The keys that may have signed a token with this `kid`: the one with
    /// that id, or, for a token without one, every key.
    pub(crate) async fn candidates(&self, kid: Option<&str>) -> Result<Vec<CachedKey>, KeyError> {
        let JwksSource::Url(url) = &self.source else {
            let keys = self.state().keys.clone().unwrap_or_default();
            return pick(&keys, kid).ok_or(KeyError::Unknown);
        };
        let (keys, stale) = {
            let state = self.state();
            let stale = state.fetched_at.is_none_or(|t| t.elapsed() >= self.max_age);
            (state.keys.clone(), stale)
        };
        if let Some(keys) = &keys
            && !stale
            && let Some(found) = pick(keys, kid)
        {
            return Ok(found);
        }
        // Unknown key or old cache: fetch, unless a fetch happened too recently.
        let _one_at_a_time = self.fetching.lock().await;
        let may_fetch = {
            let state = self.state();
            // Someone else may have fetched while we waited.
            if let Some(keys) = &state.keys
                && state.fetched_at.is_some_and(|t| t.elapsed() < self.max_age)
                && let Some(found) = pick(keys, kid)
            {
                return Ok(found);
            }
            state.attempted_at.is_none_or(|t| t.elapsed() >= self.refetch_interval)
        };
        if may_fetch {
            self.fetch(url).await?;
        } else {
            tracing::debug!("unknown signing key; JWKS refetch suppressed by the rate limit");
        }
        let keys = self.state().keys.clone();
        keys.as_deref().and_then(|k| pick(k, kid)).ok_or(KeyError::Unknown)
    }

    async fn fetch(&self, url: &str) -> Result<(), KeyError> {
        self.state().attempted_at = Some(Instant::now());
        let outcome = async {
            let request = http::get_json(url).map_err(|e| e.to_string())?;
            let response = self.http.send(request).await.map_err(|e| e.to_string())?;
            if !response.status().is_success() {
                return Err(format!("{url} answered {}", response.status()));
            }
            serde_json::from_slice::<JwkSet>(response.body()).map_err(|e| format!("{url}: not a JWK set: {e}"))
        }
        .await;
        let mut state = self.state();
        match outcome {
            Ok(set) => {
                tracing::debug!(keys = set.keys.len(), "JWKS fetched");
                state.keys = Some(Arc::new(Keys::new(&set)));
                state.fetched_at = Some(Instant::now());
                state.fetches += 1;
                Ok(())
            }
            // Keep serving the keys we had: the issuer may be down briefly.
            Err(why) if state.keys.is_some() => {
                tracing::warn!(%why, "JWKS refresh failed; keeping the cached keys");
                Ok(())
            }
            Err(why) => Err(KeyError::Unavailable(why)),
        }
    }
}

fn pick(keys: &Keys, kid: Option<&str>) -> Option<Vec<CachedKey>> {
    match kid {
        Some(kid) => keys
            .keys
            .iter()
            .find(|k| k.jwk.common.key_id.as_deref() == Some(kid))
            .map(|k| vec![k.clone()]),
        None if keys.keys.is_empty() => None,
        None => Some(keys.keys.clone()),
    }
}
