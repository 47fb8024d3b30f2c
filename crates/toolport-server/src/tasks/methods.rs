//! The `tasks/*` methods, registered as the extension
//! `io.modelcontextprotocol/tasks` so they are routed like any extension's,
//! and answered by the request's revision:
//!
//! | method | 2025-11-25 | 2026-07-28 (extension declared) |
//! | --- | --- | --- |
//! | `tasks/get` | the `Task` | the `DetailedTask` (input requests, result or error inline) |
//! | `tasks/result` | blocks until terminal; the underlying result or error with the related-task `_meta`; carries the task's input requests while it waits | -32601 (removed) |
//! | `tasks/list` | the caller's tasks, newest first, by cursor | -32601 (removed) |
//! | `tasks/cancel` | the cancelled `Task`; -32602 on a terminal task | an empty ack, also on a terminal task |
//! | `tasks/update` | -32601 | answers to input requests; an empty ack |
//!
//! A 2026-07-28 request that did not declare the extension gets -32021. An
//! unknown task, or another principal's, is -32602 in both.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use toolport_protocol::mrtr::InputRequests;
use toolport_protocol::tasks::{self, ListTasksParams, ListTasksResult, RELATED_TASK, TaskIdParams, UpdateTaskParams};
use toolport_protocol::{Era, ErrorCode, ErrorObject, ProtocolVersion};
use toolport_tasks::{TaskError, TaskId, TaskRecord, TaskStatus};

use super::wire::{detailed, task_v1};
use super::{declares_extension, extension_required, owner_of};
use crate::context::INPUT_TIMEOUT;
use crate::context::RequestContext;
use crate::extension::{Extension, MethodResult};
use crate::task_state::{TaskRuntime, rpc_error};

/// The extension that answers the `tasks/*` methods of `runtime`.
pub(crate) fn extension(runtime: Arc<TaskRuntime>) -> Extension {
    let method = |name: &'static str| {
        let runtime = runtime.clone();
        move |cx: RequestContext, params: Map<String, Value>| {
            let runtime = runtime.clone();
            async move { answer(&runtime, name, cx, params).await }
        }
    };
    Extension::new(tasks::EXTENSION)
        .method(tasks::GET, method(tasks::GET))
        .method(tasks::RESULT, method(tasks::RESULT))
        .method(tasks::LIST, method(tasks::LIST))
        .method(tasks::CANCEL, method(tasks::CANCEL))
        .method(tasks::UPDATE, method(tasks::UPDATE))
}

fn not_found(method: &str, why: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method} {why}"))
}

fn parse<T: DeserializeOwned>(params: Map<String, Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(Value::Object(params)).map_err(ErrorObject::invalid_params)
}

fn task_id(params: &TaskIdParams) -> TaskId {
    TaskId::from(params.task_id.as_str())
}

fn object(value: impl serde::Serialize) -> MethodResult {
    serde_json::to_value(value).map_err(ErrorObject::internal)
}

async fn answer(runtime: &TaskRuntime, method: &str, cx: RequestContext, params: Map<String, Value>) -> MethodResult {
    let version = cx.protocol_version();
    let owner = owner_of(cx.principal());
    if version.era() == Era::Stateless {
        if matches!(method, tasks::RESULT | tasks::LIST) {
            return Err(not_found(
                method,
                "was removed by the tasks extension: poll tasks/get instead",
            ));
        }
        if !declares_extension(cx.client_capabilities()) {
            return Err(extension_required(method));
        }
        return match method {
            tasks::GET => {
                let p: TaskIdParams = parse(params)?;
                let task = runtime.engine.get(&owner, &task_id(&p)).await.map_err(rpc_error)?;
                object(detailed(&task))
            }
            tasks::UPDATE => {
                let p: UpdateTaskParams = parse(params)?;
                let id = TaskId::from(p.task_id.as_str());
                runtime
                    .deliver(&owner, &id, p.input_responses)
                    .await
                    .map_err(rpc_error)?;
                Ok(json!({}))
            }
            _ => {
                let p: TaskIdParams = parse(params)?;
                let id = task_id(&p);
                match runtime
                    .engine
                    .cancel(&owner, &id, Some("The task was cancelled by request.".into()))
                    .await
                {
                    Ok(_) => runtime.stop(&id),
                    // Idempotent: a task that ended stays as it ended.
                    Err(TaskError::AlreadyTerminal { .. }) => {}
                    Err(e) => return Err(rpc_error(e)),
                }
                Ok(json!({}))
            }
        };
    }
    if version < ProtocolVersion::V2025_11_25 {
        return Err(not_found(
            method,
            &format!("does not exist in protocol version {version}"),
        ));
    }
    match method {
        tasks::GET => {
            let p: TaskIdParams = parse(params)?;
            let task = runtime.engine.get(&owner, &task_id(&p)).await.map_err(rpc_error)?;
            object(task_v1(&task))
        }
        tasks::LIST => {
            let p: ListTasksParams = parse(params)?;
            let page = runtime
                .engine
                .list(&owner, p.cursor.as_deref(), None)
                .await
                .map_err(rpc_error)?;
            object(ListTasksResult {
                tasks: page.tasks.iter().map(task_v1).collect(),
                next_cursor: page.next_cursor,
                meta: None,
            })
        }
        tasks::CANCEL => {
            let p: TaskIdParams = parse(params)?;
            let id = task_id(&p);
            let task = runtime
                .engine
                .cancel(&owner, &id, Some("The task was cancelled by request.".into()))
                .await
                .map_err(|e| match e {
                    TaskError::AlreadyTerminal { status, .. } => ErrorObject::invalid_params(format!(
                        "Cannot cancel task: already in terminal status '{}'",
                        status.mcp_name()
                    )),
                    other => rpc_error(other),
                })?;
            runtime.stop(&id);
            object(task_v1(&task))
        }
        tasks::RESULT => {
            let p: TaskIdParams = parse(params)?;
            result_v1(runtime, &owner, &task_id(&p), &cx).await
        }
        _ => Err(not_found(method, "exists only with protocol version 2026-07-28")),
    }
}

