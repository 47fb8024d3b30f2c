//! What a handler running as a task (or about to become one) shares with
//! the task methods: the engine and the tasks this process runs (their
//! cancellation, and the answers to their input requests as they arrive),
//! and the link from a handler's context to its task. Kept apart from
//! `tasks/`, which builds on the request context, so the context can hold
//! a link without a circle between them.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;
use toolport_protocol::mrtr::{InputRequests, InputResponses};
use toolport_protocol::{ErrorCode, ErrorObject};
use toolport_tasks::{TaskEngine, TaskError, TaskId, TaskStatus, Transition};

use crate::error::ToolError;

/// How many times an answer's delivery re-reads a task that changed under it.
const DELIVERY_ATTEMPTS: usize = 64;

/// A server's tasks: the engine, and the tasks this process runs now.
#[derive(Debug)]
pub(crate) struct TaskRuntime {
    pub(crate) engine: TaskEngine,
    running: Mutex<HashMap<TaskId, Arc<Running>>>,
}

/// A task this process runs: how to stop it, and the answers to its input
/// requests as they arrive.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) cancel: CancellationToken,
    pub(crate) answers: watch::Sender<BTreeMap<String, Value>>,
}

impl Running {
    fn new(cancel: CancellationToken) -> Arc<Running> {
        Arc::new(Running {
            cancel,
            answers: watch::Sender::new(BTreeMap::new()),
        })
    }
}

/// How the request tells a handler waiting in `start_task` that its task
/// exists (or why it could not be created).
pub(crate) type CreatedAck = oneshot::Sender<Result<(), ErrorObject>>;

/// What a handler running as a task (or about to) knows of its task.
#[derive(Debug)]
pub(crate) struct TaskLink {
    pub(crate) runtime: Arc<TaskRuntime>,
    pub(crate) owner: String,
    /// Set once the task exists.
    pub(crate) id: OnceLock<TaskId>,
    /// Wakes whoever waits for the task to exist.
    pub(crate) id_set: tokio::sync::Notify,
    pub(crate) running: Arc<Running>,
    /// While the task does not exist yet (`input_before_task`): asks the
    /// request to create it, and hears back when it has.
    pub(crate) promote: Mutex<Option<oneshot::Sender<CreatedAck>>>,
    /// Run again after its process died: no client declared anything.
    pub(crate) resumed: bool,
}

/// An engine error as the JSON-RPC error both revisions prescribe.
pub(crate) fn rpc_error(error: TaskError) -> ErrorObject {
    match error {
        TaskError::NotFound(_) => ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            "Failed to retrieve task: Task not found (or it expired)",
        ),
        TaskError::AlreadyTerminal { status, .. } => ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("Cannot change task: already in terminal status '{}'", status.mcp_name()),
        ),
        TaskError::InvalidRequest(why) => ErrorObject::invalid_params(why),
        TaskError::Store(e) => {
            tracing::warn!(error = %e, "task store failed");
            ErrorObject::internal("the task store is unavailable; try again")
        }
        other => ErrorObject::internal(other.to_string()),
    }
}

impl TaskRuntime {
    pub(crate) fn new(engine: TaskEngine) -> Arc<TaskRuntime> {
        Arc::new(TaskRuntime {
            engine,
            running: Mutex::new(HashMap::new()),
        })
    }

