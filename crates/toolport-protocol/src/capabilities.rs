//! Capabilities and implementation info exchanged by both sides
//! (`basic/lifecycle`, `server/discover`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An empty or free-form capability object (`{}` means "supported").
pub type CapabilityObject = Map<String, Value>;

/// What a client can do. `None` means the capability is not declared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// The client can answer `roots/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client can answer `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<CapabilityObject>,
    /// The client can answer `elicitation/create`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Tasks (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
}

/// The roots capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// The client sends `notifications/roots/list_changed` (handshake era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The elicitation capability. `{}` on its own means form mode only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitationCapability {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<CapabilityObject>,
    /// URL mode (2025-11-25 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<CapabilityObject>,
}

impl ClientCapabilities {
    /// Whether the client takes form-mode elicitation requests.
    pub fn supports_form_elicitation(&self) -> bool {
        // An empty `elicitation: {}` declares form mode (`client/elicitation`).
        self.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }
    /// Whether the client takes sampling requests.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }
    /// Whether the client answers `roots/list`.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }
}

/// What a server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// The server sends `notifications/message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<CapabilityObject>,
    /// The server answers `completion/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<CapabilityObject>,
    /// The server has prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// The server has resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server has tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Tasks (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
}

/// A capability whose only option is list-change notifications.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// The server notifies when the list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The resources capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server accepts subscriptions to single resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server notifies when the list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// An icon for a server, tool, resource or prompt (2025-11-25 on).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// The MIME type, when the URI does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// The name and version of an MCP implementation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its web site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Default::default()
        }
    }
}
