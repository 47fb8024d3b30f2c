//! Nothing stays running forever: tasks whose runner died are failed or
//! handed out again, and tasks past their time to live are deleted. Run at
//! start and then periodically ([`TaskEngine::maintain`]).

use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;

use crate::engine::TaskEngine;
use crate::error::TaskError;
use crate::event::TaskEvent;
use crate::record::TaskRecord;
use crate::status::TaskStatus;

/// How many tasks one recovery or sweep round looks at; the next round
/// takes the rest.
const BATCH: usize = 200;

/// JSON-RPC's internal error: a failed task's error says the server, not
/// the request, is why it ended.
const INTERNAL_ERROR: i64 = -32603;

/// What one recovery round did.
#[derive(Debug, Default)]
pub struct Recovery {
    /// Tasks whose runner died and that are not resumable: now `failed`.
    pub failed: Vec<TaskRecord>,
    /// Resumable tasks whose runner died, now held by this engine's runner:
    /// run each again from its tool and arguments.
    pub claimed: Vec<TaskRecord>,
}

impl TaskEngine {
    /// Finds tasks whose lease ran out (their runner's process died or
    /// hung) and ends them: a resumable task is claimed by this engine's
    /// runner and returned to be run again; any other is failed with a
    /// message saying why. A task another engine recovers first is left to
    /// it.
    pub async fn claim_expired(&self) -> Result<Recovery, TaskError> {
        let now = self.clock.now_ms();
        let mut recovery = Recovery::default();
        for task in self.store.expired_leases(now, BATCH).await? {
            let expected = task.version;
            let mut next = task.clone();
            next.version += 1;
            next.updated_at = now.max(task.updated_at);
            next.input_requests = None;
            if task.resumable {
                next.status = TaskStatus::Working;
                next.status_message = Some("resumed after the process running it stopped".into());
                next.lease = Some(self.lease_from(now));
            } else {
                let message = "the process running this task stopped before it finished, and the task \
                               cannot be resumed; run it again";
                next.status = TaskStatus::Failed;
                next.status_message = Some(message.into());
                next.error = Some(json!({ "code": INTERNAL_ERROR, "message": message }));
                next.result = None;
                next.lease = None;
            }
            let owner = task.owner.clone();
            match self.swap(&owner, next, expected).await {
                Ok(next) if next.status.is_terminal() => recovery.failed.push(next),
                Ok(next) => recovery.claimed.push(next),
                // Renewed, finished or recovered by someone else meanwhile.
                Err(TaskError::VersionConflict { .. } | TaskError::AlreadyTerminal { .. } | TaskError::NotFound(_)) => {
                }
                Err(e) => return Err(e),
            }
        }
        Ok(recovery)
    }

    /// Deletes tasks whose time to live ran out; returns how many.
    pub async fn sweep_expired(&self) -> Result<usize, TaskError> {
        let deleted = self.store.delete_expired(self.clock.now_ms(), BATCH).await?;
        for task in &deleted {
            let _ = self.events.send(TaskEvent::Deleted { id: task.id.clone() });
        }
        Ok(deleted.len())
    }

    /// Recovers and sweeps now and then every `every`, sending each claimed
    /// task to `claimed` to be run again. Returns when `claimed`'s receiver
    /// is dropped. Store failures are logged and retried next round.
    pub async fn maintain(self, every: Duration, claimed: mpsc::Sender<TaskRecord>) {
        let mut ticks = tokio::time::interval(every.max(Duration::from_millis(1)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                () = claimed.closed() => return,
            }
            match self.claim_expired().await {
                Ok(recovery) => {
                    for task in &recovery.failed {
                        tracing::warn!(task = %task.id, tool = %task.tool, "task failed: its runner stopped");
                    }
                    for task in recovery.claimed {
                        tracing::info!(task = %task.id, tool = %task.tool, "task resumed: its runner stopped");
                        if claimed.send(task).await.is_err() {
                            return;
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "task recovery failed; retrying next round"),
            }
            if let Err(e) = self.sweep_expired().await {
                tracing::warn!(error = %e, "deleting expired tasks failed; retrying next round");
            }
        }
    }
}
