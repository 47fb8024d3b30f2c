//! The A2A operations, whatever binding carried them (§3.1): send (blocking,
//! returning at once, streaming), get, list, cancel, subscribe, and the
//! push-notification configurations. The bindings in `jsonrpc` and `rest`
//! only decode, call these and encode.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolport_tasks::{TaskRecord, TaskStatus};

use crate::agent::{Agent, Caller, RunStart, TaskContext};
use crate::book::{Change, Event, Extras, TaskBook, event_of, task_of};
use crate::card::CardConfig;
use crate::error::A2aError;
use crate::push::{PushPolicy, Pusher};
use crate::types::{
    AgentCard, ListTasksQuery, ListTasksResponse, Message, PushConfig, Role, SendMessageRequest, StreamResponse, Task,
    TaskState,
};

/// How many stream items wait for a slow client before the stream re-reads
/// the task instead of queueing every change.
const STREAM_BUFFER: usize = 64;

/// The most parts, and messages in a history, a task takes.
const MAX_PARTS: usize = 64;
const MAX_HISTORY: usize = 1000;

/// The default and largest `ListTasks` page.
const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: usize = 100;

/// How many tasks `ListTasks` reads at most to count and filter.
const MAX_SCAN: usize = 10_000;

/// An A2A agent served on the task engine. Cheap to clone.
#[derive(Clone)]
pub struct A2aService {
    inner: Arc<Inner>,
}

struct Inner {
    book: TaskBook,
    agent: Arc<dyn Agent>,
    card: CardConfig,
    pusher: Option<Pusher>,
    /// The runs in this process, by task id, to stop them on cancel.
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl std::fmt::Debug for A2aService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aService")
            .field("card", &self.inner.card.name)
            .finish_non_exhaustive()
    }
}

