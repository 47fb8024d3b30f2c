//! Tasks: work that outlives its request, in both shapes MCP has given them.
//!
//! - 2025-11-25 (`basic/utilities/tasks`, experimental): the `tasks`
//!   capability, `execution.taskSupport` on tools, a `task` field on
//!   `tools/call` (`CreateTaskResult` wraps a [`Task`]), and `tasks/get`,
//!   `tasks/result`, `tasks/list`, `tasks/cancel`,
//!   `notifications/tasks/status`.
//! - 2026-07-28: the extension `io.modelcontextprotocol/tasks` (SEP-2663):
//!   negotiated per request, the server decides which calls become tasks,
//!   a flat [`CreateTaskResult`] (`resultType: "task"`), `tasks/get` with the
//!   [`DetailedTask`] (input requests, result or error inline),
//!   `tasks/update`, an idempotent `tasks/cancel`, and `notifications/tasks`
//!   on `subscriptions/listen`. `tasks/result` and `tasks/list` are gone.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::Meta;
use crate::mrtr::{InputRequests, InputResponses};
use crate::result::{ResultType, mcp_result};

/// The extension's identifier (2026-07-28).
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `tasks/get`: a task's state (both revisions).
pub const GET: &str = "tasks/get";
/// `tasks/result`: block until the task ends, then its result (2025-11-25).
pub const RESULT: &str = "tasks/result";
/// `tasks/list`: the caller's tasks, paged (2025-11-25).
pub const LIST: &str = "tasks/list";
/// `tasks/cancel` (both revisions).
pub const CANCEL: &str = "tasks/cancel";
/// `tasks/update`: answers to a task's input requests (2026-07-28).
pub const UPDATE: &str = "tasks/update";
/// A task's new state (2025-11-25).
pub const STATUS_NOTIFICATION: &str = "notifications/tasks/status";
/// A task's new state, on a `subscriptions/listen` stream (2026-07-28).
pub const NOTIFICATION: &str = "notifications/tasks";
/// The `_meta` key tying a message to its task (2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The `resultType` of a [`CreateTaskResult`] (2026-07-28).
pub const RESULT_TYPE_TASK: &str = "task";

/// Whether a tool may, must or must not run as a task
/// (`Tool.execution.taskSupport`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the client asks (2025-11-25) or allows (2026-07-28).
    Optional,
    /// Only as a task.
    Required,
}

impl TaskSupport {
    /// Whether the tool can run as a task at all.
    pub fn allows_task(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

/// `Tool.execution`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Task support; absent means forbidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// The `task` field of a task-augmented request (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMetadata {
    /// The requested time to live, in milliseconds from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// A task as 2025-11-25 shows it (`Task`; also `GetTaskResult`,
/// `CancelTaskResult` and the status notification's params).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The id.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// A word on the status for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601.
    pub last_updated_at: String,
    /// Milliseconds kept after creation; `null` for unlimited (always sent).
    pub ttl: Option<u64>,
    /// Suggested milliseconds between polls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `CreateTaskResult` of 2025-11-25: the task, wrapped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateTaskResultV1 {
    /// The new task.
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `tasks/list` result (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// This page.
    pub tasks: Vec<Task>,
    /// Present when more follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A task as 2026-07-28 shows it: the base fields, and inline what its
/// status carries (`inputRequests` while `input_required`, `result` once
/// `completed`, `error` once `failed`). `tasks/get` answers it,
/// `notifications/tasks` carries it, and with `resultType: "task"` and none
/// of the inline fields it is the `CreateTaskResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The id.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// A word on the status for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601.
    pub last_updated_at: String,
    /// Integer milliseconds kept after creation; `null` for unlimited (always sent).
    pub ttl_ms: Option<u64>,
    /// Suggested integer milliseconds between polls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// What the task waits for (`input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The underlying request's result (`completed`): a `CallToolResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// The JSON-RPC error the underlying request ended with (`failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// `"task"` on a `CreateTaskResult`, `"complete"` on `tasks/get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

mcp_result!(DetailedTask);

/// The 2026-07-28 `CreateTaskResult` is a [`DetailedTask`] with
/// `resultType: "task"` and nothing inline.
pub type CreateTaskResult = DetailedTask;

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tasks/update` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers by input-request key.
    pub input_responses: InputResponses,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tasks/list` (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListTasksParams {
    /// Where to continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Whether a status is one a task never leaves.
pub fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_two_task_shapes_use_their_revisions_field_names() {
        let v1 = Task {
            task_id: "t".into(),
            status: "working".into(),
            status_message: None,
            created_at: "2025-11-25T10:30:00.000Z".into(),
            last_updated_at: "2025-11-25T10:30:00.000Z".into(),
            ttl: None,
            poll_interval: Some(500),
            meta: None,
        };
        let json = serde_json::to_value(&v1).unwrap();
        assert_eq!(json["ttl"], Value::Null, "ttl is always sent, null for unlimited");
        assert_eq!(json["pollInterval"], 500);
        let v2: DetailedTask = serde_json::from_value(json!({
            "taskId": "t", "status": "completed", "createdAt": "x", "lastUpdatedAt": "x",
            "ttlMs": 60000, "pollIntervalMs": 1000, "result": {"content": []}, "resultType": "complete"
        }))
        .unwrap();
        assert_eq!(v2.ttl_ms, Some(60000));
        assert_eq!(v2.result_type, Some(ResultType::Complete));
        assert!(is_terminal(&v2.status));
        assert_eq!(serde_json::to_value(TaskSupport::Required).unwrap(), "required");
    }
}
