//! Calling a tool as a task, in either revision: 2025-11-25 (`params.task`,
//! `tasks/get|result|list|cancel`) and 2026-07-28's extension
//! `io.modelcontextprotocol/tasks` (declared on the call, `tasks/get` with
//! the result inline, input answered with `tasks/update`). One shape of
//! task ([`TaskState`]) for both.

use std::time::Duration;

use toolport_protocol::mrtr::InputRequests;
use toolport_protocol::tasks::{self as wire, DetailedTask, EXTENSION, ListTasksResult, Task};
use toolport_protocol::{ErrorObject, ProtocolVersion};

use super::*;

/// A task as either revision shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    /// The id.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// A word on the status (progress, or why it failed).
    pub status_message: Option<String>,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601.
    pub last_updated_at: String,
    /// How long the server keeps it; `None` for unlimited.
    pub ttl_ms: Option<u64>,
    /// How often to poll.
    pub poll_interval_ms: Option<u64>,
    /// What it waits for (2026-07-28 `tasks/get`).
    pub input_requests: Option<InputRequests>,
    /// The tool's result, once completed (2026-07-28 `tasks/get`).
    pub result: Option<CallToolResult>,
    /// The JSON-RPC error it failed with (2026-07-28 `tasks/get`).
    pub error: Option<ErrorObject>,
}

impl TaskState {
    /// Whether it ended.
    pub fn is_terminal(&self) -> bool {
        wire::is_terminal(&self.status)
    }

    fn from_v1(task: Task) -> TaskState {
        TaskState {
            task_id: task.task_id,
            status: task.status,
            status_message: task.status_message,
            created_at: task.created_at,
            last_updated_at: task.last_updated_at,
            ttl_ms: task.ttl,
            poll_interval_ms: task.poll_interval,
            input_requests: None,
            result: None,
            error: None,
        }
    }

    fn from_v2(task: DetailedTask) -> Result<TaskState, ClientError> {
        let result = task
            .result
            .map(|r| serde_json::from_value(Value::Object(r)))
            .transpose()
            .map_err(|e| ClientError::Protocol(format!("a task's result: {e}")))?;
        let error = task.error.and_then(|e| serde_json::from_value(e).ok());
        Ok(TaskState {
            task_id: task.task_id,
            status: task.status,
            status_message: task.status_message,
            created_at: task.created_at,
            last_updated_at: task.last_updated_at,
            ttl_ms: task.ttl_ms,
            poll_interval_ms: task.poll_interval_ms,
            input_requests: task.input_requests,
            result,
            error,
        })
    }
}

/// What a call made as a task answered.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskStart {
    /// The server made it a task.
    Task(Box<TaskState>),
    /// The server answered at once (2026-07-28 lets it; a tool that
    /// cannot run as a task does too).
    Done(CallToolResult),
}

fn protocol<T: DeserializeOwned>(what: &str, value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::Protocol(format!("{what}: {e}")))
}

/// `_meta` that adds the tasks extension to the capabilities this request
/// declares (2026-07-28; the handshake era ignores it).
fn declaring_tasks() -> Value {
    json!({ keys::CLIENT_CAPABILITIES: { "extensions": { EXTENSION: {} } } })
}

impl Client {
    async fn stateless(&self) -> Result<bool, ClientError> {
        Ok(self.server().await?.era() == Era::Stateless)
    }

