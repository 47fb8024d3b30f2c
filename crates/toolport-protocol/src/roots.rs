//! Roots (`client/roots`): the directories a client lets a server work in.

use serde::{Deserialize, Serialize};

use crate::meta::Meta;

/// Method of `roots/list`.
pub const LIST: &str = "roots/list";
/// Notification a handshake-era client sends when its roots change.
pub const LIST_CHANGED: &str = "notifications/roots/list_changed";

/// One root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `roots/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
