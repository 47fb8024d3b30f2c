//! Changes the server announces to connections and listeners.

use serde_json::json;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use toolport_protocol::jsonrpc::Notification;
use toolport_protocol::{prompts, resources, tools};

/// Something changed on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A tool was added, removed or replaced.
    ToolsChanged,
    /// A prompt was added, removed or replaced.
    PromptsChanged,
    /// A resource or template was added, removed or replaced.
    ResourcesChanged,
    /// The contents of this resource changed.
    ResourceUpdated(String),
}

impl ServerEvent {
    /// What a subscriber that fell behind must assume: every list changed.
    pub fn all_lists() -> Vec<ServerEvent> {
        vec![
            ServerEvent::ToolsChanged,
            ServerEvent::PromptsChanged,
            ServerEvent::ResourcesChanged,
        ]
    }

    /// The notification that announces this event.
    pub fn notification(&self) -> Notification {
        match self {
            ServerEvent::ToolsChanged => Notification::new(tools::LIST_CHANGED, None),
            ServerEvent::PromptsChanged => Notification::new(prompts::LIST_CHANGED, None),
            ServerEvent::ResourcesChanged => Notification::new(resources::LIST_CHANGED, None),
            ServerEvent::ResourceUpdated(uri) => Notification::new(resources::UPDATED, Some(json!({ "uri": uri }))),
        }
    }

    /// The next events of a subscription; `None` once the server is gone.
    /// A subscriber that fell behind gets [`ServerEvent::all_lists`].
    pub async fn next(events: &mut broadcast::Receiver<ServerEvent>) -> Option<Vec<ServerEvent>> {
        match events.recv().await {
            Ok(event) => Some(vec![event]),
            Err(RecvError::Lagged(_)) => Some(ServerEvent::all_lists()),
            Err(RecvError::Closed) => None,
        }
    }
}

/// Events buffered per subscriber; one that falls further behind is told
/// that every list changed, which is always a correct (if coarse) answer.
pub(crate) const EVENT_BUFFER: usize = 256;

pub(crate) fn channel() -> broadcast::Sender<ServerEvent> {
    broadcast::channel(EVENT_BUFFER).0
}
