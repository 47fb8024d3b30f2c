//! A2A tasks as records of the durable task engine.
//!
//! The engine owns the task's id, owner, state, version, lease and time to
//! live; what only A2A knows (history, artifacts, the status message, push
//! configurations, the agent's own state between turns, and what the last
//! change was, for streams) rides in the record's `metadata`. Every change
//! is a compare-and-swap of the whole record, so of two writers that read
//! the same version exactly one wins, and the loser re-reads.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolport_tasks::{NewTask, TaskEngine, TaskError, TaskId, TaskRecord, TaskStatus, Transition};

use crate::error::A2aError;
use crate::ids;
use crate::types::{
    Artifact, Message, PushConfig, Status, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatusUpdateEvent,
};

/// How many times a change re-reads a task that keeps changing under it.
const CHANGE_ATTEMPTS: usize = 32;

/// What the last change of a task was, so every stream turns a record
/// version into the same event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub(crate) enum Event {
    /// The status changed.
    Status,
    /// An artifact was added or grew by these parts.
    Artifact {
        /// The artifact as streamed (only the new parts when `append`).
        artifact: Artifact,
        /// Whether the parts add to an artifact sent before.
        append: bool,
        /// Whether the artifact is complete.
        last_chunk: bool,
    },
    /// Nothing a stream shows (a push configuration changed).
    Quiet,
}

/// The A2A side of a task record, kept in its `metadata`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Extras {
    pub(crate) history: Vec<Message>,
    pub(crate) artifacts: Vec<Artifact>,
    pub(crate) status_message: Option<Message>,
    pub(crate) status_at: i64,
    /// The record version the status fields above were written at; a record
    /// changed by someone else (recovery failing a dead runner's task) has
    /// another, and its own status message is shown instead.
    pub(crate) status_version: u64,
    pub(crate) push: Vec<PushConfig>,
    pub(crate) event: Option<Event>,
    pub(crate) event_version: u64,
    /// The agent's own state between turns.
    pub(crate) agent: Option<Value>,
    /// The client's metadata of the task.
    pub(crate) metadata: Option<Map<String, Value>>,
}

impl Extras {
    pub(crate) fn of(record: &TaskRecord) -> Extras {
        record
            .metadata
            .clone()
            .and_then(|m| serde_json::from_value(m).ok())
            .unwrap_or_default()
    }
}

/// A change to make: the next state and what the A2A side becomes.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) state: TaskStatus,
    pub(crate) event: Event,
    /// Nobody runs the task until its next message (input required).
    pub(crate) release_lease: bool,
}

impl Change {
    /// A status change to `state`.
    pub(crate) fn status(state: TaskStatus) -> Change {
        Change {
            state,
            event: Event::Status,
            release_lease: false,
        }
    }
}

/// The A2A tasks of one engine.
#[derive(Debug, Clone)]
pub struct TaskBook {
    engine: TaskEngine,
}

impl TaskBook {
    /// A2A tasks kept by `engine`.
    pub fn new(engine: TaskEngine) -> TaskBook {
        TaskBook { engine }
    }

    /// The engine underneath.
    pub fn engine(&self) -> &TaskEngine {
        &self.engine
    }

    /// Creates `owner`'s task for `message` (already validated), in
    /// `context_id`, to be run by `skill`; `SUBMITTED`.
    pub(crate) async fn create(
        &self,
        owner: &str,
        message: Message,
        context_id: String,
        skill: &str,
        metadata: Option<Map<String, Value>>,
    ) -> Result<TaskRecord, A2aError> {
        let extras = Extras {
            history: vec![message],
            event: Some(Event::Status),
            event_version: 1,
            status_version: 1,
            metadata,
            ..Extras::default()
        };
        let new = NewTask::new(owner, skill, Value::Object(Map::new()))
            .status(TaskStatus::Submitted)
            .context_id(context_id)
            .metadata(to_value(&extras)?);
        Ok(self.engine.create(new).await?)
    }

    /// `owner`'s task `id`.
    pub(crate) async fn get(&self, owner: &str, id: &str) -> Result<TaskRecord, A2aError> {
        Ok(self.engine.get(owner, &TaskId::from(id)).await?)
    }

