//! Agents in Rust: an agent is an async handler that gets the message and a
//! [`TaskContext`], the way a tool is an async fn that gets its arguments.
//!
//! ```
//! use toolport_a2a::{Artifact, Part, TaskContext, agent_fn};
//!
//! let echo = agent_fn("echo", "Says back what it was told.", |cx: TaskContext| async move {
//!     let text = cx.message().text();
//!     cx.artifact(Artifact::new("echo", vec![Part::text(format!("echo: {text}"))])).await?;
//!     Ok(())
//! });
//! # let _ = echo;
//! ```
//!
//! A handler that returns `Ok` without ending the task completes it; an
//! `Err` fails it with the error's words. [`TaskContext::ask_input`] pauses
//! the task in `TASK_STATE_INPUT_REQUIRED`: the handler returns, and the
//! client's next message to the task runs it again, with the state it saved.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolport_server::{Authorizer, Principal};
use toolport_tasks::TaskStatus;

use crate::book::{Change, Event, TaskBook};
use crate::error::A2aError;
use crate::types::{AgentSkill, Artifact, Message, Part};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why an agent's run failed; its words become the failed task's status
/// message, so say what the client can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AgentError(pub String);

impl AgentError {
    /// A failure described by `message`.
    pub fn new(message: impl Into<String>) -> AgentError {
        AgentError(message.into())
    }
}

impl From<A2aError> for AgentError {
    fn from(error: A2aError) -> AgentError {
        AgentError(error.to_string())
    }
}

/// An A2A agent.
pub trait Agent: Send + Sync + 'static {
    /// The skills the card lists.
    fn skills(&self) -> Vec<AgentSkill>;

    /// The skill a new task's first message asks for, kept with the task.
    fn skill_of(&self, _message: &Message) -> String {
        "agent".into()
    }

    /// Works on a task: its first message, or the next one after it asked
    /// for input.
    fn run(&self, context: TaskContext) -> BoxFuture<'_, Result<(), AgentError>>;
}

/// An agent made of one async function (see [`agent_fn`]).
pub struct FnAgent<F> {
    skill: AgentSkill,
    handler: F,
}

impl<F> std::fmt::Debug for FnAgent<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnAgent").field("skill", &self.skill.id).finish()
    }
}

/// An agent with one skill, `id`, served by `handler`.
pub fn agent_fn<F, Fut>(id: &str, description: &str, handler: F) -> FnAgent<F>
where
    F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), AgentError>> + Send + 'static,
{
    FnAgent {
        skill: AgentSkill {
            id: id.into(),
            name: id.into(),
            description: description.into(),
            tags: vec![],
            examples: vec![],
            input_modes: vec![],
            output_modes: vec![],
        },
        handler,
    }
}

impl<F, Fut> Agent for FnAgent<F>
where
    F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), AgentError>> + Send + 'static,
{
    fn skills(&self) -> Vec<AgentSkill> {
        vec![self.skill.clone()]
    }

    fn skill_of(&self, _message: &Message) -> String {
        self.skill.id.clone()
    }

    fn run(&self, context: TaskContext) -> BoxFuture<'_, Result<(), AgentError>> {
        Box::pin((self.handler)(context))
    }
}

/// One run of an agent on one task: what it was told and how it answers.
/// Cheap to clone.
#[derive(Clone)]
pub struct TaskContext(Arc<Inner>);

struct Inner {
    book: TaskBook,
    owner: String,
    task_id: String,
    context_id: String,
    message: Message,
    history: Vec<Message>,
    state: Option<Value>,
    principal: Option<Principal>,
    authorizer: Option<Arc<dyn Authorizer>>,
    cancel: CancellationToken,
    /// Set once the run moved the task to a state it stops in.
    settled: AtomicBool,
}

impl std::fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskContext")
            .field("task_id", &self.0.task_id)
            .field("context_id", &self.0.context_id)
            .finish_non_exhaustive()
    }
}

/// Who asked, as the transport knows them.
#[derive(Clone, Default)]
pub struct Caller {
    /// The owner key of their tasks.
    pub owner: String,
    /// The authenticated principal.
    pub principal: Option<Principal>,
    /// What decides what they may do (scopes).
    pub authorizer: Option<Arc<dyn Authorizer>>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("owner", &self.owner)
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

impl Caller {
    /// The caller `principal` (or anonymous), owning tasks under the same
    /// key as its MCP tasks.
    pub fn new(principal: Option<Principal>, authorizer: Option<Arc<dyn Authorizer>>) -> Caller {
        Caller {
            owner: toolport_server::task_owner(principal.as_ref()),
            principal,
            authorizer,
        }
    }
}

/// What a run starts from.
pub(crate) struct RunStart {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    pub(crate) message: Message,
    pub(crate) history: Vec<Message>,
    pub(crate) state: Option<Value>,
    /// Whether the task is new (`SUBMITTED`) and the run moves it to `WORKING`.
    pub(crate) new_task: bool,
}

impl TaskContext {
    pub(crate) fn new(book: TaskBook, caller: &Caller, start: RunStart, cancel: CancellationToken) -> TaskContext {
        TaskContext(Arc::new(Inner {
            book,
            owner: caller.owner.clone(),
            task_id: start.task_id,
            context_id: start.context_id,
            message: start.message,
            history: start.history,
            state: start.state,
            principal: caller.principal.clone(),
            authorizer: caller.authorizer.clone(),
            cancel,
            settled: AtomicBool::new(false),
        }))
    }

    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.0.task_id
    }

