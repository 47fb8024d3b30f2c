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
