//! Handshake-era requests served without sessions (`sessions = false`,
//! `toolport serve --stateless`): no session's exchange carries their
//! client's `notifications/cancelled`, so they are kept here, by principal
//! and request id, while they run. A cancellation from the same principal
//! stops the matching calls running on this process.
//!
//! What holds across replicas: nothing more. A cancellation that reaches
//! another replica than the one running the call finds nothing there and
//! is dropped, as `notifications/cancelled` may be (`basic/utilities/cancellation`:
//! the sender must not rely on it); the call then runs to its end or its
//! deadline. Without authentication every caller is the same principal, so
//! a cancellation stops every unauthenticated call of that id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{Notification, RequestId};
use toolport_protocol::progress::{CANCELLED, CancelledNotificationParams};

/// Who sent a call and its id.
type Key = (Option<String>, RequestId);

/// The session-less handshake-era calls running on this process.
#[derive(Debug, Default)]
pub(crate) struct SessionlessCalls {
    running: Mutex<HashMap<Key, Vec<(u64, CancellationToken)>>>,
    serial: AtomicU64,
}

/// Keeps a call in the table while it runs.
#[derive(Debug)]
pub(crate) struct Running {
    calls: Arc<SessionlessCalls>,
    key: Key,
    serial: u64,
}

impl SessionlessCalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Vec<(u64, CancellationToken)>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes a call of `owner` with this id until the guard is dropped;
    /// cancelling it fires `cancel`.
    pub(crate) fn begin(self: &Arc<Self>, owner: Option<String>, id: RequestId, cancel: CancellationToken) -> Running {
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        let key = (owner, id);
        self.lock().entry(key.clone()).or_default().push((serial, cancel));
        Running {
            calls: self.clone(),
            key,
            serial,
        }
    }

    /// Applies a `notifications/cancelled` of `owner`: how many calls it stopped.
    pub(crate) fn cancel(&self, owner: Option<&str>, notification: &Notification) -> usize {
        if notification.method != CANCELLED {
            return 0;
        }
        let Some(id) = notification
            .params
            .clone()
            .and_then(|p| serde_json::from_value::<CancelledNotificationParams>(p).ok())
            .and_then(|p| p.request_id)
        else {
            return 0;
        };
        let key = (owner.map(str::to_owned), id);
        let running = self.lock();
        let stopped = running.get(&key).map_or(0, |calls| {
            calls.iter().for_each(|(_, token)| token.cancel());
            calls.len()
        });
        if stopped == 0 {
            tracing::debug!(id = %key.1, "a cancellation for no call running here without a session");
        }
        stopped
    }

    /// How many calls are running.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self.calls.lock();
        if let Some(calls) = running.get_mut(&self.key) {
            calls.retain(|(serial, _)| *serial != self.serial);
            if calls.is_empty() {
                running.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cancelled(id: serde_json::Value) -> Notification {
        Notification::new(CANCELLED, Some(json!({ "requestId": id })))
    }

    #[test]
    fn a_cancellation_stops_the_calls_of_its_principal_and_id_only() {
        let calls = Arc::new(SessionlessCalls::default());
        let (a, b, c) = (
            CancellationToken::new(),
            CancellationToken::new(),
            CancellationToken::new(),
        );
        let alice = calls.begin(Some("alice".into()), RequestId::Number(1), a.clone());
        let bob = calls.begin(Some("bob".into()), RequestId::Number(1), b.clone());
        let other_id = calls.begin(Some("alice".into()), RequestId::Number(2), c.clone());
        assert_eq!(calls.cancel(Some("alice"), &cancelled(json!(1))), 1);
        assert!(a.is_cancelled() && !b.is_cancelled() && !c.is_cancelled());
        // Malformed or foreign notifications stop nothing.
        assert_eq!(calls.cancel(Some("alice"), &cancelled(json!({"x": 1}))), 0);
        assert_eq!(calls.cancel(None, &cancelled(json!(1))), 0);
        let progress = Notification::new("notifications/progress", Some(json!({"requestId": 2})));
        assert_eq!(calls.cancel(Some("alice"), &progress), 0);
        drop((alice, bob, other_id));
        assert_eq!(calls.len(), 0);
        assert_eq!(calls.cancel(Some("bob"), &cancelled(json!(1))), 0);
    }
}
