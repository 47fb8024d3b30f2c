//! Changes the server announces to connections and listeners.

use serde::{Deserialize, Serialize};
use serde_json::json;
use toolport_protocol::jsonrpc::Notification;
use toolport_protocol::{prompts, resources, tools};

/// Something changed on the server. Serializable, for a bus shared by
/// replicas (see [`crate::state::EventBus`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", content = "uri", rename_all = "camelCase")]
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_travel_as_json() {
        for (event, text) in [
            (ServerEvent::ToolsChanged, r#"{"event":"toolsChanged"}"#),
            (
                ServerEvent::ResourceUpdated("mem://a".into()),
                r#"{"event":"resourceUpdated","uri":"mem://a"}"#,
            ),
        ] {
            assert_eq!(serde_json::to_string(&event).unwrap(), text);
            assert_eq!(serde_json::from_str::<ServerEvent>(text).unwrap(), event);
        }
    }
}