    fn running(&self, id: &TaskId) -> Option<Arc<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned()
    }

    fn register(&self, id: TaskId, running: Arc<Running>) {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, running);
    }

    pub(crate) fn unregister(&self, id: &TaskId) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
    }

    /// Stops the handler of a task this process runs (after a cancel).
    pub(crate) fn stop(&self, id: &TaskId) {
        if let Some(running) = self.running(id) {
            running.cancel.cancel();
        }
    }

    /// Hands `responses` to a task waiting for input: keys the task does not
    /// wait for are ignored, and the record shows what is still outstanding
    /// (still `input_required`) or, once nothing is, `working` again, before
    /// this returns. An ended task ignores them.
    pub(crate) async fn deliver(&self, owner: &str, id: &TaskId, responses: InputResponses) -> Result<(), TaskError> {
        let mut accepted = BTreeMap::new();
        for _ in 0..DELIVERY_ATTEMPTS {
            let task = self.engine.get(owner, id).await?;
            if task.status.is_terminal() || task.status != TaskStatus::InputRequired {
                return Ok(());
            }
            let Some(Value::Object(mut outstanding)) = task.input_requests.clone() else {
                return Ok(());
            };
            accepted = responses
                .iter()
                .filter(|(key, _)| outstanding.contains_key(*key))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if accepted.is_empty() {
                return Ok(());
            }
            outstanding.retain(|key, _| !accepted.contains_key(key));
            let change = if outstanding.is_empty() {
                Transition::to(TaskStatus::Working)
            } else {
                Transition::to(TaskStatus::InputRequired)
                    .message(task.status_message.clone().unwrap_or_default())
                    .input_requests(Value::Object(outstanding))
            };
            match self.engine.transition(owner, id, task.version, change).await {
                Ok(_) => break,
                Err(TaskError::VersionConflict { .. }) => continue,
                Err(TaskError::AlreadyTerminal { .. }) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        match self.running(id) {
            Some(running) => running.answers.send_modify(|answers| answers.extend(accepted)),
            None => tracing::warn!(task = %id, "answers for a task this process does not run were not delivered"),
        }
        Ok(())
    }
}

impl TaskLink {
    /// A link for a handler whose task exists already or is to be created
    /// by the request (`promote`).
    pub(crate) fn new(runtime: Arc<TaskRuntime>, owner: String, cancel: CancellationToken) -> Arc<TaskLink> {
        Arc::new(TaskLink {
            runtime,
            owner,
            id: OnceLock::new(),
            id_set: tokio::sync::Notify::new(),
            running: Running::new(cancel),
            promote: Mutex::new(None),
            resumed: false,
        })
    }

    /// The task's id, once it exists.
    pub(crate) fn task_id(&self) -> Option<&TaskId> {
        self.id.get()
    }

    /// Marks the task created and registers it as running here.
    pub(crate) fn created(&self, id: TaskId) {
        self.runtime.register(id.clone(), self.running.clone());
        let _ = self.id.set(id);
        self.id_set.notify_waiters();
    }

    /// Asks the request to create the task now (`input_before_task`); a
    /// no-op once it exists.
    pub(crate) async fn start(&self) -> Result<(), ToolError> {
        let Some(promote) = self.promote.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Ok(());
        };
        let (done, created) = oneshot::channel();
        if promote.send(done).is_err() {
            return Err(ToolError::Cancelled);
        }
        match created.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(ToolError::Protocol(error)),
            Err(_) => Err(ToolError::Cancelled),
        }
    }

    /// Waits for answers to `requests` inside a task: the record shows the
    /// ones still unanswered (`input_required`) until `tasks/update` (or a
    /// 2025-11-25 `tasks/result` stream) brings them.
    pub(crate) async fn input(
        &self,
        requests: InputRequests,
        cancel: &CancellationToken,
    ) -> Result<BTreeMap<String, Value>, ToolError> {
        let id = self.id.get().ok_or(ToolError::Cancelled)?;
        let keys: Vec<String> = requests.keys().cloned().collect();
        let mut answers = self.running.answers.subscribe();
        let complete = |have: &BTreeMap<String, Value>| keys.iter().all(|k| have.contains_key(k));
        let outstanding: InputRequests = {
            let have = answers.borrow_and_update();
            requests.into_iter().filter(|(k, _)| !have.contains_key(k)).collect()
        };
        if !outstanding.is_empty() {
            let waiting = serde_json::to_value(&outstanding).map_err(ToolError::from)?;
            let change = Transition::to(TaskStatus::InputRequired)
                .message("waiting for input")
                .input_requests(waiting);
            self.runtime
                .engine
                .update(&self.owner, id, change)
                .await
                .map_err(|e| match e {
                    TaskError::AlreadyTerminal { .. } | TaskError::NotFound(_) => ToolError::Cancelled,
                    other => ToolError::Protocol(rpc_error(other)),
                })?;
            tokio::select! {
                arrived = answers.wait_for(|have| complete(have)) => { arrived.map_err(|_| ToolError::Cancelled)?; }
                _ = cancel.cancelled() => return Err(ToolError::Cancelled),
            }
        }
        let have = answers.borrow();
        Ok(keys
            .iter()
            .filter_map(|k| have.get(k).map(|v| (k.clone(), v.clone())))
            .collect())
    }

    /// Shows progress in the task's status message, where a poller sees it.
    pub(crate) async fn progress(&self, message: String) {
        let Some(id) = self.id.get() else { return };
        let current = match self.runtime.engine.get(&self.owner, id).await {
            Ok(task) if task.status == TaskStatus::Working => task,
            _ => return,
        };
        let change = Transition::to(TaskStatus::Working).message(message);
        // A lost race means the task moved on: nothing to show.
        let _ = self
            .runtime
            .engine
            .transition(&self.owner, id, current.version, change)
            .await;
    }
}

/// The channel of a task with no client behind it (one resumed after its
/// process died): notifications go nowhere, requests fail.
#[derive(Debug)]
pub(crate) struct Detached;

impl toolport_rpc::PeerChannel for Detached {
    fn notify(
        &self,
        _notification: toolport_protocol::jsonrpc::Notification,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), toolport_rpc::RpcError>> + Send + '_>> {
        Box::pin(async { Ok(()) })
    }

    fn request(
        &self,
        method: String,
        _params: Option<Value>,
        _timeout: std::time::Duration,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<Box<serde_json::value::RawValue>, toolport_rpc::RpcError>>
                + Send
                + '_,
        >,
    > {
        Box::pin(async move {
            Err(toolport_rpc::RpcError::Remote(ErrorObject::internal(format!(
                "no client is connected to answer {method}: the task was resumed after a restart"
            ))))
        })
    }
}
