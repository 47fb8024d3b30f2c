//! Idempotency records of `tools/call`: which key ran with which arguments,
//! and its result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio::time::Instant;
use toolport_protocol::tools::CallToolResult;

use super::StateError;

/// The digest that tells "the same arguments" from "other arguments".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArgumentsDigest(pub [u8; 32]);

impl ArgumentsDigest {
    /// The digest of a call's arguments.
    pub fn of(arguments: &serde_json::Value) -> Self {
        // serde_json maps are sorted, so the encoding is canonical.
        ArgumentsDigest(Sha256::digest(serde_json::to_vec(arguments).unwrap_or_default()).into())
    }
}

/// The claim on a key held by the call that runs it: who holds it and for
/// how long. When the lease runs out (its holder died, say, on another
/// replica), the key may be claimed again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimTicket {
    /// The key (scoped to principal and tool by the caller).
    pub key: String,
    /// Who holds the claim: random, one per claim.
    pub owner: String,
    /// The arguments of the call that runs.
    pub digest: ArgumentsDigest,
    /// How long the claim holds without being completed.
    pub lease: Duration,
}

/// What claiming a key gave.
#[derive(Debug)]
pub enum Claim {
    /// This call runs; complete or abandon the ticket.
    First(ClaimTicket),
    /// A finished call's result.
    Done(CallToolResult),
    /// The key was used with other arguments.
    Conflict,
}

/// Idempotency records by key. The key is scoped by the caller to the
/// principal and the tool (so one caller's key never answers another's
/// call); only complete results are kept, for the store's time to live.
#[async_trait]
pub trait IdempotencyStore: Send + Sync + std::fmt::Debug + 'static {
    /// Claims `key` for a call with these arguments for `lease`. While
    /// another claim with the same arguments runs, waits for it: its result
    /// if it completes, a new claim if it is abandoned or its lease ends.
    async fn claim(&self, key: &str, digest: ArgumentsDigest, lease: Duration) -> Result<Claim, StateError>;
    /// Stores the result of a claimed call for repeats and wakes its waiters.
    async fn complete(&self, ticket: &ClaimTicket, result: &CallToolResult) -> Result<(), StateError>;
    /// Frees a claimed key (the call failed or was cancelled) for a retry.
    async fn abandon(&self, ticket: &ClaimTicket) -> Result<(), StateError>;
}

/// Held by the call that owns a key: completes it, or abandons it when
/// dropped without completing (a cancelled or failed call).
#[derive(Debug)]
pub struct ClaimGuard {
    store: Arc<dyn IdempotencyStore>,
    ticket: Option<ClaimTicket>,
}

impl ClaimGuard {
    /// Guards a ticket that `store` gave.
    pub fn new(store: Arc<dyn IdempotencyStore>, ticket: ClaimTicket) -> Self {
        ClaimGuard {
            store,
            ticket: Some(ticket),
        }
    }

    /// Stores the result for repeats and wakes the waiting ones.
    pub async fn complete(mut self, result: &CallToolResult) -> Result<(), StateError> {
        let ticket = self.ticket.take().expect("a guard completes once");
        self.store.complete(&ticket, result).await
    }

    /// Frees the key for a retry (the call failed).
    pub async fn abandon(mut self) -> Result<(), StateError> {
        let ticket = self.ticket.take().expect("a guard finishes once");
        self.store.abandon(&ticket).await
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        // Not completed: free the key. Outside a runtime nothing can run the
        // store's call; the lease then frees the key when it ends.
        if let Some(ticket) = self.ticket.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let store = self.store.clone();
            runtime.spawn(async move {
                if let Err(e) = store.abandon(&ticket).await {
                    tracing::warn!(error = %e, "an idempotency key was not freed; its lease will free it");
                }
            });
        }
    }
}

/// The state of one key.
#[derive(Debug)]
enum Slot {
    Running {
        owner: String,
        digest: ArgumentsDigest,
        until: Instant,
        done: watch::Sender<Option<CallToolResult>>,
    },
    Done {
        digest: ArgumentsDigest,
        result: CallToolResult,
        at: Instant,
    },
}