    /// The task's conversation.
    pub fn context_id(&self) -> &str {
        &self.0.context_id
    }

    /// The message this run answers.
    pub fn message(&self) -> &Message {
        &self.0.message
    }

    /// Every message of the task so far, oldest first (this run's last).
    pub fn history(&self) -> &[Message] {
        &self.0.history
    }

    /// The state the agent saved when it last asked for input.
    pub fn state<T: DeserializeOwned>(&self) -> Option<T> {
        self.0.state.clone().and_then(|s| serde_json::from_value(s).ok())
    }

    /// The authenticated caller.
    pub fn principal(&self) -> Option<&Principal> {
        self.0.principal.as_ref()
    }

    /// What decides what the caller may do.
    pub fn authorizer(&self) -> Option<&Arc<dyn Authorizer>> {
        self.0.authorizer.as_ref()
    }

    /// Whether the client cancelled the task.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancel.is_cancelled()
    }

    /// Resolves when the client cancels the task.
    pub async fn cancelled(&self) {
        self.0.cancel.cancelled().await;
    }

    pub(crate) fn settled(&self) -> bool {
        self.0.settled.load(Ordering::SeqCst)
    }

    /// Says how the work goes: a `TASK_STATE_WORKING` status update with
    /// `text` as the agent's message.
    pub async fn progress(&self, text: impl Into<String>) -> Result<(), AgentError> {
        let message = Message::agent(vec![Part::text(text)]);
        self.set(TaskStatus::Working, Some(message), None, false).await
    }

    /// Adds `artifact` to the task (streamed as an artifact update).
    pub async fn artifact(&self, artifact: Artifact) -> Result<(), AgentError> {
        self.artifact_chunk(artifact, false, true).await
    }

    /// Adds a piece of an artifact: with `append`, `artifact.parts` add to
    /// the artifact of the same id sent before; `last_chunk` says it is whole.
    pub async fn artifact_chunk(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Result<(), AgentError> {
        let event = Event::Artifact {
            artifact: artifact.clone(),
            append,
            last_chunk,
        };
        let outcome = self
            .0
            .book
            .change(&self.0.owner, &self.0.task_id, move |record, extras| {
                match extras
                    .artifacts
                    .iter_mut()
                    .find(|a| a.artifact_id == artifact.artifact_id)
                {
                    Some(known) if append => known.parts.extend(artifact.parts.iter().cloned()),
                    Some(known) => *known = artifact.clone(),
                    None => extras.artifacts.push(artifact.clone()),
                }
                Ok(Some(Change {
                    state: record.status,
                    event: event.clone(),
                    release_lease: false,
                }))
            })
            .await;
        self.ended_if_terminal(outcome)
    }

    /// Pauses the task in `TASK_STATE_INPUT_REQUIRED` with `question`; the
    /// client's next message runs the agent again, and [`state`](Self::state)
    /// gives back `state`. The handler should return after this.
    pub async fn ask_input(&self, question: Message, state: Option<Value>) -> Result<(), AgentError> {
        self.set(TaskStatus::InputRequired, Some(question), state, true).await
    }

    /// Pauses the task in `TASK_STATE_AUTH_REQUIRED` with `message`.
    pub async fn require_auth(&self, message: Message, state: Option<Value>) -> Result<(), AgentError> {
        self.set(TaskStatus::AuthRequired, Some(message), state, true).await
    }

    /// Completes the task, with a last word when given.
    pub async fn complete(&self, message: Option<Message>) -> Result<(), AgentError> {
        self.set(TaskStatus::Completed, message, None, true).await
    }

    /// Fails the task, saying why.
    pub async fn fail(&self, why: impl Into<String>) -> Result<(), AgentError> {
        let message = Message::agent(vec![Part::text(why)]);
        self.set(TaskStatus::Failed, Some(message), None, true).await
    }

    /// Refuses the task, saying why (`TASK_STATE_REJECTED`).
    pub async fn reject(&self, why: impl Into<String>) -> Result<(), AgentError> {
        let message = Message::agent(vec![Part::text(why)]);
        self.set(TaskStatus::Rejected, Some(message), None, true).await
    }

    pub(crate) async fn set(
        &self,
        state: TaskStatus,
        message: Option<Message>,
        agent_state: Option<Value>,
        settles: bool,
    ) -> Result<(), AgentError> {
        let waits = matches!(state, TaskStatus::InputRequired | TaskStatus::AuthRequired);
        let outcome = self
            .0
            .book
            .change(&self.0.owner, &self.0.task_id, |_, extras| {
                if let Some(message) = &message {
                    extras.history.push(message.clone());
                }
                extras.status_message = message.clone();
                if waits {
                    extras.agent = agent_state.clone();
                }
                let mut change = Change::status(state);
                change.release_lease = waits;
                Ok(Some(change))
            })
            .await;
        if settles && outcome.is_ok() {
            self.0.settled.store(true, Ordering::SeqCst);
        }
        self.ended_if_terminal(outcome)
    }

    /// A change refused because the task ended (cancelled meanwhile) stops
    /// the run.
    fn ended_if_terminal(&self, outcome: Result<toolport_tasks::TaskRecord, A2aError>) -> Result<(), AgentError> {
        match outcome {
            Ok(_) => Ok(()),
            Err(e) => {
                if matches!(e, A2aError::UnsupportedOperation(_) | A2aError::TaskNotFound(_)) {
                    self.0.settled.store(true, Ordering::SeqCst);
                    self.0.cancel.cancel();
                }
                Err(e.into())
            }
        }
    }
}
