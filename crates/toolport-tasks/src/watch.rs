//! Following one task: its current state first, then every change until it
//! ends. Built on the engine's broadcast, so it sees the changes this
//! process makes; a watcher that falls behind re-reads the task from the
//! store instead of missing its end.

use std::sync::Arc;

use tokio::sync::broadcast::{self, error::RecvError};

use crate::error::TaskError;
use crate::event::TaskEvent;
use crate::id::TaskId;
use crate::record::TaskRecord;
use crate::store::TaskStore;

/// A subscription to one task's changes (from [`TaskEngine::watch`]).
///
/// [`TaskEngine::watch`]: crate::TaskEngine::watch
#[derive(Debug)]
pub struct TaskWatch {
    store: Arc<dyn TaskStore>,
    owner: String,
    id: TaskId,
    first: Option<TaskRecord>,
    receiver: broadcast::Receiver<TaskEvent>,
    seen_version: u64,
    finished: bool,
}

impl TaskWatch {
    /// A watch that yields `current` first. `receiver` must have been
    /// subscribed before `current` was read, so no change falls between.
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        current: TaskRecord,
        receiver: broadcast::Receiver<TaskEvent>,
    ) -> TaskWatch {
        TaskWatch {
            store,
            owner: current.owner.clone(),
            id: current.id.clone(),
            seen_version: 0,
            first: Some(current),
            receiver,
            finished: false,
        }
    }

    /// The task's next state: the current one on the first call, then each
    /// change in order. `None` once a terminal state was yielded, when the
    /// task was deleted, or when the engine is gone.
    pub async fn next(&mut self) -> Result<Option<TaskRecord>, TaskError> {
        if let Some(first) = self.first.take() {
            return Ok(Some(self.yielded(first)));
        }
        while !self.finished {
            match self.receiver.recv().await {
                Ok(TaskEvent::Changed(task)) if task.id == self.id && task.version > self.seen_version => {
                    return Ok(Some(self.yielded(Arc::unwrap_or_clone(task))));
                }
                Ok(TaskEvent::Deleted { id }) if id == self.id => self.finished = true,
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => {
                    // Changes were dropped: the store has the latest state.
                    match self.store.get(&self.owner, &self.id).await? {
                        Some(task) if task.version > self.seen_version => return Ok(Some(self.yielded(task))),
                        Some(_) => {}
                        None => self.finished = true,
                    }
                }
                Err(RecvError::Closed) => self.finished = true,
            }
        }
        Ok(None)
    }

    fn yielded(&mut self, task: TaskRecord) -> TaskRecord {
        self.seen_version = task.version;
        self.finished = task.status.is_terminal();
        task
    }
}
