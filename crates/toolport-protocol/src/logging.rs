//! Logging (`server/utilities/logging`): `logging/setLevel` in the handshake
//! era, `_meta` `io.modelcontextprotocol/logLevel` per request from 2026-07-28.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::meta::Meta;

/// Method of the handshake-era `logging/setLevel` request.
pub const SET_LEVEL: &str = "logging/setLevel";
/// Method of [`LoggingMessageNotificationParams`].
pub const MESSAGE: &str = "notifications/message";

/// Syslog severities (RFC 5424), least severe first so they compare naturally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// System is unusable.
    Emergency,
}

/// `logging/setLevel` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelRequestParams {
    /// The lowest level the client wants.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `notifications/message` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Which logger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON.
    pub data: Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