impl A2aService {
    /// `agent` served with tasks in `book`, described by `card`; push
    /// notifications are delivered under `push` (`None`: not offered).
    pub fn new(agent: Arc<dyn Agent>, book: TaskBook, card: CardConfig, push: Option<PushPolicy>) -> A2aService {
        let pusher = push.map(|policy| Pusher::start(book.engine().clone(), policy));
        A2aService {
            inner: Arc::new(Inner {
                book,
                agent,
                card,
                pusher,
                running: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The public Agent Card, reached at `request_base` (`http://host:port`).
    pub fn card(&self, request_base: &str) -> AgentCard {
        self.inner
            .card
            .card(request_base, self.inner.agent.skills(), self.inner.pusher.is_some())
    }

    /// The card for an authenticated caller (`GetExtendedAgentCard`).
    pub fn extended_card(&self, caller: &Caller, request_base: &str) -> Result<AgentCard, A2aError> {
        if !self.inner.card.extended {
            return Err(A2aError::UnsupportedOperation(
                "this agent has no extended agent card (it does not authenticate its callers)".into(),
            ));
        }
        if caller.principal.is_none() {
            return Err(A2aError::Unauthorized {
                status: http::StatusCode::UNAUTHORIZED,
                message: "the extended agent card needs an authenticated caller".into(),
                challenge: None,
            });
        }
        Ok(self.card(request_base))
    }

    /// `SendMessage`: the task once it ends or waits for input (or at once
    /// with `returnImmediately`).
    pub async fn send(&self, caller: &Caller, request: SendMessageRequest) -> Result<StreamResponse, A2aError> {
        let config = request.configuration.clone().unwrap_or_default();
        let (record, mut watch) = self.start(caller, request).await?;
        let history_length = config.history_length;
        if config.return_immediately {
            return Ok(StreamResponse::Task(task_of(&record, history_length, true)));
        }
        let mut last = record;
        while let Some(next) = watch.next().await? {
            let state = TaskState::from(next.status);
            last = next;
            if state.is_terminal() || state.is_interrupted() {
                break;
            }
        }
        Ok(StreamResponse::Task(task_of(&last, history_length, true)))
    }

    /// `SendStreamingMessage`: the task, then each change, until it ends or
    /// waits for input.
    pub async fn send_streaming(
        &self,
        caller: &Caller,
        request: SendMessageRequest,
    ) -> Result<mpsc::Receiver<StreamResponse>, A2aError> {
        let history_length = request.configuration.as_ref().and_then(|c| c.history_length);
        let (_, watch) = self.start(caller, request).await?;
        Ok(stream(watch, history_length, true))
    }

    /// `GetTask`.
    pub async fn get(&self, caller: &Caller, id: &str, history_length: Option<i32>) -> Result<Task, A2aError> {
        check_id(id)?;
        let record = self.inner.book.get(&caller.owner, id).await?;
        Ok(task_of(&record, history_length, true))
    }

    /// `ListTasks`: the caller's tasks, newest first.
    pub async fn list(&self, caller: &Caller, query: ListTasksQuery) -> Result<ListTasksResponse, A2aError> {
        let size = match query.page_size {
            None => DEFAULT_PAGE,
            Some(n) if n < 1 => {
                return Err(A2aError::InvalidParams(format!(
                    "pageSize must be between 1 and {MAX_PAGE}, not {n}"
                )));
            }
            Some(n) => (n as usize).min(MAX_PAGE),
        };
        if let Some(n) = query.history_length.filter(|n| *n < 0) {
            return Err(A2aError::InvalidParams(format!(
                "historyLength must not be negative, not {n}"
            )));
        }
        let after = match &query.status_timestamp_after {
            Some(text) => Some(crate::time::parse_rfc3339(text).ok_or_else(|| {
                A2aError::InvalidParams(format!("statusTimestampAfter must be an RFC 3339 time, not {text:?}"))
            })?),
            None => None,
        };
        let matches = |record: &TaskRecord| {
            query
                .context_id
                .as_ref()
                .is_none_or(|c| record.context_id.as_ref() == Some(c))
                && query
                    .status
                    .filter(|s| *s != TaskState::Unspecified)
                    .is_none_or(|s| TaskState::from(record.status) == s)
                && after.is_none_or(|after| record.updated_at > after)
        };
        let book = &self.inner.book;
        let token = query.page_token.as_deref().filter(|t| !t.is_empty());
        let (records, next) = book.page(&caller.owner, token, size).await?;
        let include_artifacts = query.include_artifacts.unwrap_or(false);
        let history_length = Some(query.history_length.unwrap_or(0));
        let tasks = records
            .iter()
            .filter(|r| matches(r))
            .map(|r| task_of(r, history_length, include_artifacts))
            .collect();
        // The total counts every matching task of the caller, up to MAX_SCAN.
        let (mut total, mut cursor, mut scanned) = (0usize, None::<String>, 0usize);
        loop {
            let (page, next_cursor) = book.page(&caller.owner, cursor.as_deref(), MAX_PAGE).await?;
            scanned += page.len();
            total += page.iter().filter(|r| matches(r)).count();
            match next_cursor {
                Some(c) if scanned < MAX_SCAN => cursor = Some(c),
                _ => break,
            }
        }
        Ok(ListTasksResponse {
            tasks,
            next_page_token: next.unwrap_or_default(),
            page_size: size as i32,
            total_size: total.min(i32::MAX as usize) as i32,
        })
    }

    /// `CancelTask`.
    pub async fn cancel(&self, caller: &Caller, id: &str) -> Result<Task, A2aError> {
        check_id(id)?;
        let record = self.inner.book.cancel(&caller.owner, id).await?;
        if let Some(run) = self.inner.running.lock().expect("running map").remove(id) {
            run.cancel();
        }
        Ok(task_of(&record, None, true))
    }

    /// `SubscribeToTask`: the task as it is, then each change until it ends.
    pub async fn subscribe(&self, caller: &Caller, id: &str) -> Result<mpsc::Receiver<StreamResponse>, A2aError> {
        check_id(id)?;
        let watch = self.inner.book.engine().watch(&caller.owner, &id.into()).await?;
        let current = self.inner.book.get(&caller.owner, id).await?;
        if current.status.is_terminal() {
            return Err(A2aError::UnsupportedOperation(format!(
                "task {id} is {} and has no more updates to stream",
                TaskState::from(current.status).name()
            )));
        }
        Ok(stream(watch, None, false))
    }

    fn pusher(&self) -> Result<&Pusher, A2aError> {
        self.inner.pusher.as_ref().ok_or(A2aError::PushNotificationNotSupported)
    }

    /// `CreateTaskPushNotificationConfig`.
    pub async fn create_push(&self, caller: &Caller, mut config: PushConfig) -> Result<PushConfig, A2aError> {
        self.pusher()?.check(&config.url).await?;
        check_id(&config.task_id)?;
        if config.id.is_empty() {
            config.id = crate::ids::fresh();
        }
        let task_id = config.task_id.clone();
        let saved = config.clone();
        self.inner
            .book
            .change(&caller.owner, &task_id, move |record, extras| {
                extras.push.retain(|c| c.id != saved.id);
                extras.push.push(saved.clone());
                Ok(Some(quiet(record)))
            })
            .await?;
        Ok(config)
    }

    /// `GetTaskPushNotificationConfig`.
    pub async fn get_push(&self, caller: &Caller, task_id: &str, id: &str) -> Result<PushConfig, A2aError> {
        self.pusher()?;
        self.list_push(caller, task_id)
            .await?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or_else(|| A2aError::InvalidParams(format!("task {task_id} has no push notification config {id:?}")))
    }

    /// `ListTaskPushNotificationConfigs`.
    pub async fn list_push(&self, caller: &Caller, task_id: &str) -> Result<Vec<PushConfig>, A2aError> {
        self.pusher()?;
        check_id(task_id)?;
        let record = self.inner.book.get(&caller.owner, task_id).await?;
        Ok(Extras::of(&record).push)
    }

    /// `DeleteTaskPushNotificationConfig`; deleting one that is gone is
    /// not an error.
    pub async fn delete_push(&self, caller: &Caller, task_id: &str, id: &str) -> Result<(), A2aError> {
        self.pusher()?;
        check_id(task_id)?;
        let record = self.inner.book.get(&caller.owner, task_id).await?;
        if !Extras::of(&record).push.iter().any(|c| c.id == id) {
            return Ok(());
        }
        self.inner
            .book
            .change(&caller.owner, task_id, |record, extras| {
                let before = extras.push.len();
                extras.push.retain(|c| c.id != id);
                Ok((extras.push.len() != before).then(|| quiet(record)))
            })
            .await
            .map(drop)
    }

    /// Validates the message, makes or continues its task, and starts the
    /// agent on it; the task as stored and a watch from that state on.
    async fn start(
        &self,
        caller: &Caller,
        request: SendMessageRequest,
    ) -> Result<(TaskRecord, toolport_tasks::TaskWatch), A2aError> {
        let mut message = request.message;
        check_message(&message)?;
        let push = request.configuration.and_then(|c| c.task_push_notification_config);
        if let Some(push) = &push {
            self.pusher()?.check(&push.url).await?;
        }
        let book = &self.inner.book;
        let (record, start) = match message.task_id.clone() {
            None => {
                let context_id = message.context_id.clone().unwrap_or_else(crate::ids::fresh);
                message.context_id = Some(context_id.clone());
                let skill = self.inner.agent.skill_of(&message);
                let record = book
                    .create(
                        &caller.owner,
                        message.clone(),
                        context_id.clone(),
                        &skill,
                        request.metadata,
                    )
                    .await?;
                let start = RunStart {
                    task_id: record.id.to_string(),
                    context_id,
                    history: vec![message.clone()],
                    message,
                    state: None,
                    new_task: true,
                };
                (record, start)
            }
            Some(task_id) => self.continue_task(caller, task_id, message).await?,
        };
        if let Some(mut push) = push {
            push.task_id = record.id.to_string();
            self.create_push(caller, push).await?;
        }
        // Watching before the run starts: no change falls between.
        let watch = book.engine().watch(&caller.owner, &record.id).await?;
        self.run(caller.clone(), start);
        Ok((record, watch))
    }

    /// A message to an existing task: only one that waits for input takes it.
    async fn continue_task(
        &self,
        caller: &Caller,
        task_id: String,
        message: Message,
    ) -> Result<(TaskRecord, RunStart), A2aError> {
        check_id(&task_id)?;
        let mut start = None;
        let record = self
            .inner
            .book
            .change(&caller.owner, &task_id, |record, extras| {
                let state = TaskState::from(record.status);
                if state.is_terminal() {
                    return Err(A2aError::UnsupportedOperation(format!(
                        "task {task_id} is {} and takes no more messages; start a new task",
                        state.name()
                    )));
                }
                if let Some(context) = &message.context_id
                    && record.context_id.as_ref() != Some(context)
                {
                    return Err(A2aError::InvalidParams(format!(
                        "the message's contextId {context:?} is not the context of task {task_id}"
                    )));
                }
                if !state.is_interrupted() {
                    return Err(A2aError::UnsupportedOperation(format!(
                        "task {task_id} is {} and does not wait for a message; send one when it asks for input",
                        state.name()
                    )));
                }
                if extras.history.len() >= MAX_HISTORY {
                    return Err(A2aError::InvalidParams(format!(
                        "task {task_id} has {MAX_HISTORY} messages, the most a task keeps; start a new task"
                    )));
                }
                let mut message = message.clone();
                message.context_id = record.context_id.clone();
                extras.history.push(message.clone());
                extras.status_message = None;
                start = Some(RunStart {
                    task_id: task_id.clone(),
                    context_id: record.context_id.clone().unwrap_or_default(),
                    message,
                    history: extras.history.clone(),
                    state: extras.agent.take(),
                    new_task: false,
                });
                Ok(Some(Change::status(TaskStatus::Working)))
            })
            .await?;
        let start = start.ok_or_else(|| A2aError::Internal("the task did not take the message".into()))?;
        Ok((record, start))
    }

    /// Runs the agent on a task in the background, keeping the task's lease
    /// while it works.
    fn run(&self, caller: Caller, start: RunStart) {
        let cancel = CancellationToken::new();
        let task_id = start.task_id.clone();
        self.inner
            .running
            .lock()
            .expect("running map")
            .insert(task_id.clone(), cancel.clone());
        let new_task = start.new_task;
        let context = TaskContext::new(self.inner.book.clone(), &caller, start, cancel.clone());
        let service = self.clone();
        tokio::spawn(async move {
            let engine = service.inner.book.engine().clone();
            let _lease = engine.keep_lease(&caller.owner, &task_id.as_str().into());
            let started = match new_task {
                true => context.set(TaskStatus::Working, None, None, false).await,
                false => Ok(()),
            };
            if let Err(e) = started {
                tracing::debug!(task = %task_id, error = %e, "A2A task did not start");
            } else {
                let agent = service.inner.agent.clone();
                let run_context = context.clone();
                // Its own task: a panicking agent fails its task, not the server.
                let outcome = tokio::spawn(async move { agent.run(run_context).await }).await;
                let outcome = match outcome {
                    Ok(outcome) => outcome,
                    Err(e) => {
                        tracing::error!(task = %task_id, error = %e, "A2A agent panicked");
                        Err(crate::agent::AgentError::new("the agent failed unexpectedly"))
                    }
                };
                let ended = match outcome {
                    _ if context.settled() => Ok(()),
                    Ok(()) => context.complete(None).await,
                    Err(e) => context.fail(e.0).await,
                };
                if let Err(e) = ended {
                    tracing::debug!(task = %task_id, error = %e, "A2A task ended elsewhere");
                }
            }
            service.inner.running.lock().expect("running map").remove(&task_id);
        });
    }
}

/// A change that keeps the state and streams nothing.
fn quiet(record: &TaskRecord) -> Change {
    Change {
        state: record.status,
        event: Event::Quiet,
        release_lease: record.lease.is_none(),
    }
}

/// Streams a watched task: the task first, then one item per change, until
/// it ends (or, for `stop_at_interrupt`, waits for input).
fn stream(
    mut watch: toolport_tasks::TaskWatch,
    history_length: Option<i32>,
    stop_at_interrupt: bool,
) -> mpsc::Receiver<StreamResponse> {
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let record = match watch.next().await {
                Ok(Some(record)) => record,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "A2A stream: the task could not be read");
                    return;
                }
            };
            let state = TaskState::from(record.status);
            let item = if first {
                first = false;
                Some(StreamResponse::Task(task_of(&record, history_length, true)))
            } else {
                event_of(&record)
            };
            if let Some(item) = item
                && tx.send(item).await.is_err()
            {
                return;
            }
            if state.is_terminal() || (stop_at_interrupt && state.is_interrupted()) {
                return;
            }
        }
    });
    rx
}

