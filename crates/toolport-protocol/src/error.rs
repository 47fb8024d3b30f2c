//! JSON-RPC error objects and the error codes MCP uses.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code.
///
/// The standard codes come from JSON-RPC 2.0; `-32020..=-32022` are reserved by
/// MCP 2026-07-28 (`basic/index#error-codes`); `-32002` and `-32042` exist only
/// in the handshake era and must not be sent to a 2026-07-28 client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters. Also "resource not found" from 2026-07-28 on.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// Resource not found, handshake era only (2024-11-05 … 2025-11-25).
    pub const RESOURCE_NOT_FOUND_LEGACY: ErrorCode = ErrorCode(-32002);
    /// URL elicitation required (2025-11-25 only).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// A transport header disagrees with the body (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// Toolport: the server is overloaded; `data.retryAfterMs` says when to retry.
    pub const OVERLOADED: ErrorCode = ErrorCode(-32010);
    /// Toolport: the request was cancelled or ran past its deadline.
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
}

impl PartialEq<i64> for ErrorCode {
    fn eq(&self, other: &i64) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// What kind of error.
    pub code: ErrorCode,
    /// A short description a person can act on.
    pub message: String,
    /// Anything else that helps, for example the supported versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32601 for a method this server does not have.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// -32602 with a reason.
    pub fn invalid_params(why: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {why}"))
    }

    /// -32600 with a reason.
    pub fn invalid_request(why: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("Invalid Request: {why}"))
    }

    /// -32603 with a reason.
    pub fn internal(why: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("Internal error: {why}"))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}
