//! Opening a conversation: the handshake era's `initialize` (`basic/lifecycle`)
//! and 2026-07-28's `server/discover` (`server/discover`).

use serde::{Deserialize, Serialize};

use crate::capabilities::{ClientCapabilities, Implementation, ServerCapabilities};
use crate::meta::Meta;
use crate::result::{CacheScope, ResultType, mcp_result};

/// Method of `initialize` (handshake era).
pub const INITIALIZE: &str = "initialize";
/// Notification that ends the handshake.
pub const INITIALIZED: &str = "notifications/initialized";
/// Method of `ping` (handshake era).
pub const PING: &str = "ping";
/// Method of `server/discover` (2026-07-28).
pub const DISCOVER: &str = "server/discover";

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The newest version the client supports. Kept as a string: an unknown
    /// version is not an error, the server answers with one it supports.
    pub protocol_version: String,
    /// What the client can do.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version this connection will speak.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use this server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Unused in the handshake era; here so the type fits [`crate::result::McpResult`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `server/discover` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every version the server supports.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use this server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `resultType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Cache lifetime in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata; carries `io.modelcontextprotocol/serverInfo`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

mcp_result!(InitializeResult);
mcp_result!(cacheable: DiscoverResult);