    /// Calls a tool as a task: 2025-11-25 sends `params.task` (with
    /// `ttl_ms`), 2026-07-28 declares the tasks extension on this call and
    /// lets the server decide. The server may still answer at once.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
        options: CallOptions,
    ) -> Result<TaskStart, ClientError> {
        let server = self.server().await?;
        if server.era() == Era::Handshake && server.protocol_version < ProtocolVersion::V2025_11_25 {
            return Err(ClientError::InvalidInput(format!(
                "the server speaks {}, which has no tasks (2025-11-25 or later needed)",
                server.protocol_version
            )));
        }
        let mut params = json!({ "name": name, "arguments": arguments });
        if server.era() == Era::Stateless {
            params["_meta"] = declaring_tasks();
        } else {
            params["task"] = match ttl_ms {
                Some(ttl) => json!({ "ttl": ttl }),
                None => json!({}),
            };
        }
        let answer = self.request(tools::CALL, params, options).await?;
        if answer.get("resultType").and_then(Value::as_str) == Some(wire::RESULT_TYPE_TASK) {
            let task = TaskState::from_v2(protocol("CreateTaskResult", answer)?)?;
            return Ok(TaskStart::Task(Box::new(task)));
        }
        if let Some(task) = answer.get("task") {
            let task = TaskState::from_v1(protocol("CreateTaskResult", task.clone())?);
            return Ok(TaskStart::Task(Box::new(task)));
        }
        Ok(TaskStart::Done(protocol("CallToolResult", answer)?))
    }

    /// A task's state.
    pub async fn get_task(&self, id: &str) -> Result<TaskState, ClientError> {
        if self.stateless().await? {
            let answer = self
                .request(
                    wire::GET,
                    json!({ "taskId": id, "_meta": declaring_tasks() }),
                    CallOptions::default(),
                )
                .await?;
            return TaskState::from_v2(protocol("tasks/get", answer)?);
        }
        let answer = self
            .request(wire::GET, json!({ "taskId": id }), CallOptions::default())
            .await?;
        Ok(TaskState::from_v1(protocol("tasks/get", answer)?))
    }

    /// Cancels a task. 2025-11-25 refuses a task that ended (-32602);
    /// 2026-07-28 acknowledges any.
    pub async fn cancel_task(&self, id: &str) -> Result<(), ClientError> {
        let mut params = json!({ "taskId": id });
        if self.stateless().await? {
            params["_meta"] = declaring_tasks();
        }
        self.request(wire::CANCEL, params, CallOptions::default()).await?;
        Ok(())
    }

    /// A page of this caller's tasks (2025-11-25; 2026-07-28 has no list).
    pub async fn list_tasks(&self, cursor: Option<&str>) -> Result<(Vec<TaskState>, Option<String>), ClientError> {
        if self.stateless().await? {
            return Err(ClientError::InvalidInput(
                "protocol version 2026-07-28 has no tasks/list; keep the ids of your tasks".into(),
            ));
        }
        let params = match cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let page: ListTasksResult = protocol(
            "tasks/list",
            self.request(wire::LIST, params, CallOptions::default()).await?,
        )?;
        Ok((
            page.tasks.into_iter().map(TaskState::from_v1).collect(),
            page.next_cursor,
        ))
    }

    /// Waits for a task's end and returns the tool's result (or the JSON-RPC
    /// error it failed with, as [`ClientError::Remote`]). 2025-11-25 blocks
    /// in `tasks/result` (the client's handler answers the task's questions
    /// on that stream); 2026-07-28 polls `tasks/get` at the interval the
    /// task suggests, answering its input requests with `tasks/update`.
    /// `seen` gets each state as it is polled (2026-07-28).
    pub async fn task_result(
        &self,
        id: &str,
        seen: Option<tokio::sync::mpsc::UnboundedSender<TaskState>>,
    ) -> Result<CallToolResult, ClientError> {
        if !self.stateless().await? {
            // As long as the task takes: a task is for work that outlives a request.
            let options = CallOptions::default().timeout(Duration::from_secs(7 * 24 * 3600));
            let mut answer = self.request(wire::RESULT, json!({ "taskId": id }), options).await?;
            if let Some(meta) = answer.get_mut("_meta").and_then(Value::as_object_mut) {
                meta.remove(wire::RELATED_TASK);
            }
            return protocol("CallToolResult", answer);
        }
        let mut answered = BTreeSet::new();
        loop {
            let task = self.get_task(id).await?;
            if let Some(seen) = &seen {
                let _ = seen.send(task.clone());
            }
            match task.status.as_str() {
                "completed" => {
                    return task
                        .result
                        .ok_or_else(|| ClientError::Protocol("a completed task without a result".into()));
                }
                "failed" => {
                    return Err(ClientError::Remote(task.error.unwrap_or_else(|| {
                        ErrorObject::internal(task.status_message.unwrap_or_else(|| "the task failed".into()))
                    })));
                }
                "cancelled" => return Err(ClientError::Remote(ErrorObject::internal("the task was cancelled"))),
                _ => {}
            }
            let mut responses = Map::new();
            for (key, input) in task.input_requests.clone().unwrap_or_default() {
                if answered.contains(&key) {
                    continue;
                }
                let method = input.method();
                let answer = handler::answer(self.inner.inbound.handler.as_ref(), input)
                    .await
                    .map_err(|e| ClientError::InputUnavailable(format!("{method} ({key}): {}", e.message)))?;
                responses.insert(key.clone(), answer);
                answered.insert(key);
            }
            if !responses.is_empty() {
                let params = json!({ "taskId": id, "inputResponses": responses, "_meta": declaring_tasks() });
                self.request(wire::UPDATE, params, CallOptions::default()).await?;
                continue;
            }
            let wait = task.poll_interval_ms.unwrap_or(1000).clamp(10, 60_000);
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
    }
}
