//! A2A's errors (specification §3.3.2, §5.4) and how each binding spells
//! them: a JSON-RPC error with a `google.rpc.ErrorInfo` in `data`, or an
//! HTTP status with a `google.rpc.Status` body.

use http::StatusCode;
use serde_json::{Value, json};
use toolport_tasks::TaskError;

/// The `domain` of every `ErrorInfo` this crate sends.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// What went wrong with an A2A request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum A2aError {
    /// The body is not JSON.
    #[error("{0}")]
    Parse(String),
    /// The JSON is not a valid request.
    #[error("{0}")]
    InvalidRequest(String),
    /// No such method or path.
    #[error("{0}")]
    MethodNotFound(String),
    /// The parameters are wrong; says which and why.
    #[error("{0}")]
    InvalidParams(String),
    /// Something failed here; retrying may help.
    #[error("{0}")]
    Internal(String),
    /// No task of the caller has this id.
    #[error("task {0} not found")]
    TaskNotFound(String),
    /// The task already ended.
    #[error("{0}")]
    TaskNotCancelable(String),
    /// Push notifications are off.
    #[error("push notifications are not supported by this agent")]
    PushNotificationNotSupported,
    /// Not something this agent does (a message to an ended task, ...).
    #[error("{0}")]
    UnsupportedOperation(String),
    /// A part's media type the agent does not take.
    #[error("{0}")]
    ContentTypeNotSupported(String),
    /// The agent answered something the method does not allow.
    #[error("{0}")]
    InvalidAgentResponse(String),
    /// No extended card is configured.
    #[error("this agent has no extended agent card")]
    ExtendedAgentCardNotConfigured,
    /// An `A2A-Version` this agent does not speak (or none, which means 0.3).
    #[error("{0}")]
    VersionNotSupported(String),
    /// The caller is not authenticated (401) or may not do this (403).
    #[error("{message}")]
    Unauthorized {
        /// 401 or 403.
        status: StatusCode,
        /// Why, for the caller.
        message: String,
        /// The `WWW-Authenticate` challenge, for a 401.
        challenge: Option<String>,
    },
}

impl A2aError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            A2aError::Parse(_) => -32700,
            A2aError::InvalidRequest(_) => -32600,
            A2aError::MethodNotFound(_) => -32601,
            A2aError::InvalidParams(_) => -32602,
            A2aError::Internal(_) => -32603,
            A2aError::TaskNotFound(_) => -32001,
            A2aError::TaskNotCancelable(_) => -32002,
            A2aError::PushNotificationNotSupported => -32003,
            A2aError::UnsupportedOperation(_) => -32004,
            A2aError::ContentTypeNotSupported(_) => -32005,
            A2aError::InvalidAgentResponse(_) => -32006,
            A2aError::ExtendedAgentCardNotConfigured => -32007,
            A2aError::VersionNotSupported(_) => -32009,
            // Transports answer these with an HTTP status; the code is for
            // a JSON-RPC body that must carry one.
            A2aError::Unauthorized { .. } => -32600,
        }
    }

    /// The `ErrorInfo.reason`: the error's name in UPPER_SNAKE_CASE.
    pub fn reason(&self) -> &'static str {
        match self {
            A2aError::Parse(_) => "JSON_PARSE",
            A2aError::InvalidRequest(_) => "INVALID_REQUEST",
            A2aError::MethodNotFound(_) => "METHOD_NOT_FOUND",
            A2aError::InvalidParams(_) => "INVALID_PARAMS",
            A2aError::Internal(_) => "INTERNAL",
            A2aError::TaskNotFound(_) => "TASK_NOT_FOUND",
            A2aError::TaskNotCancelable(_) => "TASK_NOT_CANCELABLE",
            A2aError::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            A2aError::UnsupportedOperation(_) => "UNSUPPORTED_OPERATION",
            A2aError::ContentTypeNotSupported(_) => "CONTENT_TYPE_NOT_SUPPORTED",
            A2aError::InvalidAgentResponse(_) => "INVALID_AGENT_RESPONSE",
            A2aError::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            A2aError::VersionNotSupported(_) => "VERSION_NOT_SUPPORTED",
            A2aError::Unauthorized { .. } => "UNAUTHENTICATED",
        }
    }

    /// The HTTP status of the HTTP+JSON binding (§5.4).
    pub fn status(&self) -> StatusCode {
        match self {
            A2aError::Parse(_)
            | A2aError::InvalidRequest(_)
            | A2aError::InvalidParams(_)
            | A2aError::TaskNotCancelable(_)
            | A2aError::PushNotificationNotSupported
            | A2aError::UnsupportedOperation(_)
            | A2aError::ContentTypeNotSupported(_)
            | A2aError::ExtendedAgentCardNotConfigured
            | A2aError::VersionNotSupported(_) => StatusCode::BAD_REQUEST,
            A2aError::MethodNotFound(_) | A2aError::TaskNotFound(_) => StatusCode::NOT_FOUND,
            A2aError::Internal(_) | A2aError::InvalidAgentResponse(_) => StatusCode::INTERNAL_SERVER_ERROR,
            A2aError::Unauthorized { status, .. } => *status,
        }
    }

    /// The `details`/`data` array: one `ErrorInfo`.
    pub fn details(&self) -> Value {
        let mut metadata = serde_json::Map::new();
        if let A2aError::TaskNotFound(id) = self {
            metadata.insert("taskId".into(), json!(id));
        }
        json!([{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.reason(),
            "domain": ERROR_DOMAIN,
            "metadata": metadata,
        }])
    }

    /// The JSON-RPC error object.
    pub fn to_jsonrpc(&self) -> Value {
        json!({"code": self.code(), "message": self.to_string(), "data": self.details()})
    }

    /// The HTTP+JSON error body (`google.rpc.Status` under `error`).
    pub fn to_rest(&self) -> Value {
        let status = self.status();
        json!({"error": {
            "code": status.as_u16(),
            "status": grpc_status_name(status),
            "message": self.to_string(),
            "details": self.details(),
        }})
    }
}

