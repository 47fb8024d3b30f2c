//! The engine: the one place that decides how a task may change. The MCP
//! layer and A2A call it; it checks every request, writes through the
//! store by compare and swap, and tells watchers.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use crate::clock::{Clock, SystemClock};
use crate::error::TaskError;
use crate::event::TaskEvent;
use crate::id::{MAX_ID_LEN, TaskId};
use crate::record::{Lease, Millis, NewTask, TaskPage, TaskRecord, Transition};
use crate::status::TaskStatus;
use crate::store::{ListPosition, TaskStore};
use crate::watch::TaskWatch;

/// How many times [`TaskEngine::update`] re-reads a task that keeps
/// changing under it before it gives up with the conflict. Each lost round
/// means another writer succeeded, so this only bounds a pathological
/// stream of updates.
const UPDATE_ATTEMPTS: usize = 64;

/// The longest owner principal or tool name accepted.
const MAX_NAME_LEN: usize = 1024;

/// How an engine behaves; [`EngineConfig::default`] suits most servers.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// This engine's name as a lease holder; unique per process.
    pub runner_id: String,
    /// How long a lease lasts unless renewed. A killed process's tasks are
    /// recovered at most this long after it died.
    pub lease: Duration,
    /// The polling interval suggested when the requester names none.
    pub default_poll_interval_ms: u64,
    /// The time to live when the requester names none; `None` keeps tasks
    /// until deleted.
    pub default_ttl_ms: Option<u64>,
    /// The longest time to live granted; longer requests are shortened.
    pub max_ttl_ms: u64,
    /// The largest JSON value (arguments, result, error, input requests,
    /// metadata), serialized, a task may carry.
    pub max_value_bytes: usize,
    /// The page size of [`TaskEngine::list`] when none is asked for.
    pub default_page_size: usize,
    /// The largest page [`TaskEngine::list`] returns.
    pub max_page_size: usize,
    /// How many changes a slow watcher may fall behind before it re-reads.
    pub event_capacity: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            runner_id: format!("runner-{}", TaskId::generate()),
            lease: Duration::from_secs(30),
            default_poll_interval_ms: 1000,
            default_ttl_ms: Some(24 * 3600 * 1000),
            max_ttl_ms: 7 * 24 * 3600 * 1000,
            max_value_bytes: 4 * 1024 * 1024,
            default_page_size: 50,
            max_page_size: 100,
            event_capacity: 1024,
        }
    }
}

/// The durable task engine. Cheap to clone; clones share the store, the
/// clock and the watchers.
#[derive(Debug, Clone)]
pub struct TaskEngine {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) config: Arc<EngineConfig>,
    pub(crate) events: broadcast::Sender<TaskEvent>,
}

impl TaskEngine {
    /// An engine over `store` with the default configuration and the
    /// system clock.
    pub fn new(store: Arc<dyn TaskStore>) -> TaskEngine {
        TaskEngine::with_config(store, EngineConfig::default(), Arc::new(SystemClock))
    }