/// A task id a client sent: non-empty and of sane length.
fn check_id(id: &str) -> Result<(), A2aError> {
    if id.is_empty() {
        return Err(A2aError::InvalidParams("a task id is required".into()));
    }
    if id.len() > toolport_tasks::MAX_ID_LEN {
        return Err(A2aError::TaskNotFound(format!("{}...", &id[..16])));
    }
    Ok(())
}

/// A message a client may send.
fn check_message(message: &Message) -> Result<(), A2aError> {
    if message.message_id.trim().is_empty() {
        return Err(A2aError::InvalidParams("message.messageId is required".into()));
    }
    if message.role != Role::User {
        return Err(A2aError::InvalidParams(
            "message.role must be ROLE_USER for a message sent to the agent".into(),
        ));
    }
    if message.parts.is_empty() {
        return Err(A2aError::InvalidParams(
            "message.parts must hold at least one part".into(),
        ));
    }
    if message.parts.len() > MAX_PARTS {
        return Err(A2aError::InvalidParams(format!(
            "message.parts holds {} parts, more than the {MAX_PARTS} a message may have",
            message.parts.len()
        )));
    }
    for (i, part) in message.parts.iter().enumerate() {
        if part.contents() != 1 {
            return Err(A2aError::InvalidParams(format!(
                "message.parts[{i}] must hold exactly one of text, raw, url or data"
            )));
        }
    }
    Ok(())
}
