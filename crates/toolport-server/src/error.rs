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

/// The `_meta` key of an `isError` result that says what failed, in
/// Toolport's namespace: `{"code": "...", "retryable": bool, "retryAfterMs"?: n}`.
pub const ERROR_META: &str = "dev.toolport/error";

/// A failure a program can act on: a machine-readable code, whether the
/// same call may succeed if tried again, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What a person or a model reads.
    pub message: String,
    /// Stable, snake_case: `deadline_exceeded`, `upstream_unavailable`, ...
    pub code: String,
    /// Whether trying the same call again may succeed.
    pub retryable: bool,
    /// How long to wait before trying again, when the tool knows.
    pub retry_after_ms: Option<u64>,
}

impl Failure {
    /// The `isError` result it is answered with: the message (with the code
    /// and whether to retry, for a reader) and the same in `_meta`.
    pub fn into_result(self) -> toolport_protocol::tools::CallToolResult {
        let retry = if self.retryable { "retryable" } else { "not retryable" };
        let text = format!("{} (code {}, {retry})", self.message, self.code);
        error_result(text, &self.code, self.retryable, self.retry_after_ms)
    }
}

/// An `isError` result whose `_meta` carries `code` and `retryable`.
pub(crate) fn error_result(
    text: String,
    code: &str,
    retryable: bool,
    retry_after_ms: Option<u64>,
) -> toolport_protocol::tools::CallToolResult {
    let mut result = toolport_protocol::tools::CallToolResult::error(text);
    let mut detail = json!({ "code": code, "retryable": retryable });
    if let Some(ms) = retry_after_ms {
        detail["retryAfterMs"] = json!(ms);
    }
    result.meta = Some(serde_json::Map::from_iter([(ERROR_META.to_owned(), detail)]));
    result
}

/// Why a handler did not produce its result.
///
/// Any `std::error::Error` converts into [`ToolError::Failed`], so `?` works
/// on I/O, parsing and database errors inside a tool. Every tool failure
/// reaches the caller as an `isError` result with a code in `_meta`
/// ([`ERROR_META`]): `failed` and `invalid_arguments` for the plain ones,
/// the tool's own for [`ToolError::Coded`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool failed; the message goes to the model as an `isError` result.
    Failed(String),
    /// The tool failed with a code and a verdict on retrying
    /// ([`ToolError::coded`], [`ToolError::retryable`]).
    Coded(Box<Failure>),
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

    /// A failure with a machine-readable `code` that trying again will not fix.
    pub fn coded(code: impl Into<String>, message: impl fmt::Display) -> Self {
        ToolError::Coded(Box::new(Failure {
            message: message.to_string(),
            code: code.into(),
            retryable: false,
            retry_after_ms: None,
        }))
    }

    /// A failure with a machine-readable `code` that trying the same call
    /// again may fix (an upstream that was down, a lock that was held).
    pub fn retryable(code: impl Into<String>, message: impl fmt::Display) -> Self {
        ToolError::Coded(Box::new(Failure {
            message: message.to_string(),
            code: code.into(),
            retryable: true,
            retry_after_ms: None,
        }))
    }

    /// Says how long to wait before trying again (a coded failure only).
    pub fn retry_after(mut self, wait: std::time::Duration) -> Self {
        if let ToolError::Coded(failure) = &mut self {
            failure.retry_after_ms = Some(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
        }
        self
    }

    /// The machine-readable code of a tool failure.
    pub fn code(&self) -> Option<&str> {
        match self {
            ToolError::Failed(_) => Some("failed"),
            ToolError::InvalidArguments(_) => Some("invalid_arguments"),
            ToolError::Coded(failure) => Some(&failure.code),
            _ => None,
        }
    }

    /// Whether trying the same call again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ToolError::Coded(failure) if failure.retryable)
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
            ToolError::Coded(failure) => write!(f, "{} ({})", failure.message, failure.code),
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
