//! A task record as each revision shows it. The record is the same for
//! both; what differs is chosen here, when it is read:
//!
//! - 2025-11-25: `ttl`/`pollInterval`, and a tool result with `isError`
//!   shows as `failed` (`basic/utilities/tasks`, "Task Status");
//! - 2026-07-28: `ttlMs`/`pollIntervalMs`, `completed` covers `isError`
//!   results and `failed` only JSON-RPC errors, which `tasks/get` carries
//!   inline with the input requests.

use std::time::Duration;

use serde_json::{Map, Value};
use toolport_protocol::result::ResultType;
use toolport_protocol::tasks::{DetailedTask, RESULT_TYPE_TASK, Task};
use toolport_tasks::{TaskRecord, TaskStatus};

use crate::audit::rfc3339;

fn iso(ms: i64) -> String {
    rfc3339(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

/// Whether a completed task's result is a tool's own failure.
fn is_tool_error(task: &TaskRecord) -> bool {
    task.result
        .as_ref()
        .and_then(|r| r.get("isError"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The 2025-11-25 `Task`.
pub(crate) fn task_v1(task: &TaskRecord) -> Task {
    let status = if task.status == TaskStatus::Completed && is_tool_error(task) {
        "failed"
    } else {
        task.status.mcp_name()
    };
    Task {
        task_id: task.id.to_string(),
        status: status.to_owned(),
        status_message: task.status_message.clone(),
        created_at: iso(task.created_at),
        last_updated_at: iso(task.updated_at),
        ttl: task.ttl_ms,
        poll_interval: Some(task.poll_interval_ms),
        meta: None,
    }
}

/// The 2026-07-28 `DetailedTask` of `tasks/get` and `notifications/tasks`:
/// what the status carries, inline.
pub(crate) fn detailed(task: &TaskRecord) -> DetailedTask {
    let mut shown = created(task);
    shown.result_type = Some(ResultType::Complete);
    match task.status {
        TaskStatus::InputRequired | TaskStatus::AuthRequired => {
            shown.input_requests = task
                .input_requests
                .clone()
                .and_then(|r| serde_json::from_value(r).ok())
                .or_else(|| Some(Default::default()));
        }
        TaskStatus::Completed => {
            shown.result = Some(match task.result.clone() {
                Some(Value::Object(result)) => without_result_type(result),
                _ => Map::new(),
            });
        }
        TaskStatus::Failed | TaskStatus::Rejected => shown.error = task.error.clone(),
        _ => {}
    }
    shown
}

/// The 2026-07-28 `CreateTaskResult`: the base fields, nothing inline.
pub(crate) fn created(task: &TaskRecord) -> DetailedTask {
    DetailedTask {
        task_id: task.id.to_string(),
        status: task.status.mcp_name().to_owned(),
        status_message: task.status_message.clone(),
        created_at: iso(task.created_at),
        last_updated_at: iso(task.updated_at),
        ttl_ms: task.ttl_ms,
        poll_interval_ms: Some(task.poll_interval_ms),
        input_requests: None,
        result: None,
        error: None,
        result_type: Some(ResultType::Other(RESULT_TYPE_TASK.to_owned())),
        meta: None,
    }
}

/// The stored tool result keeps what the handler returned; inline, it is
/// the `CallToolResult` of 2026-07-28 (its own `resultType` included).
fn without_result_type(mut result: Map<String, Value>) -> Map<String, Value> {
    result.insert("resultType".into(), Value::String("complete".into()));
    result.remove("_meta");
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolport_tasks::{NewTask, TaskId};

    use super::*;

    fn record(status: TaskStatus, result: Option<Value>) -> TaskRecord {
        let new = NewTask::new("o", "t", json!({}));
        TaskRecord {
            id: TaskId::generate(),
            owner: new.owner,
            status,
            status_message: None,
            created_at: 1_764_000_000_000,
            updated_at: 1_764_000_000_500,
            ttl_ms: Some(60_000),
            expires_at: None,
            poll_interval_ms: 1000,
            input_requests: None,
            result,
            error: None,
            version: 1,
            lease: None,
            resumable: false,
            tool: new.tool,
            arguments: new.arguments,
            context_id: None,
            metadata: None,
        }
    }

    #[test]
    fn a_tool_error_is_failed_in_2025_and_completed_in_2026() {
        let task = record(TaskStatus::Completed, Some(json!({"content": [], "isError": true})));
        assert_eq!(task_v1(&task).status, "failed");
        let shown = detailed(&task);
        assert_eq!(shown.status, "completed");
        assert_eq!(shown.result.unwrap()["isError"], true);
        let ok = record(TaskStatus::Completed, Some(json!({"content": []})));
        assert_eq!(task_v1(&ok).status, "completed");
        assert_eq!(task_v1(&ok).created_at, "2025-11-24T16:00:00.000Z");
    }

    #[test]
    fn a_created_task_carries_nothing_inline() {
        let shown = serde_json::to_value(created(&record(TaskStatus::Working, None))).unwrap();
        assert_eq!(shown["resultType"], "task");
        assert_eq!(shown["ttlMs"], 60_000);
        for absent in [
            "result",
            "error",
            "inputRequests",
            "ttl",
            "pollInterval",
            "requestState",
        ] {
            assert!(shown.get(absent).is_none(), "{absent}");
        }
    }
}