fn grpc_status_name(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        413 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}

impl From<TaskError> for A2aError {
    fn from(error: TaskError) -> A2aError {
        match error {
            TaskError::NotFound(id) => A2aError::TaskNotFound(id.to_string()),
            TaskError::AlreadyTerminal { id, status } => A2aError::UnsupportedOperation(format!(
                "task {id} is {} and takes no more changes",
                crate::types::TaskState::from(status).name()
            )),
            TaskError::InvalidRequest(message) => A2aError::InvalidParams(message),
            // The task's own store failed, or a bug here: not the caller's fault.
            other @ (TaskError::VersionConflict { .. }
            | TaskError::LeaseLost(_)
            | TaskError::InvalidTransition(_)
            | TaskError::Store(_)) => {
                tracing::warn!(error = %other, "A2A task store");
                A2aError::Internal("the task could not be read or written; retry shortly".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_a2a_error_carries_its_code_status_and_reason() {
        let cases = [
            (A2aError::TaskNotFound("t1".into()), -32001, 404, "TASK_NOT_FOUND"),
            (
                A2aError::TaskNotCancelable("done".into()),
                -32002,
                400,
                "TASK_NOT_CANCELABLE",
            ),
            (
                A2aError::PushNotificationNotSupported,
                -32003,
                400,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ),
            (
                A2aError::UnsupportedOperation("x".into()),
                -32004,
                400,
                "UNSUPPORTED_OPERATION",
            ),
            (
                A2aError::ContentTypeNotSupported("x".into()),
                -32005,
                400,
                "CONTENT_TYPE_NOT_SUPPORTED",
            ),
            (
                A2aError::InvalidAgentResponse("x".into()),
                -32006,
                500,
                "INVALID_AGENT_RESPONSE",
            ),
            (
                A2aError::ExtendedAgentCardNotConfigured,
                -32007,
                400,
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            ),
            (
                A2aError::VersionNotSupported("9.9".into()),
                -32009,
                400,
                "VERSION_NOT_SUPPORTED",
            ),
        ];
        for (error, code, status, reason) in cases {
            let rpc = error.to_jsonrpc();
            assert_eq!(rpc["code"], code);
            assert_eq!(rpc["data"][0]["reason"], reason);
            assert_eq!(rpc["data"][0]["domain"], ERROR_DOMAIN);
            assert_eq!(rpc["data"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
            let rest = error.to_rest();
            assert_eq!(rest["error"]["code"], status);
            assert_eq!(rest["error"]["details"][0]["reason"], reason);
        }
        assert_eq!(
            A2aError::TaskNotFound("t1".into()).details()[0]["metadata"]["taskId"],
            "t1"
        );
    }
}
