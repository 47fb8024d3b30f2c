//! Tokens already verified: a client sends the same access token with every
//! request, and checking its signature again each time costs far more than
//! a hash. Entries last until the token expires or the cache's time-to-live
//! runs out, whichever is first, and are void once the issuer's keys were
//! fetched again (a withdrawn key takes its tokens with it).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use toolport_server::Principal;

/// At most this many tokens are remembered.
const CAPACITY: usize = 10_000;

#[derive(Debug)]
struct Entry {
    principal: Principal,
    until: Instant,
    generation: u64,
}

/// Verified tokens by the SHA-256 of the token (the token itself is not kept).
#[derive(Debug, Default)]
pub(crate) struct VerifiedTokens {
    entries: Mutex<HashMap<[u8; 32], Entry>>,
}

fn key(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl VerifiedTokens {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The principal of a token verified under the keys of `generation`.
    pub(crate) fn get(&self, token: &str, generation: u64) -> Option<Principal> {
        let mut entries = self.lock();
        let k = key(token);
        let entry = entries.get(&k)?;
        if entry.generation == generation && entry.until > Instant::now() {
            return Some(entry.principal.clone());
        }
        entries.remove(&k);
        None
    }

    /// Remembers a verified token for at most `ttl`, and never past `exp`
    /// (seconds since the epoch).
    pub(crate) fn put(&self, token: &str, principal: &Principal, exp: Option<u64>, ttl: Duration, generation: u64) {
        if ttl.is_zero() {
            return;
        }
        let now_unix = jsonwebtoken::get_current_timestamp();
        let left = exp.map_or(ttl, |exp| Duration::from_secs(exp.saturating_sub(now_unix)).min(ttl));
        if left.is_zero() {
            return;
        }
        let mut entries = self.lock();
        if entries.len() >= CAPACITY {
            let now = Instant::now();
            entries.retain(|_, e| e.until > now && e.generation == generation);
            if entries.len() >= CAPACITY {
                return;
            }
        }
        entries.insert(
            key(token),
            Entry {
                principal: principal.clone(),
                until: Instant::now() + left,
                generation,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Principal {
        Principal {
            subject: "alice".into(),
            ..Principal::default()
        }
    }

    #[test]
    fn entries_end_with_the_token_the_ttl_or_the_keys() {
        let cache = VerifiedTokens::default();
        let later = jsonwebtoken::get_current_timestamp() + 3600;
        cache.put("t1", &alice(), Some(later), Duration::from_secs(60), 1);
        assert_eq!(cache.get("t1", 1), Some(alice()));
        assert_eq!(cache.get("t1", 2), None, "new keys void old verifications");
        assert_eq!(cache.get("t1", 1), None, "and the entry is gone");
        let past = jsonwebtoken::get_current_timestamp() - 1;
        cache.put("t2", &alice(), Some(past), Duration::from_secs(60), 1);
        assert_eq!(cache.get("t2", 1), None, "an expired token is not kept");
        cache.put("t3", &alice(), Some(later), Duration::ZERO, 1);
        assert_eq!(cache.get("t3", 1), None, "a zero TTL disables the cache");
        assert_eq!(cache.get("never-seen", 1), None);
    }
}
