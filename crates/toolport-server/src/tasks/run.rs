//! Running a `tools/call` as a task: the record is created (durably) before
//! the `CreateTaskResult` announces it, the handler runs in a tokio task of
//! its own under the same policy layers as a plain call (so it holds its
//! place at the tool's gate while it runs, and the audit records its end),
//! and its outcome is written to the record.
//!
//! A tool built with `input_before_task` runs first as a plain call would:
//! its questions go through MRTR, and the task is created when the handler
//! calls [`RequestContext::start_task`](crate::RequestContext::start_task)
//! (or ends).

use std::sync::Arc;
use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::RequestId;
use toolport_protocol::meta::Meta;
use toolport_protocol::tasks::{CreateTaskResultV1, TaskMetadata, TaskSupport};
use toolport_protocol::tools::CallToolResult;
use toolport_protocol::{ErrorCode, ErrorObject, ProtocolVersion};
use toolport_tasks::{NewTask, TaskError, TaskId, TaskRecord, Transition};

use super::wire::{created, task_v1};
use super::{declares_extension, extension_required, owner_of};
use crate::audit::{AuditRecord, audit_id, now_rfc3339, trace_id};
use crate::context::{Principal, RequestContext};
use crate::dispatch::{Scope, encode};
use crate::error::ToolError;
use crate::policy::ToolCall;
use crate::server::Server;
use crate::task_state::{TaskLink, TaskRuntime, rpc_error};
use crate::tool::ToolEntry;

/// A `tools/call` that is to run as a task.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskRequest {
    /// The requested time to live (2025-11-25 `params.task.ttl`).
    ttl_ms: Option<u64>,
}

/// How a call that was to become a task ended.
pub(crate) enum AsTask {
    /// Answered: the `CreateTaskResult`, or why no task could be created.
    Answered(Result<Box<RawValue>, ErrorObject>),
    /// The handler stopped before its task existed (`input_before_task`) in
    /// a way the plain call path answers: MRTR input, a missing capability,
    /// a cancellation.
    Ended(Result<CallToolResult, ToolError>),
}

/// What the policy layers and the audit know of a call, owned, so the call
/// can outlive its request.
struct CallFacts {
    principal: Option<Principal>,
    session: Option<String>,
    request_id: RequestId,
    meta: Arc<Meta>,
}

