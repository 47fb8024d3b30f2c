//! Changes the server announces to connections and listeners.

use tokio::sync::broadcast;

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
    pub(crate) fn all_lists() -> Vec<ServerEvent> {
        vec![
            ServerEvent::ToolsChanged,
            ServerEvent::PromptsChanged,
            ServerEvent::ResourcesChanged,
        ]
    }
}

/// Events buffered per subscriber; one that falls further behind is told
/// that every list changed, which is always a correct (if coarse) answer.
pub(crate) const EVENT_BUFFER: usize = 256;

pub(crate) fn channel() -> broadcast::Sender<ServerEvent> {
    broadcast::channel(EVENT_BUFFER).0
}
