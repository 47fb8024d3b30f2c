//! Keeping a lease while a task runs: a runner working longer than one
//! lease renews it, or recovery would take a live task for a dead one.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::engine::TaskEngine;
use crate::error::TaskError;
use crate::id::TaskId;
use crate::record::TaskRecord;

/// Renews this runner's lease on one task every third of a lease until the
/// task ends, the lease is lost, or the keeper is dropped (from
/// [`TaskEngine::keep_lease`]).
#[derive(Debug)]
pub struct LeaseKeeper {
    renewals: watch::Receiver<Option<TaskRecord>>,
    renewing: JoinHandle<()>,
}

impl LeaseKeeper {
    /// Waits for the next renewal and returns the task as renewed; `None`
    /// once the keeper stopped (the task ended or was handed to another
    /// runner: the runner should stop working on it).
    pub async fn next_renewal(&mut self) -> Option<TaskRecord> {
        self.renewals.changed().await.ok()?;
        self.renewals.borrow_and_update().clone()
    }

    /// Whether the keeper still renews.
    pub fn is_keeping(&self) -> bool {
        !self.renewing.is_finished()
    }
}

impl Drop for LeaseKeeper {
    fn drop(&mut self) {
        self.renewing.abort();
    }
}

impl TaskEngine {
    /// Starts renewing this runner's lease on `owner`'s task `id` in the
    /// background. Store failures are retried at the next renewal; an ended,
    /// deleted or lost task stops the keeper.
    pub fn keep_lease(&self, owner: &str, id: &TaskId) -> LeaseKeeper {
        let (sender, renewals) = watch::channel(None);
        let every = (self.config.lease / 3).max(Duration::from_millis(1));
        let (engine, owner, id) = (self.clone(), owner.to_owned(), id.clone());
        let renewing = tokio::spawn(async move {
            let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                match engine.renew_lease(&owner, &id).await {
                    Ok(task) => {
                        sender.send_replace(Some(task));
                    }
                    Err(TaskError::Store(e)) => {
                        tracing::warn!(task = %id, error = %e, "renewing a task's lease failed; retrying");
                    }
                    Err(TaskError::LeaseLost(_)) => {
                        tracing::warn!(task = %id, "a task's lease was lost to another runner");
                        return;
                    }
                    Err(_) => return,
                }
            }
        });
        LeaseKeeper { renewals, renewing }
    }
}