    /// An engine over `store` configured by `config`, reading `clock`.
    pub fn with_config(store: Arc<dyn TaskStore>, config: EngineConfig, clock: Arc<dyn Clock>) -> TaskEngine {
        let (events, _) = broadcast::channel(config.event_capacity.max(1));
        TaskEngine {
            store,
            clock,
            config: Arc::new(config),
            events,
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Every change this engine makes, as it makes it.
    pub fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.events.subscribe()
    }

    /// Creates a task held by this engine's runner; it is durable when this
    /// returns, so the id can be announced.
    pub async fn create(&self, new: NewTask) -> Result<TaskRecord, TaskError> {
        check_name("owner", &new.owner)?;
        check_name("tool", &new.tool)?;
        if new.status.is_terminal() {
            return Err(TaskError::InvalidTransition(format!(
                "a task cannot start {}: that status is terminal",
                new.status
            )));
        }
        self.check_size("arguments", Some(&new.arguments))?;
        self.check_size("metadata", new.metadata.as_ref())?;
        let now = self.clock.now_ms();
        let ttl_ms = new
            .ttl_ms
            .or(self.config.default_ttl_ms)
            .map(|ttl| ttl.min(self.config.max_ttl_ms));
        let task = TaskRecord {
            id: TaskId::generate(),
            owner: new.owner,
            status: new.status,
            status_message: None,
            created_at: now,
            updated_at: now,
            ttl_ms,
            expires_at: ttl_ms.map(|ttl| now.saturating_add(millis(ttl))),
            poll_interval_ms: new.poll_interval_ms.unwrap_or(self.config.default_poll_interval_ms),
            input_requests: None,
            result: None,
            error: None,
            version: 1,
            lease: Some(self.lease_from(now)),
            resumable: new.resumable,
            tool: new.tool,
            arguments: new.arguments,
            context_id: new.context_id,
            metadata: new.metadata,
        };
        self.store.insert(&task).await?;
        self.publish(&task);
        Ok(task)
    }

    /// `owner`'s task `id`.
    pub async fn get(&self, owner: &str, id: &TaskId) -> Result<TaskRecord, TaskError> {
        if !id.is_plausible() {
            return Err(TaskError::NotFound(id.clone()));
        }
        self.store
            .get(owner, id)
            .await?
            .ok_or_else(|| TaskError::NotFound(id.clone()))
    }

    /// A page of `owner`'s tasks, newest first. `cursor` is a previous
    /// page's `next_cursor`; `page_size` defaults to and is capped by the
    /// configuration.
    pub async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        page_size: Option<usize>,
    ) -> Result<TaskPage, TaskError> {
        let after = cursor.map(decode_cursor).transpose()?;
        let size = page_size
            .unwrap_or(self.config.default_page_size)
            .clamp(1, self.config.max_page_size.max(1));
        // One more than the page shows whether another page follows.
        let mut tasks = self.store.list(owner, after.as_ref(), size + 1).await?;
        let next_cursor = if tasks.len() > size {
            tasks.truncate(size);
            tasks.last().map(encode_cursor)
        } else {
            None
        };
        Ok(TaskPage { tasks, next_cursor })
    }

    /// Changes `owner`'s task `id` if it is still at `expected_version`:
    /// compare and swap. A task that changed meanwhile gives
    /// [`TaskError::VersionConflict`]; a task that ended gives
    /// [`TaskError::AlreadyTerminal`].
    pub async fn transition(
        &self,
        owner: &str,
        id: &TaskId,
        expected_version: u64,
        change: Transition,
    ) -> Result<TaskRecord, TaskError> {
        let current = self.get(owner, id).await?;
        if current.status.is_terminal() {
            return Err(already_terminal(&current));
        }
        if current.version != expected_version {
            return Err(TaskError::VersionConflict {
                id: id.clone(),
                expected: expected_version,
                actual: current.version,
            });
        }
        let next = self.apply(&current, change)?;
        self.swap(owner, next, expected_version).await
    }

    /// Changes `owner`'s task `id` from whatever state it is in now,
    /// re-reading and retrying when another writer got there first. Ends in
    /// [`TaskError::AlreadyTerminal`] once the task has ended, so of racing
    /// terminal changes exactly one succeeds.
    pub async fn update(&self, owner: &str, id: &TaskId, change: Transition) -> Result<TaskRecord, TaskError> {
        let mut attempt = 0;
        loop {
            let current = self.get(owner, id).await?;
            if current.status.is_terminal() {
                return Err(already_terminal(&current));
            }
            let next = self.apply(&current, change.clone())?;
            match self.swap(owner, next, current.version).await {
                Err(TaskError::VersionConflict { .. }) if attempt + 1 < UPDATE_ATTEMPTS => attempt += 1,
                other => return other,
            }
        }
    }

