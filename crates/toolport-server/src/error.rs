//! How a handler fails.
//!
//! Two kinds of failure are never mixed (`server/tools#error-handling`): a
//! tool's own failure is a successful response whose result has
//! `isError: true`, so the model can read it and try again; a protocol failure
//! (unknown tool, bad params, a capability the client lacks) is a JSON-RPC error.

use std::fmt;

use serde_json::json;
use toolport_protocol::ErrorObject;
use toolport_protocol::capabilities::ClientCapabilities;

use crate::input::InputRequired;

/// Why a handler did not produce its result.
///
/// Any `std::error::Error` converts into [`ToolError::Failed`], so `?` works
/// on I/O, parsing and database errors inside a tool.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool failed; the message goes to the model as an `isError` result.
    Failed(String),
    /// The arguments do not fit the tool; also an `isError` result (SEP-1303),
    /// so the model can correct itself.
    InvalidArguments(String),
    /// The handler needs input from the user, the model or the client's roots
    /// (2026-07-28: answered with `InputRequiredResult`).
    InputRequired(Box<InputRequired>),
    /// The client did not declare a capability the handler needs.
    MissingCapability(Box<ClientCapabilities>),
    /// The request was cancelled.
    Cancelled,
    /// A protocol error, sent as a JSON-RPC error object.
    Protocol(ErrorObject),
}

impl ToolError {
    /// A failure with a message the model can act on.
    pub fn failed(message: impl fmt::Display) -> Self {
        ToolError::Failed(message.to_string())
    }

    /// The JSON-RPC error for a missing client capability (-32021).
    pub(crate) fn missing_capability_error(required: &ClientCapabilities) -> ErrorObject {
        ErrorObject::new(
            toolport_protocol::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability: this request needs a capability the client did not declare",
        )
        .with_data(json!({ "requiredCapabilities": required }))
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Failed(m) | ToolError::InvalidArguments(m) => f.write_str(m),
            ToolError::InputRequired(_) => f.write_str("input required"),
            ToolError::MissingCapability(c) => write!(f, "missing client capability {}", json!(c)),
            ToolError::Cancelled => f.write_str("cancelled"),
            ToolError::Protocol(e) => write!(f, "{e}"),
        }
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError::Failed(e.to_string())
    }
}

/// Why a resource could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// No resource has that URI (-32002 in the handshake era, -32602 from 2026-07-28).
    #[error("Resource not found: {0}")]
    NotFound(String),
    /// Anything else; sent as an internal error with this message.
    #[error("{0}")]
    Failed(String),
    /// The handler needs input (2026-07-28 MRTR) or failed in a way a tool can.
    #[error("{0}")]
    Tool(ToolError),
}

impl From<ToolError> for ResourceError {
    fn from(e: ToolError) -> Self {
        ResourceError::Tool(e)
    }
}
