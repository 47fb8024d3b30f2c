//! What an engine tells its watchers: every change of every task, on one
//! broadcast channel per engine.

use std::sync::Arc;

use crate::id::TaskId;
use crate::record::TaskRecord;

/// One change an engine made.
#[derive(Debug, Clone)]
pub enum TaskEvent {
    /// A task was created or changed; this is its new state.
    Changed(Arc<TaskRecord>),
    /// A task's time to live ran out and it was deleted.
    Deleted {
        /// The deleted task.
        id: TaskId,
    },
}

impl TaskEvent {
    /// The task the event is about.
    pub fn task_id(&self) -> &TaskId {
        match self {
            TaskEvent::Changed(task) => &task.id,
            TaskEvent::Deleted { id } => id,
        }
    }
}