    /// Replaces the metadata of `owner`'s task `id` if it is still at
    /// `expected_version`, in any state, terminal ones too: the protocol
    /// layer's bookkeeping about a task (A2A's push configurations) may
    /// change after it ended; its status, result and error never do.
    pub async fn annotate(
        &self,
        owner: &str,
        id: &TaskId,
        expected_version: u64,
        metadata: Value,
    ) -> Result<TaskRecord, TaskError> {
        self.check_size("metadata", Some(&metadata))?;
        let current = self.get(owner, id).await?;
        if current.version != expected_version {
            return Err(TaskError::VersionConflict {
                id: id.clone(),
                expected: expected_version,
                actual: current.version,
            });
        }
        let next = TaskRecord {
            metadata: Some(metadata),
            version: current.version + 1,
            ..current
        };
        if !self.store.annotate(&next, expected_version).await? {
            let actual = self.get(owner, id).await.map_or(expected_version, |now| now.version);
            return Err(TaskError::VersionConflict {
                id: id.clone(),
                expected: expected_version,
                actual,
            });
        }
        self.publish(&next);
        Ok(next)
    }

    /// Cancels `owner`'s task `id`. A task that already ended stays as it
    /// ended and the caller gets [`TaskError::AlreadyTerminal`].
    pub async fn cancel(&self, owner: &str, id: &TaskId, message: Option<String>) -> Result<TaskRecord, TaskError> {
        let mut change = Transition::cancel();
        change.message = message;
        self.update(owner, id, change).await
    }

