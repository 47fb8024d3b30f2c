//! The bus of server events that listen streams, resource subscriptions and
//! `list_changed` notifications ride on.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use crate::events::ServerEvent;

/// Carries [`ServerEvent`]s to every subscriber, on this replica or (for a
/// shared bus) on all of them.
///
/// Publishing never waits: registries announce changes from synchronous
/// code. A shared bus queues the event for its connection and delivers it
/// to its subscribers through [`EventSubscription::new`].
pub trait EventBus: Send + Sync + std::fmt::Debug + 'static {
    /// Announces an event.
    fn publish(&self, event: ServerEvent);
    /// Announces an event that every replica may observe on its own (a file
    /// changed in a folder they all watch): `version` names the change (a
    /// file's modification time and size, say), and the bus delivers each
    /// (event, version) once within [`ONCE_WINDOW`], however many replicas
    /// announce it. Two changes with different versions are two events.
    fn publish_once(&self, event: ServerEvent, version: &str);
    /// Every event published from now on.
    fn subscribe(&self) -> EventSubscription;
}

/// One subscriber's events, in the order they were published.
#[derive(Debug)]
pub struct EventSubscription {
    events: broadcast::Receiver<ServerEvent>,
}

impl EventSubscription {
    /// The subscription that reads this channel; its capacity is how far a
    /// subscriber may fall behind before it is told that every list changed.
    pub fn new(events: broadcast::Receiver<ServerEvent>) -> Self {
        EventSubscription { events }
    }

    /// The next events; `None` once the bus is gone. A subscriber that fell
    /// behind gets [`ServerEvent::all_lists`], which is always a correct (if
    /// coarse) answer.
    pub async fn next(&mut self) -> Option<Vec<ServerEvent>> {
        match self.events.recv().await {
            Ok(event) => Some(vec![event]),
            Err(RecvError::Lagged(_)) => Some(ServerEvent::all_lists()),
            Err(RecvError::Closed) => None,
        }
    }
}

/// How long a bus remembers an announced (event, version), so that the
/// other replicas' announcements of the same change are dropped: longer than
/// the replicas take to notice one change, however far apart.
pub const ONCE_WINDOW: Duration = Duration::from_secs(60);

/// The key under which a bus remembers an announced (event, version).
pub fn once_key(event: &ServerEvent, version: &str) -> String {
    let event = serde_json::to_string(event).unwrap_or_default();
    format!("{event}@{version}")
}

/// A bus within this process: a tokio broadcast channel.
#[derive(Debug)]
pub struct MemoryEventBus {
    sender: broadcast::Sender<ServerEvent>,
    /// What `publish_once` announced recently, and when.
    announced: Mutex<HashMap<String, Instant>>,
}

/// Remembered announcements beyond which the expired ones are dropped.
const FORGET_ABOVE: usize = 1024;

impl MemoryEventBus {
    /// Events buffered per subscriber by default.
    pub const DEFAULT_CAPACITY: usize = 256;

    /// A bus that buffers `capacity` events per subscriber.
    pub fn new(capacity: usize) -> Self {
        MemoryEventBus {
            sender: broadcast::channel(capacity.max(1)).0,
            announced: Mutex::default(),
        }
    }
}

impl Default for MemoryEventBus {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

impl EventBus for MemoryEventBus {
    fn publish(&self, event: ServerEvent) {
        // Nobody listening is fine: there is nobody to tell.
        let _ = self.sender.send(event);
    }

    fn publish_once(&self, event: ServerEvent, version: &str) {
        let now = Instant::now();
        let fresh = {
            let mut announced = self.announced.lock().unwrap_or_else(|p| p.into_inner());
            if announced.len() > FORGET_ABOVE {
                announced.retain(|_, at| now.duration_since(*at) < ONCE_WINDOW);
            }
            let key = once_key(&event, version);
            match announced.get(&key) {
                Some(at) if now.duration_since(*at) < ONCE_WINDOW => false,
                _ => {
                    announced.insert(key, now);
                    true
                }
            }
        };
        if fresh {
            self.publish(event);
        }
    }

    fn subscribe(&self) -> EventSubscription {
        EventSubscription::new(self.sender.subscribe())
    }
}
