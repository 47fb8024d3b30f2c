//! Messages between the replicas of one server, by topic: the client's
//! answer or cancellation for a request another replica runs, and word that
//! a stream another replica writes has new events.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};

use async_trait::async_trait;
use bytes::Bytes;
use tokio::sync::mpsc;

use super::StateError;

/// Messages a subscription buffers before newer ones are dropped (and
/// logged): its reader is expected to keep up, and every use of the relay
/// has a way to recover a dropped message (a stream reader reads the event
/// log, an answer's waiter times out).
pub const RELAY_BUFFER: usize = 256;

/// Sends messages to whoever subscribed to a topic, on this replica or (for
/// a shared relay) on any of them. Delivery is at most once: a message sent
/// while nobody subscribes, or while the connection to a shared relay is
/// down, is gone; callers that cannot lose it keep it elsewhere too.
#[async_trait]
pub trait Relay: Send + Sync + fmt::Debug + 'static {
    /// Sends `message` to every subscription of `topic`; returns how many
    /// received it (0: nobody listens). A shared relay counts replicas.
    async fn send(&self, topic: &str, message: Bytes) -> Result<usize, StateError>;
    /// Subscribes to `topic`. The subscription is in place when this
    /// returns: every message sent after that reaches it. Dropping it
    /// unsubscribes.
    async fn subscribe(&self, topic: &str) -> Result<RelaySubscription, StateError>;
    /// How many subscriptions `topic` has (a shared relay counts replicas).
    async fn subscribers(&self, topic: &str) -> Result<usize, StateError>;
}

/// One subscription to a topic: its messages in the order they were sent.
pub struct RelaySubscription {
    messages: mpsc::Receiver<Bytes>,
    /// Unsubscribes when dropped.
    _guard: Box<dyn Send + Sync>,
}

impl fmt::Debug for RelaySubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RelaySubscription").finish_non_exhaustive()
    }
}

impl RelaySubscription {
    /// A subscription reading `messages`; `guard` is dropped with it (a
    /// relay implementation unsubscribes there).
    pub fn new(messages: mpsc::Receiver<Bytes>, guard: impl Send + Sync + 'static) -> Self {
        RelaySubscription {
            messages,
            _guard: Box::new(guard),
        }
    }

    /// The next message; `None` once the relay is gone.
    pub async fn next(&mut self) -> Option<Bytes> {
        self.messages.recv().await
    }
}

type Subscribers = HashMap<String, Vec<(u64, mpsc::Sender<Bytes>)>>;

/// A relay within this process: for one replica (where nothing ever needs
/// relaying) and for tests of several servers in one process.
#[derive(Debug, Default)]
pub struct MemoryRelay {
    inner: Arc<MemoryTopics>,
}

#[derive(Debug, Default)]
struct MemoryTopics {
    topics: Mutex<Subscribers>,
    next_id: std::sync::atomic::AtomicU64,
}

impl MemoryTopics {
    fn lock(&self) -> std::sync::MutexGuard<'_, Subscribers> {
        self.topics.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes a memory subscription when dropped.
struct Unsubscribe {
    topics: Weak<MemoryTopics>,
    topic: String,
    id: u64,
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        if let Some(topics) = self.topics.upgrade() {
            let mut map = topics.lock();
            if let Some(subscribers) = map.get_mut(&self.topic) {
                subscribers.retain(|(id, _)| *id != self.id);
                if subscribers.is_empty() {
                    map.remove(&self.topic);
                }
            }
        }
    }
}

impl MemoryRelay {
    /// No subscriptions yet.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Hands a message to a subscriber without waiting; a full buffer drops it.
pub fn offer(topic: &str, subscriber: &mpsc::Sender<Bytes>, message: Bytes) -> bool {
    match subscriber.try_send(message) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(_)) => {
            tracing::warn!(topic, "a relay subscriber fell behind; a message was dropped");
            false
        }
        Err(mpsc::error::TrySendError::Closed(_)) => false,
    }
}

#[async_trait]
impl Relay for MemoryRelay {
    async fn send(&self, topic: &str, message: Bytes) -> Result<usize, StateError> {
        let topics = self.inner.lock();
        let Some(subscribers) = topics.get(topic) else {
            return Ok(0);
        };
        Ok(subscribers
            .iter()
            .filter(|(_, tx)| offer(topic, tx, message.clone()))
            .count())
    }

    async fn subscribe(&self, topic: &str) -> Result<RelaySubscription, StateError> {
        let (tx, rx) = mpsc::channel(RELAY_BUFFER);
        let id = self.inner.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.lock().entry(topic.to_owned()).or_default().push((id, tx));
        let guard = Unsubscribe {
            topics: Arc::downgrade(&self.inner),
            topic: topic.to_owned(),
            id,
        };
        Ok(RelaySubscription::new(rx, guard))
    }

    async fn subscribers(&self, topic: &str) -> Result<usize, StateError> {
        Ok(self.inner.lock().get(topic).map_or(0, Vec::len))
    }
}
