//! Requests we sent and are waiting on: id allocation and routing each answer
//! to its waiter.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::value::RawValue;
use tokio::sync::oneshot;
use toolport_protocol::{ErrorObject, RequestId};

/// What a waiter receives: the raw result or the error object.
pub type Outcome = Result<Box<RawValue>, ErrorObject>;

/// The pending table. Ids are integers counting up from 1, so they are unique
/// among our outstanding requests for the life of the connection.
#[derive(Debug, Default)]
pub struct PendingRequests {
    next_id: AtomicI64,
    waiters: Mutex<HashMap<RequestId, oneshot::Sender<Outcome>>>,
}

impl PendingRequests {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty table whose first id is `after + 1`. Replicas that serve one
    /// conversation each start far apart (at random), so an answer reaching
    /// one of them never matches a request the other sent.
    pub fn counting_after(after: i64) -> Self {
        PendingRequests {
            next_id: AtomicI64::new(after),
            waiters: Mutex::default(),
        }
    }

    /// Allocates an id and a receiver for its answer.
    pub fn register(&self) -> (RequestId, oneshot::Receiver<Outcome>) {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        (id, rx)
    }

    /// Hands an answer to its waiter. `false` when nobody waits for that id
    /// (it timed out, was cancelled, or never existed).
    pub fn resolve(&self, id: &RequestId, outcome: Outcome) -> bool {
        match self.lock().remove(id) {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// Forgets a request (its waiter gave up).
    pub fn forget(&self, id: &RequestId) -> bool {
        self.lock().remove(id).is_some()
    }

    /// Fails every waiter: the connection is gone.
    pub fn close_all(&self) {
        self.lock().clear();
    }

    /// How many requests are outstanding.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is outstanding.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<Outcome>>> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (every operation is a single insert or remove), so poison is ignored.
        self.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }
}
