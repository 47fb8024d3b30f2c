//! What can go wrong, small enough to match on: the protocol layers turn
//! each into their own answer (MCP: -32602 for an unknown or terminal task;
//! A2A: `TaskNotFoundError`, `TaskNotCancelableError`).

use crate::id::TaskId;
use crate::status::TaskStatus;

/// A store's failure: the database could not be reached or answered
/// something the engine cannot read.
#[derive(Debug, thiserror::Error)]
#[error("task store: {0}")]
pub struct StoreError(pub String);

impl StoreError {
    /// A failure described by `message`.
    pub fn new(message: impl Into<String>) -> StoreError {
        StoreError(message.into())
    }
}

/// Why an engine call did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// No task of this principal has this id. Another principal's task is
    /// reported the same way, so ids do not leak.
    #[error("task {0} not found")]
    NotFound(TaskId),
    /// The task already ended; terminal states never change. The loser of
    /// a race between a cancel and a completion gets this.
    #[error("task {id} is already {status} and cannot change")]
    AlreadyTerminal {
        /// The task.
        id: TaskId,
        /// The status it ended in.
        status: TaskStatus,
    },
    /// The task changed since the caller read it: read it again.
    #[error("task {id} is at version {actual}, not {expected}: it changed meanwhile")]
    VersionConflict {
        /// The task.
        id: TaskId,
        /// The version the caller based its change on.
        expected: u64,
        /// The version the task is at.
        actual: u64,
    },
    /// This runner's lease on the task ran out and recovery handed the task
    /// to another runner (or failed it): stop working on it.
    #[error("task {0} is no longer held by this runner")]
    LeaseLost(TaskId),
    /// The change is not one a task can make (a result without
    /// `completed`, a terminal first status, ...).
    #[error("invalid task change: {0}")]
    InvalidTransition(String),
    /// The request itself is unusable (an empty owner, a malformed cursor,
    /// a value over its size limit).
    #[error("invalid task request: {0}")]
    InvalidRequest(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
