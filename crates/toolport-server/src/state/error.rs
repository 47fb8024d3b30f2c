//! How a state store fails.

/// A state store could not answer. In memory this does not happen; a shared
/// store loses its connection or finds data it cannot read. Callers turn it
/// into a clear error for the client (JSON-RPC internal error, HTTP 503),
/// never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The store cannot be reached or did not answer in time.
    #[error("the state store is unavailable: {0}")]
    Unavailable(String),
    /// The store holds data this version cannot read.
    #[error("the state store holds unreadable data: {0}")]
    Corrupt(String),
}

/// The `data` field that marks an error as "the shared state store is
/// unavailable": the HTTP transport answers such errors with 503 and
/// `Retry-After`, in both eras.
pub const STATE_UNAVAILABLE: &str = "stateUnavailable";

/// How long a client is told to wait before retrying a request that needed
/// the unavailable state store.
const RETRY_AFTER_MS: u64 = 1000;

impl StateError {
    /// The JSON-RPC error for a request that needed the shared state and
    /// could not have it: internal error (-32603), saying what could not be
    /// done and that a retry shortly will do, with `data.retryAfterMs` and
    /// `data.stateUnavailable`. The store's own words stay in the logs (they
    /// may name its address).
    pub fn to_error_object(&self, what: &str) -> toolport_protocol::ErrorObject {
        tracing::error!(error = %self, "{what}");
        toolport_protocol::ErrorObject::new(
            toolport_protocol::ErrorCode::INTERNAL_ERROR,
            format!("Service Unavailable: {what}, because the shared state store is unavailable; retry in a moment"),
        )
        .with_data(serde_json::json!({ "retryAfterMs": RETRY_AFTER_MS, STATE_UNAVAILABLE: true }))
    }
}

/// Whether `error` says the shared state store was unavailable (see
/// [`StateError::to_error_object`]).
pub fn is_state_unavailable(error: &toolport_protocol::ErrorObject) -> bool {
    error
        .data
        .as_ref()
        .and_then(|d| d.get(STATE_UNAVAILABLE))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}