    /// Changes `owner`'s task `id` by `change`, which sees the task as it is
    /// and edits its A2A side; retried from a fresh read when another writer
    /// got there first. `Ok(None)` from `change` leaves the task alone.
    pub(crate) async fn change<F>(&self, owner: &str, id: &str, mut change: F) -> Result<TaskRecord, A2aError>
    where
        F: FnMut(&TaskRecord, &mut Extras) -> Result<Option<Change>, A2aError>,
    {
        let id = TaskId::from(id);
        for _ in 0..CHANGE_ATTEMPTS {
            let current = self.engine.get(owner, &id).await?;
            let mut extras = Extras::of(&current);
            let Some(next) = change(&current, &mut extras)? else {
                return Ok(current);
            };
            let version = current.version + 1;
            if next.event == Event::Quiet && current.status.is_terminal() {
                // Bookkeeping after the end (a push configuration deleted).
                extras.event = Some(Event::Quiet);
                extras.event_version = version;
                match self
                    .engine
                    .annotate(owner, &id, current.version, to_value(&extras)?)
                    .await
                {
                    Err(TaskError::VersionConflict { .. }) => continue,
                    other => return Ok(other?),
                }
            }
            if next.event == Event::Status {
                extras.status_version = version;
                extras.status_at = now_ms();
            }
            extras.event = Some(next.event);
            extras.event_version = version;
            let mut transition = Transition::to(next.state).metadata(to_value(&extras)?);
            if let Some(message) = extras
                .status_message
                .as_ref()
                .map(Message::text)
                .filter(|t| !t.is_empty())
            {
                transition = transition.message(message);
            }
            if next.release_lease {
                transition = transition.release_lease();
            }
            match self.engine.transition(owner, &id, current.version, transition).await {
                Err(TaskError::VersionConflict { .. }) => continue,
                other => return Ok(other?),
            }
        }
        Err(A2aError::Internal(format!(
            "task {id} kept changing under this request; retry"
        )))
    }

    /// Cancels `owner`'s task `id`.
    pub(crate) async fn cancel(&self, owner: &str, id: &str) -> Result<TaskRecord, A2aError> {
        let outcome = self
            .change(owner, id, |_, extras| {
                extras.status_message = Some(Message::agent(vec![crate::types::Part::text(
                    "cancelled by the client",
                )]));
                Ok(Some(Change::status(TaskStatus::Cancelled)))
            })
            .await;
        match outcome {
            Err(A2aError::UnsupportedOperation(why)) => Err(A2aError::TaskNotCancelable(why)),
            other => other,
        }
    }

    /// A page of `owner`'s tasks, newest first, as the engine pages them.
    pub(crate) async fn page(
        &self,
        owner: &str,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<(Vec<TaskRecord>, Option<String>), A2aError> {
        let page = self.engine.list(owner, cursor, Some(size)).await?;
        Ok((page.tasks, page.next_cursor))
    }
}

/// The task as clients see it: `history_length` of its latest messages
/// (all when `None`, none at 0) and its artifacts when asked for.
pub(crate) fn task_of(record: &TaskRecord, history_length: Option<i32>, include_artifacts: bool) -> Task {
    let extras = Extras::of(record);
    let id = record.id.to_string();
    let context_id = record.context_id.clone().unwrap_or_default();
    let history = match history_length {
        Some(n) if n <= 0 => None,
        limit => {
            let skip = limit.map_or(0, |n| extras.history.len().saturating_sub(n as usize));
            let messages = extras.history[skip..].iter().map(|m| in_task(m, &id, &context_id));
            Some(messages.collect())
        }
    };
    Task {
        status: status_of(record, &extras),
        artifacts: include_artifacts.then(|| extras.artifacts.clone()),
        history,
        metadata: extras.metadata.clone(),
        id,
        context_id,
    }
}

/// The stream item a record's last change makes; `None` for changes a
/// stream does not show.
pub(crate) fn event_of(record: &TaskRecord) -> Option<StreamResponse> {
    let extras = Extras::of(record);
    let (task_id, context_id) = (record.id.to_string(), record.context_id.clone().unwrap_or_default());
    let event = match (&extras.event, extras.event_version == record.version) {
        (Some(Event::Quiet), true) => return None,
        (
            Some(Event::Artifact {
                artifact,
                append,
                last_chunk,
            }),
            true,
        ) => StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id,
            context_id,
            artifact: artifact.clone(),
            append: *append,
            last_chunk: *last_chunk,
            metadata: None,
        }),
        // A status change, ours or another writer's (recovery).
        _ => StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            status: status_of(record, &extras),
            task_id,
            context_id,
            metadata: None,
        }),
    };
    Some(event)
}

/// The record's status: ours, or the engine's word when someone else set it.
fn status_of(record: &TaskRecord, extras: &Extras) -> Status {
    let (message, at) = if extras.status_version == record.version || extras.event_version == record.version {
        (extras.status_message.clone(), extras.status_at.max(record.created_at))
    } else {
        let said = record
            .status_message
            .as_deref()
            .map(|text| Message::agent(vec![crate::types::Part::text(text)]));
        (said, record.updated_at)
    };
    let (id, context_id) = (record.id.to_string(), record.context_id.clone().unwrap_or_default());
    Status {
        state: TaskState::from(record.status),
        message: message.map(|m| in_task(&m, &id, &context_id)),
        timestamp: Some(ids::timestamp(at)),
    }
}

/// `message` with its task and context filled in.
fn in_task(message: &Message, task_id: &str, context_id: &str) -> Message {
    let mut message = message.clone();
    message.task_id.get_or_insert_with(|| task_id.to_owned());
    message.context_id.get_or_insert_with(|| context_id.to_owned());
    message
}

fn to_value(extras: &Extras) -> Result<Value, A2aError> {
    serde_json::to_value(extras).map_err(|e| A2aError::Internal(format!("a task could not be encoded: {e}")))
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
