//! The task record as stored, and the requests that make and change one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::id::TaskId;
use crate::status::TaskStatus;

/// Milliseconds since the Unix epoch: every time in a record.
pub type Millis = i64;

/// Who runs a task right now, and until when. A runner renews its lease
/// while it works; a lease left to expire means the runner's process died,
/// and recovery fails the task or hands it to another runner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The runner holding the task (one engine: one process).
    pub owner: String,
    /// When the lease runs out unless renewed.
    pub expires_at: Millis,
}

/// One durable task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The unguessable id.
    pub id: TaskId,
    /// The principal that created the task: the only one who can see it.
    pub owner: String,
    /// Where the task stands.
    pub status: TaskStatus,
    /// A human-readable word on the status (MCP `statusMessage`).
    pub status_message: Option<String>,
    /// When the task was created.
    pub created_at: Millis,
    /// When the task last changed.
    pub updated_at: Millis,
    /// How long after creation the task and its result are kept; `None`
    /// keeps it until deleted.
    pub ttl_ms: Option<u64>,
    /// `created_at + ttl_ms`: when the sweeper deletes the task. Stored so
    /// the sweep is one indexed range query.
    pub expires_at: Option<Millis>,
    /// How often a requester should poll, in milliseconds.
    pub poll_interval_ms: u64,
    /// What the task waits for while `input_required` (MCP input requests,
    /// A2A's agent message), as the protocol layer shaped it.
    pub input_requests: Option<Value>,
    /// The result of a `completed` task, as the protocol layer shaped it.
    pub result: Option<Value>,
    /// The error of a `failed` task (a JSON-RPC error object for MCP).
    pub error: Option<Value>,
    /// Grows by one with every change; transitions compare and swap it.
    pub version: u64,
    /// The runner holding the task; `None` once terminal or while nobody
    /// needs to run it (an A2A task waiting for the next message).
    pub lease: Option<Lease>,
    /// Whether another runner may run the task again from the start when
    /// its runner died, instead of failing it.
    pub resumable: bool,
    /// What runs: the tool's name (for A2A, the skill).
    pub tool: String,
    /// The arguments it runs with, kept to run it again.
    pub arguments: Value,
    /// A2A's `contextId`, grouping a conversation's tasks.
    pub context_id: Option<String>,
    /// Protocol-specific extras the engine keeps without reading (A2A
    /// history and artifacts, MCP request `_meta`).
    pub metadata: Option<Value>,
}

/// What a requester asks for when creating a task.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    /// The principal creating it.
    pub owner: String,
    /// The tool (or skill) to run.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The requested time to live; the engine may shorten it.
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval; the engine's default when `None`.
    pub poll_interval_ms: Option<u64>,
    /// May it be run again by another runner after a crash?
    pub resumable: bool,
    /// The first status: `working` for MCP, `submitted` for A2A.
    pub status: TaskStatus,
    /// A2A's `contextId`.
    pub context_id: Option<String>,
    /// Protocol-specific extras.
    pub metadata: Option<Value>,
}

impl NewTask {
    /// A `working` task of `owner` running `tool` with `arguments`, with the
    /// engine's defaults for everything else.
    pub fn new(owner: impl Into<String>, tool: impl Into<String>, arguments: Value) -> NewTask {
        NewTask {
            owner: owner.into(),
            tool: tool.into(),
            arguments,
            ttl_ms: None,
            poll_interval_ms: None,
            resumable: false,
            status: TaskStatus::Working,
            context_id: None,
            metadata: None,
        }
    }

    /// Keep the task `ttl_ms` after creation.
    pub fn ttl_ms(mut self, ttl_ms: u64) -> NewTask {
        self.ttl_ms = Some(ttl_ms);
        self
    }

    /// Suggest polling every `ms`.
    pub fn poll_interval_ms(mut self, ms: u64) -> NewTask {
        self.poll_interval_ms = Some(ms);
        self
    }

    /// Let another runner run it again after a crash.
    pub fn resumable(mut self, resumable: bool) -> NewTask {
        self.resumable = resumable;
        self
    }

    /// Start in `status` (must not be terminal).
    pub fn status(mut self, status: TaskStatus) -> NewTask {
        self.status = status;
        self
    }

    /// Group it under an A2A `contextId`.
    pub fn context_id(mut self, context_id: impl Into<String>) -> NewTask {
        self.context_id = Some(context_id.into());
        self
    }

    /// Attach protocol-specific extras.
    pub fn metadata(mut self, metadata: Value) -> NewTask {
        self.metadata = Some(metadata);
        self
    }
}

/// One change of a task: its next status and what comes with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// The status after the change.
    pub status: TaskStatus,
    /// The status message after the change (`None` clears it).
    pub message: Option<String>,
    /// The input the task waits for; only with `input_required` or
    /// `auth_required`, and cleared by any other status.
    pub input_requests: Option<Value>,
    /// The result; only with `completed`.
    pub result: Option<Value>,
    /// The error; only with `failed` or `rejected`.
    pub error: Option<Value>,
    /// Replaces the metadata when `Some`.
    pub metadata: Option<Value>,
    /// Gives up the lease: nobody needs to run the task until its next
    /// change (an A2A task waiting for a message). Terminal states always
    /// give it up.
    pub release_lease: bool,
}

impl Transition {
    /// A change to `status` with nothing attached.
    pub fn to(status: TaskStatus) -> Transition {
        Transition {
            status,
            message: None,
            input_requests: None,
            result: None,
            error: None,
            metadata: None,
            release_lease: false,
        }
    }

    /// `completed` with `result`.
    pub fn complete(result: Value) -> Transition {
        Transition::to(TaskStatus::Completed).result(result)
    }

    /// `failed` with `error`.
    pub fn fail(error: Value) -> Transition {
        Transition::to(TaskStatus::Failed).error(error)
    }

    /// `cancelled`.
    pub fn cancel() -> Transition {
        Transition::to(TaskStatus::Cancelled)
    }

    /// With a status message.
    pub fn message(mut self, message: impl Into<String>) -> Transition {
        self.message = Some(message.into());
        self
    }

    /// With the input the task waits for.
    pub fn input_requests(mut self, requests: Value) -> Transition {
        self.input_requests = Some(requests);
        self
    }

    /// With a result.
    pub fn result(mut self, result: Value) -> Transition {
        self.result = Some(result);
        self
    }

    /// With an error.
    pub fn error(mut self, error: Value) -> Transition {
        self.error = Some(error);
        self
    }

    /// Replacing the metadata.
    pub fn metadata(mut self, metadata: Value) -> Transition {
        self.metadata = Some(metadata);
        self
    }

    /// Giving up the lease.
    pub fn release_lease(mut self) -> Transition {
        self.release_lease = true;
        self
    }
}

/// One page of a principal's tasks, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPage {
    /// The tasks on this page.
    pub tasks: Vec<TaskRecord>,
    /// The cursor for the next page; `None` on the last one.
    pub next_cursor: Option<String>,
}