impl Server {
    /// Whether this call runs as a task, or the JSON-RPC error that refuses
    /// it (2025-11-25: -32601 for a task the tool forbids or a plain call it
    /// requires; 2026-07-28: -32021 when a tool requires a task and the
    /// request did not declare the extension).
    pub(crate) fn task_request(
        &self,
        scope: &Scope,
        entry: &ToolEntry,
        task: Option<&Value>,
    ) -> Result<Option<TaskRequest>, ErrorObject> {
        let Some(_) = &self.inner.tasks else {
            // No tasks here: `params.task` is ignored, as the spec says of a
            // receiver that does not declare the capability.
            return Ok(None);
        };
        let support = entry.tasks.support;
        let name = &entry.tool.name;
        if scope.stateless() {
            return match (support, declares_extension(&scope.client_capabilities)) {
                (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(None),
                (_, true) => Ok(Some(TaskRequest { ttl_ms: None })),
                (TaskSupport::Required, false) => Err(extension_required(&format!("the tool {name}"))),
            };
        }
        if scope.version < ProtocolVersion::V2025_11_25 {
            return Ok(None);
        }
        match (task, support) {
            (Some(_), TaskSupport::Forbidden) => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("The tool {name} does not run as a task: call it without params.task"),
            )),
            (Some(task), _) => {
                let meta: TaskMetadata = serde_json::from_value(task.clone())
                    .map_err(|e| ErrorObject::invalid_params(format!("params.task: {e}")))?;
                Ok(Some(TaskRequest { ttl_ms: meta.ttl }))
            }
            (None, TaskSupport::Required) => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("The tool {name} runs only as a task: add params.task to the call"),
            )),
            (None, _) => Ok(None),
        }
    }

    /// Runs the call as a task. `cx` is the handler's context, to which the
    /// task's link is added.
    pub(crate) async fn call_as_task(
        &self,
        scope: &Scope,
        entry: &ToolEntry,
        arguments: &Value,
        cx: RequestContext,
        request: TaskRequest,
    ) -> AsTask {
        let runtime = self.inner.tasks.clone().expect("checked by task_request");
        let owner = owner_of(scope.call.principal.as_ref());
        let link = TaskLink::new(runtime.clone(), owner, CancellationToken::new());
        let cx = cx.in_task(link.clone());
        let facts = CallFacts {
            principal: scope.call.principal.clone(),
            session: scope.call.session_id.clone(),
            request_id: scope.id.clone(),
            meta: scope.meta.clone(),
        };
        if !entry.tasks.input_before_task {
            let record = match self.create_task(scope, entry, arguments, request, &link).await {
                Ok(record) => record,
                Err(error) => return AsTask::Answered(Err(error)),
            };
            tokio::spawn(self.clone().run_task(entry.clone(), arguments.clone(), facts, cx, link));
            return AsTask::Answered(self.announce(scope, &record));
        }
        let (promote, promoted) = oneshot::channel();
        *link.promote.lock().unwrap_or_else(|p| p.into_inner()) = Some(promote);
        let (ended_tx, ended) = oneshot::channel();
        let work = self
            .clone()
            .run_task(entry.clone(), arguments.clone(), facts, cx, link.clone());
        tokio::spawn(async move {
            if let Some(outcome) = work.await {
                let _ = ended_tx.send(outcome);
            }
        });
        tokio::select! {
            ack = promoted => {
                let Ok(ack) = ack else { return AsTask::Ended(Err(ToolError::Cancelled)) };
                match self.create_task(scope, entry, arguments, request, &link).await {
                    Ok(record) => {
                        let _ = ack.send(Ok(()));
                        AsTask::Answered(self.announce(scope, &record))
                    }
                    Err(error) => {
                        let _ = ack.send(Err(error.clone()));
                        AsTask::Answered(Err(error))
                    }
                }
            }
            outcome = ended => {
                let outcome = outcome.unwrap_or(Err(ToolError::Cancelled));
                if matches!(outcome, Err(ToolError::InputRequired(_) | ToolError::MissingCapability(_) | ToolError::Cancelled)) {
                    return AsTask::Ended(outcome);
                }
                // Ended without asking for its task: the task holds the
                // outcome from the start.
                let record = match self.create_task(scope, entry, arguments, request, &link).await {
                    Ok(record) => record,
                    Err(error) => return AsTask::Answered(Err(error)),
                };
                let id = record.id.clone();
                let record = finish(&runtime, &link.owner, &id, outcome).await.unwrap_or(record);
                runtime.unregister(&id);
                AsTask::Answered(self.announce(scope, &record))
            }
            _ = scope.call.cancel.cancelled() => {
                link.running.cancel.cancel();
                AsTask::Ended(Err(ToolError::Cancelled))
            }
        }
    }

    /// Creates the record (durable when this returns), records it in the
    /// audit stream and starts keeping its lease.
    async fn create_task(
        &self,
        scope: &Scope,
        entry: &ToolEntry,
        arguments: &Value,
        request: TaskRequest,
        link: &TaskLink,
    ) -> Result<TaskRecord, ErrorObject> {
        let mut new = NewTask::new(link.owner.clone(), entry.tool.name.clone(), arguments.clone())
            .resumable(entry.tasks.resumable)
            .metadata(json!({ "protocolVersion": scope.version.as_str() }));
        if let Some(ttl) = request.ttl_ms {
            new = new.ttl_ms(ttl);
        }
        let record = link.runtime.engine.create(new).await.map_err(rpc_error)?;
        link.created(record.id.clone());
        if let Some(audit) = &self.inner.audit {
            audit.record(AuditRecord {
                time: now_rfc3339(),
                principal: scope.call.principal.as_ref().map(|p| p.subject.clone()),
                session: scope.call.session_id.clone(),
                request_id: audit_id(&scope.id),
                tool: entry.tool.name.clone(),
                arguments: arguments.clone(),
                outcome: format!("task_created {}", record.id),
                duration_ms: scope.started.elapsed().as_millis() as u64,
                trace_id: trace_id(&scope.meta),
            });
        }
        Ok(record)
    }

    /// The `CreateTaskResult` of the request's revision.
    fn announce(&self, scope: &Scope, record: &TaskRecord) -> Result<Box<RawValue>, ErrorObject> {
        if scope.stateless() {
            self.finish(created(record), scope)
        } else {
            encode(&CreateTaskResultV1 {
                task: task_v1(record),
                meta: None,
            })
        }
    }

    /// Runs the handler under the policies, keeping the task's lease, and
    /// writes its outcome to the task. Returns the outcome instead when the
    /// handler ended before its task was created.
    async fn run_task(
        self,
        entry: ToolEntry,
        arguments: Value,
        facts: CallFacts,
        cx: RequestContext,
        link: Arc<TaskLink>,
    ) -> Option<Result<CallToolResult, ToolError>> {
        let cancel = link.running.cancel.clone();
        let call = ToolCall {
            tool: &entry,
            name: &entry.tool.name,
            arguments: &arguments,
            principal: facts.principal.as_ref(),
            session: facts.session.as_deref(),
            request_id: &facts.request_id,
            meta: &facts.meta,
            cancel: &cancel,
            started: Instant::now(),
            waited: false,
        };
        let work = self.inner.policies.run(call, Box::pin(entry.call(cx, &arguments)));
        let outcome = keep_lease_while(&link, work).await;
        let Some(id) = link.task_id().cloned() else {
            return Some(outcome);
        };
        let _ = finish(&link.runtime, &link.owner, &id, outcome).await;
        link.runtime.unregister(&id);
        None
    }

    /// Runs a task recovery handed to this process again (a resumable tool
    /// whose process died): the same tool, the same arguments, no request.
    pub(crate) fn resume_task(&self, record: TaskRecord) {
        let Some(runtime) = self.inner.tasks.clone() else {
            return;
        };
        let Some(entry) = self.inner.tools.get(&record.tool) else {
            let error = ErrorObject::internal(format!(
                "the tool {} of this task is no longer served here, so the task could not be resumed",
                record.tool
            ));
            tokio::spawn(async move {
                let _ = finish(&runtime, &record.owner, &record.id, Err(ToolError::Protocol(error))).await;
            });
            return;
        };
        let version = record
            .metadata
            .as_ref()
            .and_then(|m| m.get("protocolVersion"))
            .and_then(Value::as_str)
            .and_then(|v| v.parse().ok())
            .unwrap_or(ProtocolVersion::V2025_11_25);
        let mut link = TaskLink::new(runtime, record.owner.clone(), CancellationToken::new());
        if let Some(fresh) = Arc::get_mut(&mut link) {
            fresh.resumed = true;
        }
        link.created(record.id.clone());
        let principal = record.owner.strip_prefix("sub:").map(|subject| Principal {
            subject: subject.to_owned(),
            ..Default::default()
        });
        let cx = RequestContext::detached(version, principal.clone(), link.clone());
        let facts = CallFacts {
            principal,
            session: None,
            request_id: RequestId::String(format!("resumed-{}", record.id)),
            meta: Arc::new(Meta::new()),
        };
        tokio::spawn(
            self.clone()
                .run_task((*entry).clone(), record.arguments, facts, cx, link),
        );
    }
}