/// Records in this process's memory. Times are on tokio's clock, so tests
/// with paused time control leases and time to live.
#[derive(Debug)]
pub struct MemoryIdempotencyStore {
    slots: Mutex<HashMap<String, Slot>>,
    ttl: Duration,
}

/// Records beyond which every expired one is dropped on the next claim.
const SWEEP_ABOVE: usize = 1024;

impl MemoryIdempotencyStore {
    /// Keeps results for `ttl`.
    pub fn new(ttl: Duration) -> Self {
        MemoryIdempotencyStore {
            slots: Mutex::default(),
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops the key's record if it has expired, and every expired record
    /// once the table grows.
    fn expire(&self, slots: &mut HashMap<String, Slot>, key: &str, now: Instant) {
        let expired = |s: &Slot| match s {
            Slot::Done { at, .. } => now.duration_since(*at) > self.ttl,
            Slot::Running { until, .. } => *until <= now,
        };
        if slots.get(key).is_some_and(expired) {
            slots.remove(key);
        }
        if slots.len() > SWEEP_ABOVE {
            slots.retain(|_, s| !expired(s));
        }
    }
}

fn new_owner() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[async_trait]
impl IdempotencyStore for MemoryIdempotencyStore {
    async fn claim(&self, key: &str, digest: ArgumentsDigest, lease: Duration) -> Result<Claim, StateError> {
        loop {
            let (mut running, until) = {
                let mut slots = self.lock();
                let now = Instant::now();
                self.expire(&mut slots, key, now);
                match slots.get(key) {
                    Some(Slot::Done { digest: d, result, .. }) => {
                        return Ok(if *d == digest {
                            Claim::Done(result.clone())
                        } else {
                            Claim::Conflict
                        });
                    }
                    Some(Slot::Running { digest: d, .. }) if *d != digest => return Ok(Claim::Conflict),
                    Some(Slot::Running { done, until, .. }) => (done.subscribe(), *until),
                    None => {
                        let owner = new_owner();
                        slots.insert(
                            key.to_owned(),
                            Slot::Running {
                                owner: owner.clone(),
                                digest,
                                until: now + lease,
                                done: watch::channel(None).0,
                            },
                        );
                        return Ok(Claim::First(ClaimTicket {
                            key: key.to_owned(),
                            owner,
                            digest,
                            lease,
                        }));
                    }
                }
            };
            // Wait for the running call, at most until its lease ends; if it
            // is abandoned or its lease ends, claim again.
            let finished = tokio::time::timeout_at(until, running.wait_for(Option::is_some)).await;
            if let Ok(Ok(finished)) = finished
                && let Some(result) = finished.clone()
            {
                return Ok(Claim::Done(result));
            }
        }
    }

    async fn complete(&self, ticket: &ClaimTicket, result: &CallToolResult) -> Result<(), StateError> {
        let mut slots = self.lock();
        let ours = match slots.get(&ticket.key) {
            Some(Slot::Running { owner, .. }) => *owner == ticket.owner,
            Some(Slot::Done { .. }) => false,
            None => true,
        };
        if !ours {
            return Ok(());
        }
        let done = Slot::Done {
            digest: ticket.digest,
            result: result.clone(),
            at: Instant::now(),
        };
        if let Some(Slot::Running { done, .. }) = slots.insert(ticket.key.clone(), done) {
            done.send_replace(Some(result.clone()));
        }
        Ok(())
    }

    async fn abandon(&self, ticket: &ClaimTicket) -> Result<(), StateError> {
        let mut slots = self.lock();
        if matches!(slots.get(&ticket.key), Some(Slot::Running { owner, .. }) if *owner == ticket.owner) {
            // Dropping the sender wakes the waiters, which claim anew.
            slots.remove(&ticket.key);
        }
        Ok(())
    }
}
