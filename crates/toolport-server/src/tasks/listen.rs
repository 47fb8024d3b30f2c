//! `notifications/tasks` on a `subscriptions/listen` stream (2026-07-28
//! tasks extension): the listener names the tasks it follows
//! (`notifications.taskIds`); the acknowledgement names those it will hear
//! of (its own tasks that exist), and each change of one of them is sent
//! as its `DetailedTask`, the same as `tasks/get` would answer.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::broadcast::{self, error::RecvError};
use toolport_protocol::ErrorObject;
use toolport_tasks::{TaskEvent, TaskId, TaskRecord};

use super::wire::detailed;
use super::{declares_extension, extension_required, owner_of};
use crate::dispatch::Scope;
use crate::server::Server;
use crate::task_state::TaskRuntime;

/// The tasks one listener follows.
pub(crate) struct TaskFollow {
    runtime: Arc<TaskRuntime>,
    owner: String,
    ids: HashSet<TaskId>,
    events: broadcast::Receiver<TaskEvent>,
}

impl Server {
    /// Starts following `ids` for a listener: -32021 without the extension;
    /// ids of unknown tasks, or of another principal's, are left out.
    pub(crate) async fn follow_tasks(&self, scope: &Scope, ids: &[String]) -> Result<Option<TaskFollow>, ErrorObject> {
        if ids.is_empty() {
            return Ok(None);
        }
        if !declares_extension(&scope.client_capabilities) {
            return Err(extension_required("notifications.taskIds"));
        }
        let Some(runtime) = self.inner.tasks.clone() else {
            return Ok(None);
        };
        let owner = owner_of(scope.call.principal.as_ref());
        // Subscribed before the tasks are read, so no change falls between.
        let events = runtime.engine.subscribe();
        let mut followed = HashSet::new();
        for id in ids.iter().take(100) {
            let id = TaskId::from(id.as_str());
            if runtime.engine.get(&owner, &id).await.is_ok() {
                followed.insert(id);
            }
        }
        Ok(Some(TaskFollow {
            runtime,
            owner,
            ids: followed,
            events,
        }))
    }
}

impl TaskFollow {
    /// The followed ids, for the acknowledgement.
    pub(crate) fn accepted(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.ids.iter().map(ToString::to_string).collect();
        ids.sort();
        ids
    }

    /// The next changes of followed tasks, as notification params; pending
    /// forever once nothing is left to follow.
    pub(crate) async fn next(&mut self) -> Vec<serde_json::Value> {
        loop {
            if self.ids.is_empty() {
                return std::future::pending().await;
            }
            match self.events.recv().await {
                Ok(TaskEvent::Changed(task)) if self.follows(&task) => return vec![shown(&task)],
                Ok(TaskEvent::Deleted { id }) => {
                    self.ids.remove(&id);
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => {
                    // Changes were dropped: send each task as it is now.
                    let mut now = Vec::new();
                    for id in self.ids.clone() {
                        if let Ok(task) = self.runtime.engine.get(&self.owner, &id).await {
                            now.push(shown(&task));
                        }
                    }
                    return now;
                }
                Err(RecvError::Closed) => self.ids.clear(),
            }
        }
    }

    fn follows(&self, task: &TaskRecord) -> bool {
        task.owner == self.owner && self.ids.contains(&task.id)
    }
}

fn shown(task: &TaskRecord) -> serde_json::Value {
    let mut params = detailed(task);
    params.result_type = None;
    serde_json::to_value(params).unwrap_or_default()
}