    /// Extends this runner's lease on a task it runs. A runner whose task
    /// was handed to another runner meanwhile (its lease had run out) gets
    /// [`TaskError::LeaseLost`] and should stop working on it.
    pub async fn renew_lease(&self, owner: &str, id: &TaskId) -> Result<TaskRecord, TaskError> {
        let mut attempt = 0;
        loop {
            let current = self.get(owner, id).await?;
            if current.status.is_terminal() {
                return Err(already_terminal(&current));
            }
            if current.lease.as_ref().is_some_and(|l| l.owner != self.config.runner_id) {
                return Err(TaskError::LeaseLost(id.clone()));
            }
            let now = self.clock.now_ms();
            let mut next = current.clone();
            next.lease = Some(self.lease_from(now));
            next.version += 1;
            // Not published: a renewal changes nothing a watcher shows.
            match self.swap_quietly(owner, &next, current.version).await {
                Ok(()) => return Ok(next),
                Err(TaskError::VersionConflict { .. }) if attempt + 1 < UPDATE_ATTEMPTS => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Follows `owner`'s task `id`: its current state first, then each
    /// change this engine makes, until it ends.
    pub async fn watch(&self, owner: &str, id: &TaskId) -> Result<TaskWatch, TaskError> {
        // Subscribed before the read, so no change falls between the two.
        let receiver = self.events.subscribe();
        let current = self.get(owner, id).await?;
        Ok(TaskWatch::new(Arc::clone(&self.store), current, receiver))
    }

    /// The task after `change`, or why `change` is not allowed.
    pub(crate) fn apply(&self, current: &TaskRecord, change: Transition) -> Result<TaskRecord, TaskError> {
        let status = change.status;
        let waits = matches!(status, TaskStatus::InputRequired | TaskStatus::AuthRequired);
        if change.result.is_some() && status != TaskStatus::Completed {
            return Err(TaskError::InvalidTransition(format!(
                "a {status} task carries no result"
            )));
        }
        if change.error.is_some() && !matches!(status, TaskStatus::Failed | TaskStatus::Rejected) {
            return Err(TaskError::InvalidTransition(format!(
                "a {status} task carries no error"
            )));
        }
        if change.input_requests.is_some() && !waits {
            return Err(TaskError::InvalidTransition(format!(
                "a {status} task waits for no input"
            )));
        }
        self.check_size("result", change.result.as_ref())?;
        self.check_size("error", change.error.as_ref())?;
        self.check_size("input requests", change.input_requests.as_ref())?;
        self.check_size("metadata", change.metadata.as_ref())?;
        let now = self.clock.now_ms().max(current.updated_at);
        let lease = if status.is_terminal() || change.release_lease {
            None
        } else {
            // A task nobody held is run by whoever moves it on.
            Some(current.lease.clone().unwrap_or_else(|| self.lease_from(now)))
        };
        Ok(TaskRecord {
            status,
            status_message: change.message,
            updated_at: now,
            input_requests: change.input_requests,
            result: change.result,
            error: change.error,
            version: current.version + 1,
            lease,
            metadata: change.metadata.or_else(|| current.metadata.clone()),
            ..current.clone()
        })
    }

    /// Writes `next` if the task is still at `expected_version`, and tells
    /// watchers.
    pub(crate) async fn swap(
        &self,
        owner: &str,
        next: TaskRecord,
        expected_version: u64,
    ) -> Result<TaskRecord, TaskError> {
        self.swap_quietly(owner, &next, expected_version).await?;
        self.publish(&next);
        Ok(next)
    }

    async fn swap_quietly(&self, owner: &str, next: &TaskRecord, expected_version: u64) -> Result<(), TaskError> {
        if self.store.swap(next, expected_version).await? {
            return Ok(());
        }
        // Lost: say to what.
        match self.store.get(owner, &next.id).await? {
            None => Err(TaskError::NotFound(next.id.clone())),
            Some(now) if now.status.is_terminal() => Err(already_terminal(&now)),
            Some(now) => Err(TaskError::VersionConflict {
                id: next.id.clone(),
                expected: expected_version,
                actual: now.version,
            }),
        }
    }

    pub(crate) fn publish(&self, task: &TaskRecord) {
        // Nobody listening is fine.
        let _ = self.events.send(TaskEvent::Changed(Arc::new(task.clone())));
    }

    pub(crate) fn lease_from(&self, now: Millis) -> Lease {
        Lease {
            owner: self.config.runner_id.clone(),
            expires_at: now.saturating_add(i64::try_from(self.config.lease.as_millis()).unwrap_or(i64::MAX)),
        }
    }

    fn check_size(&self, what: &str, value: Option<&Value>) -> Result<(), TaskError> {
        let Some(value) = value else { return Ok(()) };
        let size = serde_json::to_string(value).map_or(usize::MAX, |s| s.len());
        if size > self.config.max_value_bytes {
            return Err(TaskError::InvalidRequest(format!(
                "the task's {what} is {size} bytes, over the limit of {} bytes",
                self.config.max_value_bytes
            )));
        }
        Ok(())
    }
}

fn already_terminal(task: &TaskRecord) -> TaskError {
    TaskError::AlreadyTerminal {
        id: task.id.clone(),
        status: task.status,
    }
}

fn check_name(what: &str, name: &str) -> Result<(), TaskError> {
    if name.is_empty() {
        return Err(TaskError::InvalidRequest(format!("a task needs a non-empty {what}")));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(TaskError::InvalidRequest(format!(
            "the task's {what} is {} bytes, over the limit of {MAX_NAME_LEN}",
            name.len()
        )));
    }
    Ok(())
}

fn millis(ms: u64) -> Millis {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The cursor after `task`: its creation time and id. Opaque to clients.
fn encode_cursor(task: &TaskRecord) -> String {
    format!("{}.{}", task.created_at, task.id)
}

fn decode_cursor(cursor: &str) -> Result<ListPosition, TaskError> {
    let invalid = || TaskError::InvalidRequest("the cursor is not one this server handed out".into());
    let (created_at, id) = cursor.split_once('.').ok_or_else(invalid)?;
    let created_at: Millis = created_at.parse().map_err(|_| invalid())?;
    if id.is_empty() || id.len() > MAX_ID_LEN {
        return Err(invalid());
    }
    Ok(ListPosition {
        created_at,
        id: TaskId::from(id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        let position = decode_cursor("1700000000000.abc").unwrap();
        assert_eq!(position.created_at, 1_700_000_000_000);
        assert_eq!(position.id.as_str(), "abc");
        for bad in [
            "",
            ".",
            "abc",
            "12.",
            "x.abc",
            &format!("1.{}", "a".repeat(MAX_ID_LEN + 1)),
        ] {
            assert!(
                matches!(decode_cursor(bad), Err(TaskError::InvalidRequest(_))),
                "{bad:?}"
            );
        }
    }
}
