//! The `_meta` object as it travels: a free-form map, and the keys MCP
//! defines in it. Every message type builds on these, so this file names no
//! other module.

use serde_json::{Map, Value};

/// A free-form `_meta` object.
pub type Meta = Map<String, Value>;

/// `_meta` keys defined by the specification.
pub mod keys {
    /// The protocol version of a 2026-07-28 request (required).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities on a 2026-07-28 request (required).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's name and version on a 2026-07-28 request.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The lowest log level the client wants for this request (2026-07-28).
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// The server's name and version on a 2026-07-28 result.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The listen request a 2026-07-28 notification belongs to.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// The progress token of a request.
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// W3C trace context, carried in `_meta` from 2026-07-28 on.
    pub const TRACEPARENT: &str = "traceparent";
}
