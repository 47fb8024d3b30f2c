//! Results kept by their cache hints (2026-07-28 `server/utilities/caching`):
//! a list or a read whose result says `ttlMs` is answered from here until
//! it expires, or until the server says the list or the resource changed.
//!
//! The cache is the client's own and a client speaks for one caller, so
//! `private` results are kept like `public` ones; it is never shared
//! between clients. It is bounded: past its capacity, the entry closest to
//! expiry goes first.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use toolport_protocol::{prompts, resources, tools};

/// The methods whose results carry cache hints.
const CACHEABLE: &[&str] = &[
    tools::LIST,
    prompts::LIST,
    resources::LIST,
    resources::TEMPLATES_LIST,
    resources::READ,
];

/// Longest a result is kept whatever its hint says: a server's mistake
/// (a `ttlMs` of years) must not freeze what the client sees.
const MAX_TTL: Duration = Duration::from_secs(3600);

#[derive(Debug)]
struct Entry {
    value: Value,
    expires: Instant,
    method: &'static str,
    uri: Option<String>,
}

/// Cached results by method and params.
#[derive(Debug)]
pub(crate) struct ResultCache {
    capacity: usize,
    entries: Mutex<HashMap<String, Entry>>,
}

impl ResultCache {
    /// A cache of at most `capacity` results; 0 keeps none.
    pub(crate) fn new(capacity: usize) -> Self {
        ResultCache {
            capacity,
            entries: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The key of a cacheable request: its method and params without
    /// `_meta` (serde_json's maps are sorted, so equal params give one key).
    pub(crate) fn key(method: &str, params: &Map<String, Value>) -> Option<String> {
        if !CACHEABLE.contains(&method) {
            return None;
        }
        let mut params = params.clone();
        params.remove("_meta");
        Some(format!("{method} {}", Value::Object(params)))
    }

    /// A fresh result for `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        let mut entries = self.lock();
        match entries.get(key) {
            Some(entry) if entry.expires > Instant::now() => Some(entry.value.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `value` if its hints allow: a `ttlMs` above 0.
    pub(crate) fn put(&self, key: String, method: &str, params: &Map<String, Value>, value: &Value) {
        let Some(ttl) = value.get("ttlMs").and_then(Value::as_u64).filter(|ms| *ms > 0) else {
            return;
        };
        let Some(method) = CACHEABLE.iter().copied().find(|m| *m == method) else {
            return;
        };
        if self.capacity == 0 {
            return;
        }
        let now = Instant::now();
        let mut entries = self.lock();
        entries.retain(|_, e| e.expires > now);
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            let soonest = entries.iter().min_by_key(|(_, e)| e.expires).map(|(k, _)| k.clone());
            if let Some(soonest) = soonest {
                entries.remove(&soonest);
            }
        }
        let uri = params.get("uri").and_then(Value::as_str).map(str::to_owned);
        let expires = now + Duration::from_millis(ttl).min(MAX_TTL);
        entries.insert(
            key,
            Entry {
                value: value.clone(),
                expires,
                method,
                uri,
            },
        );
    }

    /// Forgets what a change notification makes stale.
    pub(crate) fn invalidate(&self, notification: &str, uri: Option<&str>) {
        let stale: &[&str] = match notification {
            tools::LIST_CHANGED => &[tools::LIST],
            prompts::LIST_CHANGED => &[prompts::LIST],
            resources::LIST_CHANGED => &[resources::LIST, resources::TEMPLATES_LIST],
            resources::UPDATED => &[resources::READ],
            _ => return,
        };
        self.lock().retain(|_, e| {
            let hit = stale.contains(&e.method) && (notification != resources::UPDATED || e.uri.as_deref() == uri);
            !hit
        });
    }

    /// How many results are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn results_are_kept_by_their_hints_and_forgotten_when_they_change() {
        let cache = ResultCache::new(8);
        let read = params(json!({"uri": "file:///a", "_meta": {"x": 1}}));
        let key = ResultCache::key(resources::READ, &read).unwrap();
        // `_meta` is not part of the key.
        assert_eq!(
            ResultCache::key(resources::READ, &params(json!({"uri": "file:///a"}))),
            Some(key.clone())
        );
        assert_eq!(
            ResultCache::key(tools::CALL, &read),
            None,
            "tool calls are never cached"
        );
        cache.put(
            key.clone(),
            resources::READ,
            &read,
            &json!({"contents": [], "ttlMs": 0}),
        );
        assert_eq!(cache.get(&key), None, "ttlMs 0: not kept");
        cache.put(
            key.clone(),
            resources::READ,
            &read,
            &json!({"contents": [], "cacheScope": "public"}),
        );
        assert_eq!(cache.get(&key), None, "no ttlMs: not kept");
        let fresh = json!({"contents": [1], "ttlMs": 60_000, "cacheScope": "private"});
        cache.put(key.clone(), resources::READ, &read, &fresh);
        assert_eq!(cache.get(&key), Some(fresh));
        cache.invalidate(resources::UPDATED, Some("file:///other"));
        assert!(cache.get(&key).is_some(), "another resource changed");
        cache.invalidate(resources::UPDATED, Some("file:///a"));
        assert_eq!(cache.get(&key), None);
        let list = params(json!({}));
        let tools_key = ResultCache::key(tools::LIST, &list).unwrap();
        cache.put(
            tools_key.clone(),
            tools::LIST,
            &list,
            &json!({"tools": [], "ttlMs": 60_000}),
        );
        cache.invalidate(prompts::LIST_CHANGED, None);
        assert!(cache.get(&tools_key).is_some());
        cache.invalidate(tools::LIST_CHANGED, None);
        assert_eq!(cache.get(&tools_key), None);
    }

    #[test]
    fn the_cache_is_bounded_and_keeps_what_lives_longest() {
        let cache = ResultCache::new(3);
        for i in 0..10u64 {
            let p = params(json!({"uri": format!("file:///{i}")}));
            let key = ResultCache::key(resources::READ, &p).unwrap();
            cache.put(key, resources::READ, &p, &json!({"contents": [], "ttlMs": 1000 + i}));
            assert!(cache.len() <= 3);
        }
        // The ones that live longest stayed.
        let last = params(json!({"uri": "file:///9"}));
        assert!(cache.get(&ResultCache::key(resources::READ, &last).unwrap()).is_some());
        let first = params(json!({"uri": "file:///0"}));
        assert!(cache.get(&ResultCache::key(resources::READ, &first).unwrap()).is_none());
        let none = ResultCache::new(0);
        let key = ResultCache::key(resources::READ, &last).unwrap();
        none.put(key.clone(), resources::READ, &last, &json!({"ttlMs": 5000}));
        assert_eq!(none.get(&key), None);
    }
}
