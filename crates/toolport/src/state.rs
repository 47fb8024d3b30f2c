//! `[state]`: where the state lives that replicas behind one load balancer
//! share, and the keys that seal `requestState`.
//!
//! ```toml
//! [state]
//! url = "redis://redis:6379"         # TOOLPORT_STATE_URL; unset: in memory, one replica
//! seal_keys = ["<base64 32 bytes>"]  # TOOLPORT_SEAL_KEYS="k1,k2": the first seals, all open
//! ```
//!
//! Without a URL every store is in this process's memory (the embedded
//! default). With one, sessions, SSE event logs, idempotency records, rate
//! buckets, the event bus and the relay between replicas live in Redis, and
//! the seal keys are required: a `requestState` sealed by one replica must
//! open on the others.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use toolport_redis::{RedisOptions, RedisState};
use toolport_server::state::{KeyRing, StateError};

/// The `[state]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StateSection {
    /// `redis://[user:password@]host[:port][/db]` (`TOOLPORT_STATE_URL`);
    /// none: every store in memory.
    #[serde(serialize_with = "hide_password")]
    pub url: Option<String>,
    /// Base64 32-byte keys that seal `requestState` (`TOOLPORT_SEAL_KEYS`,
    /// comma-separated): the first seals, all open.
    pub seal_keys: SealKeys,
    /// Put before every Redis key and channel, so that deployments can
    /// share one Redis.
    pub prefix: String,
}

impl Default for StateSection {
    fn default() -> Self {
        StateSection {
            url: None,
            seal_keys: SealKeys::default(),
            prefix: RedisOptions::default().prefix,
        }
    }
}

/// The seal keys, as configured: a list, or one comma-separated string
/// (as an environment variable gives them). Never printed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SealKeys(pub Vec<String>);

impl std::fmt::Debug for SealKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealKeys({} keys)", self.0.len())
    }
}

impl Serialize for SealKeys {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // `config check` prints the configuration: never the keys.
        serializer.collect_seq(self.0.iter().map(|_| "(hidden)"))
    }
}

impl<'de> Deserialize<'de> for SealKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            One(String),
            Many(Vec<String>),
        }
        let keys: Vec<String> = match Given::deserialize(deserializer)
            .map_err(|_| serde::de::Error::custom("expected a list of base64 keys, or one comma-separated string"))?
        {
            Given::One(text) => text.split(',').map(|k| k.trim().to_owned()).collect(),
            Given::Many(keys) => keys.into_iter().map(|k| k.trim().to_owned()).collect(),
        };
        Ok(SealKeys(keys.into_iter().filter(|k| !k.is_empty()).collect()))
    }
}

fn hide_password<S: Serializer>(url: &Option<String>, serializer: S) -> Result<S::Ok, S::Error> {
    match url {
        None => serializer.serialize_none(),
        Some(url) => serializer.serialize_str(&without_password(url)),
    }
}

/// The URL with its password (if any) replaced, for messages and printing.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, path) = rest.split_once('/').map_or((rest, None), |(a, p)| (a, Some(p)));
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
    let path = path.map(|p| format!("/{p}")).unwrap_or_default();
    format!("{scheme}://{user}:***@{host}{path}")
}

/// One decoded key and the id it travels under: the first 8 hex digits of
/// its SHA-256, the same on every replica and telling nothing of the key.
fn decode_key(text: &str) -> Option<(String, [u8; 32])> {
    let bytes = STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')))
        .ok()?;
    let key: [u8; 32] = bytes.try_into().ok()?;
    let digest = Sha256::digest(key);
    let id = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    Some((id, key))
}

impl StateSection {
    /// Checks the section: (key, value, expected) on the first problem.
    /// Keys are named by their place in the list, never shown.
    pub(crate) fn validate(&self) -> Result<(), (String, String, String)> {
        let bad = |key: &str, value: String, expected: &str| Err((key.to_owned(), value, expected.to_owned()));
        let mut ids = Vec::new();
        for (i, text) in self.seal_keys.0.iter().enumerate() {
            let place = format!("key {} of {} (not shown)", i + 1, self.seal_keys.0.len());
            match decode_key(text) {
                None => {
                    return bad(
                        "state.seal_keys",
                        place,
                        "base64 of 32 random bytes each, for example from `openssl rand -base64 32`",
                    );
                }
                Some((id, _)) if ids.contains(&id) => {
                    return bad("state.seal_keys", place, "each key once");
                }
                Some((id, _)) => ids.push(id),
            }
        }
        if let Some(url) = &self.url {
            if !url.starts_with("redis://") {
                let expected = if url.starts_with("rediss://") {
                    "redis://host:port (this build speaks plain Redis; put TLS in a sidecar such as stunnel)"
                } else {
                    "a Redis URL such as redis://127.0.0.1:6379"
                };
                return bad("state.url", format!("{:?}", without_password(url)), expected);
            }
            if self.seal_keys.0.is_empty() {
                return bad(
                    "state.seal_keys",
                    "(none)".into(),
                    "the keys that seal requestState, the same on every replica sharing state.url \
                     (TOOLPORT_SEAL_KEYS=<base64 32 bytes>, for example from `openssl rand -base64 32`): \
                     without them each replica seals with a random key and refuses the others' states",
                );
            }
        }
        if self.prefix.is_empty() || self.prefix.contains(char::is_whitespace) {
            return bad(
                "state.prefix",
                format!("{:?}", self.prefix),
                "a non-empty name without spaces",
            );
        }
        Ok(())
    }

    /// The key ring of the configured seal keys, if any (checked by `validate`).
    pub fn key_ring(&self) -> Option<KeyRing> {
        let mut keys = self.seal_keys.0.iter().filter_map(|k| decode_key(k));
        let (id, key) = keys.next()?;
        let mut ring = KeyRing::new(id, key).expect("hex ids are valid");
        for (id, key) in keys {
            ring = ring.with_key(id, key).expect("ids are unique (checked)");
        }
        Some(ring)
    }

    /// Opens the shared store, when a URL is configured. Redis need not be
    /// up yet: `/ready` fails until it is.
    pub fn open(&self) -> Result<Option<RedisState>, StateError> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        let options = RedisOptions {
            prefix: self.prefix.clone(),
            ..RedisOptions::default()
        };
        RedisState::open(url, options).map(Some)
    }
}

/// `/ready` fails while the shared state store does not answer: requests
/// that need it would fail.
#[derive(Debug)]
pub struct StateReadiness(pub RedisState);

#[async_trait::async_trait]
impl toolport_http::ReadinessCheck for StateReadiness {
    fn name(&self) -> &str {
        "state"
    }

    async fn check(&self) -> Result<(), String> {
        self.0.ping().await.map_err(|e| e.to_string())
    }
}
