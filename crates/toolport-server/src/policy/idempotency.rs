//! Idempotency keys for `tools/call`: the first call with a key runs; a
//! repeat with the same arguments gets the same result (waiting for it if the
//! first is still running); the same key with other arguments is refused.
//!
//! Keys are scoped to the principal and the tool, so one caller's key never
//! answers another caller's call. Only complete results are kept (a tool's
//! `isError` result included); a call that fails at the protocol level or is
//! cancelled frees its key for a retry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::sync::watch;
use toolport_protocol::tools::CallToolResult;

/// The state of one key.
#[derive(Debug)]
enum Slot {
    Running {
        digest: [u8; 32],
        done: watch::Receiver<Option<CallToolResult>>,
    },
    Done {
        digest: [u8; 32],
        result: CallToolResult,
        at: Instant,
    },
}

/// Where the keys live. In memory here; the trait-shaped surface (claim,
/// complete, abandon) is what a shared store implements.
#[derive(Debug)]
pub(crate) struct IdempotencyStore {
    slots: Mutex<HashMap<String, Slot>>,
    ttl: Duration,
}

/// What claiming a key gave.
#[derive(Debug)]
pub(crate) enum Claim {
    /// This call runs; report its end through the guard.
    First(ClaimGuard),
    /// A finished call's result.
    Done(CallToolResult),
    /// The key was used with other arguments.
    Conflict,
}

/// Held by the call that owns a key.
#[derive(Debug)]
pub(crate) struct ClaimGuard {
    store: Arc<IdempotencyStore>,
    key: String,
    digest: [u8; 32],
    done: Option<watch::Sender<Option<CallToolResult>>>,
}

impl ClaimGuard {
    /// Stores the result for repeats and wakes the waiting ones.
    pub(crate) fn complete(mut self, result: &CallToolResult) {
        let mut slots = self.store.lock();
        slots.insert(
            self.key.clone(),
            Slot::Done {
                digest: self.digest,
                result: result.clone(),
                at: Instant::now(),
            },
        );
        drop(slots);
        if let Some(done) = self.done.take() {
            let _ = done.send(Some(result.clone()));
        }
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        // Not completed: the key is free again, and waiters claim it anew.
        if self.done.take().is_some() {
            self.store.lock().remove(&self.key);
        }
    }
}

/// The digest that tells "the same arguments" from "other arguments".
pub(crate) fn digest(arguments: &serde_json::Value) -> [u8; 32] {
    // serde_json maps are sorted, so the encoding is canonical.
    Sha256::digest(serde_json::to_vec(arguments).unwrap_or_default()).into()
}

impl IdempotencyStore {
    pub(crate) fn new(ttl: Duration) -> Arc<Self> {
        Arc::new(IdempotencyStore {
            slots: Mutex::default(),
            ttl,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Claims `key` for a call with these arguments, waiting while another
    /// call with the key runs.
    pub(crate) async fn claim(self: &Arc<Self>, key: String, digest: [u8; 32]) -> Claim {
        loop {
            let mut running = {
                let mut slots = self.lock();
                self.expire(&mut slots, &key);
                match slots.get(&key) {
                    Some(Slot::Done { digest: d, result, .. }) => {
                        return if *d == digest {
                            Claim::Done(result.clone())
                        } else {
                            Claim::Conflict
                        };
                    }
                    Some(Slot::Running { digest: d, .. }) if *d != digest => return Claim::Conflict,
                    Some(Slot::Running { done, .. }) => done.clone(),
                    None => {
                        let (tx, rx) = watch::channel(None);
                        slots.insert(key.clone(), Slot::Running { digest, done: rx });
                        return Claim::First(ClaimGuard {
                            store: self.clone(),
                            key,
                            digest,
                            done: Some(tx),
                        });
                    }
                }
            };
            // Wait for the running call; if it is abandoned, claim again.
            if let Ok(finished) = running.wait_for(Option::is_some).await
                && let Some(result) = finished.clone()
            {
                return Claim::Done(result);
            }
        }
    }

    /// Drops the key's record if it has expired, and every expired record
    /// once the table grows.
    fn expire(&self, slots: &mut HashMap<String, Slot>, key: &str) {
        let expired = |s: &Slot| matches!(s, Slot::Done { at, .. } if at.elapsed() > self.ttl);
        if slots.get(key).is_some_and(expired) {
            slots.remove(key);
        }
        if slots.len() > 1024 {
            slots.retain(|_, s| !expired(s));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn first_runs_repeats_get_the_result_conflicts_are_refused() {
        let store = IdempotencyStore::new(Duration::from_secs(60));
        let args = digest(&json!({"a": 1}));
        let Claim::First(guard) = store.claim("k".into(), args).await else {
            panic!()
        };
        let waiter = tokio::spawn({
            let store = store.clone();
            async move { store.claim("k".into(), args).await }
        });
        assert!(matches!(
            store.claim("k".into(), digest(&json!({"a": 2}))).await,
            Claim::Conflict
        ));
        guard.complete(&CallToolResult::text("once"));
        let Claim::Done(result) = waiter.await.unwrap() else {
            panic!()
        };
        assert_eq!(result, CallToolResult::text("once"));
        assert!(matches!(store.claim("k".into(), args).await, Claim::Done(_)));
    }

    #[tokio::test]
    async fn an_abandoned_claim_frees_the_key() {
        let store = IdempotencyStore::new(Duration::from_secs(60));
        let args = digest(&json!({}));
        let Claim::First(guard) = store.claim("k".into(), args).await else {
            panic!()
        };
        let waiter = tokio::spawn({
            let store = store.clone();
            async move { matches!(store.claim("k".into(), args).await, Claim::First(_)) }
        });
        drop(guard);
        assert!(waiter.await.unwrap(), "the waiter takes over the key");
    }

    #[tokio::test]
    async fn results_expire() {
        let store = IdempotencyStore::new(Duration::ZERO);
        let args = digest(&json!({}));
        let Claim::First(guard) = store.claim("k".into(), args).await else {
            panic!()
        };
        guard.complete(&CallToolResult::text("x"));
        std::thread::sleep(Duration::from_millis(2));
        assert!(matches!(store.claim("k".into(), args).await, Claim::First(_)));
    }
}
