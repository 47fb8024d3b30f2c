//! The bus of server events that listen streams, resource subscriptions and
//! `list_changed` notifications ride on.

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

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

/// A bus within this process: a tokio broadcast channel.
#[derive(Debug)]
pub struct MemoryEventBus {
    sender: broadcast::Sender<ServerEvent>,
}

impl MemoryEventBus {
    /// Events buffered per subscriber by default.
    pub const DEFAULT_CAPACITY: usize = 256;

    /// A bus that buffers `capacity` events per subscriber.
    pub fn new(capacity: usize) -> Self {
        MemoryEventBus {
            sender: broadcast::channel(capacity.max(1)).0,
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

    fn subscribe(&self) -> EventSubscription {
        EventSubscription::new(self.sender.subscribe())
    }
}