/// Runs `work`, renewing the task's lease (once the task exists) so that
/// recovery does not take a live task for a dead one.
async fn keep_lease_while<T>(link: &TaskLink, work: impl std::future::Future<Output = T>) -> T {
    tokio::pin!(work);
    loop {
        if let Some(id) = link.task_id() {
            let _keeper = link.runtime.engine.keep_lease(&link.owner, id);
            return work.await;
        }
        // Not created yet (input_before_task): wait until it is, or ends.
        let created = link.id_set.notified();
        tokio::pin!(created);
        created.as_mut().enable();
        if link.task_id().is_some() {
            continue;
        }
        tokio::select! {
            outcome = &mut work => return outcome,
            _ = created => {}
        }
    }
}

/// Writes a handler's outcome to its task: a result (a tool's own failure
/// included) completes it, a JSON-RPC error fails it. A task that ended
/// meanwhile (cancelled) keeps its end.
async fn finish(
    runtime: &TaskRuntime,
    owner: &str,
    id: &TaskId,
    outcome: Result<CallToolResult, ToolError>,
) -> Option<TaskRecord> {
    let change = match outcome {
        Ok(result) => Transition::complete(serde_json::to_value(result).unwrap_or(Value::Null)),
        Err(ToolError::Failed(message) | ToolError::InvalidArguments(message)) => {
            Transition::complete(serde_json::to_value(CallToolResult::error(message)).unwrap_or(Value::Null))
        }
        Err(ToolError::Coded(failure)) => {
            Transition::complete(serde_json::to_value(failure.into_result()).unwrap_or(Value::Null))
        }
        Err(ToolError::Cancelled) => Transition::cancel().message("The task was cancelled."),
        Err(ToolError::MissingCapability(required)) => failed(ToolError::missing_capability_error(&required)),
        Err(ToolError::InputRequired(_)) => failed(ErrorObject::internal(
            "the handler asked for input in a way a task cannot carry",
        )),
        Err(ToolError::Protocol(error)) => failed(error),
    };
    match runtime.engine.update(owner, id, change).await {
        Ok(record) => Some(record),
        Err(TaskError::AlreadyTerminal { .. } | TaskError::NotFound(_)) => None,
        Err(e) => {
            tracing::warn!(task = %id, error = %e, "a task's outcome could not be written");
            None
        }
    }
}

fn failed(error: ErrorObject) -> Transition {
    let message = error.message.clone();
    Transition::fail(serde_json::to_value(error).unwrap_or(Value::Null)).message(message)
}