/// `tasks/result` (2025-11-25): waits for the end, sending the task's input
/// requests to the client on this request's stream as they come, and
/// answers exactly what the underlying call would have.
async fn result_v1(runtime: &TaskRuntime, owner: &str, id: &TaskId, cx: &RequestContext) -> MethodResult {
    let mut watch = runtime.engine.watch(owner, id).await.map_err(rpc_error)?;
    let mut asked = BTreeSet::new();
    let mut poll_ms = 1000;
    loop {
        // Changes made by another process are not pushed: read again at the
        // interval the task suggests.
        let next = tokio::select! {
            next = watch.next() => next.map_err(rpc_error)?,
            _ = tokio::time::sleep(std::time::Duration::from_millis(poll_ms)) => {
                Some(runtime.engine.get(owner, id).await.map_err(rpc_error)?)
            }
            _ = cx.cancelled() => return Err(ErrorObject::new(ErrorCode::REQUEST_TIMEOUT, "Request cancelled")),
        };
        let Some(task) = next else {
            return Err(rpc_error(TaskError::NotFound(id.clone())));
        };
        poll_ms = task.poll_interval_ms.max(50);
        if task.status.is_terminal() {
            return outcome_v1(&task);
        }
        if task.status == TaskStatus::InputRequired {
            ask_client(runtime, owner, &task, &mut asked, cx).await?;
        }
    }
}

/// Sends each input request not yet sent on this stream to the client, with
/// the related-task `_meta`, and hands the answers to the task.
async fn ask_client(
    runtime: &TaskRuntime,
    owner: &str,
    task: &TaskRecord,
    asked: &mut BTreeSet<String>,
    cx: &RequestContext,
) -> Result<(), ErrorObject> {
    let requests: InputRequests = task
        .input_requests
        .clone()
        .and_then(|r| serde_json::from_value(r).ok())
        .unwrap_or_default();
    for (key, request) in requests {
        if !asked.insert(key.clone()) {
            continue;
        }
        let mut params = request.params().unwrap_or_else(|| json!({}));
        params["_meta"] = json!({ RELATED_TASK: { "taskId": task.id.to_string() } });
        let answer = cx
            .channel()
            .request(request.method().to_owned(), Some(params), INPUT_TIMEOUT)
            .await
            .map_err(|e| {
                ErrorObject::internal(format!(
                    "the client did not answer the task's {}: {e}",
                    request.method()
                ))
            })?;
        let answer: Value = serde_json::from_str(answer.get()).unwrap_or(Value::Null);
        runtime
            .deliver(owner, &task.id, [(key, answer)].into_iter().collect())
            .await
            .map_err(rpc_error)?;
    }
    Ok(())
}

/// What the underlying call answered: its result with the related-task
/// `_meta`, or its JSON-RPC error.
fn outcome_v1(task: &TaskRecord) -> MethodResult {
    let related = json!({ RELATED_TASK: { "taskId": task.id.to_string() } });
    match task.status {
        TaskStatus::Completed => {
            let mut result = match task.result.clone() {
                Some(Value::Object(result)) => result,
                _ => Map::new(),
            };
            result.insert("_meta".into(), related);
            Ok(Value::Object(result))
        }
        TaskStatus::Cancelled => {
            Err(ErrorObject::new(ErrorCode::REQUEST_TIMEOUT, "Request cancelled").with_data(related))
        }
        _ => {
            let error: ErrorObject = task
                .error
                .clone()
                .and_then(|e| serde_json::from_value(e).ok())
                .unwrap_or_else(|| ErrorObject::internal("the task failed"));
            let data = match error.data.clone() {
                Some(Value::Object(mut data)) => {
                    data.insert("_meta".into(), related);
                    Value::Object(data)
                }
                Some(other) => other,
                None => json!({ "_meta": related }),
            };
            Err(error.with_data(data))
        }
    }
}
