//! The A2A 1.0 data model (`specification/a2a.proto`) in its JSON form:
//! camelCase fields, ProtoJSON enum names (`TASK_STATE_COMPLETED`,
//! `ROLE_USER`), timestamps as RFC 3339 UTC strings.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolport_tasks::TaskStatus;

mod discovery;
pub use discovery::{AgentCapabilities, AgentCard, AgentCardSignature, AgentInterface, AgentProvider, AgentSkill};

/// The protocol version this crate speaks (`A2A-Version`, cards).
pub const PROTOCOL_VERSION: &str = "1.0";

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Not said (refused where a role is required).
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// A task's state (`TaskState`), the A2A spelling of the engine's
/// [`TaskStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskState {
    /// Not said (only in filters: "any").
    #[serde(rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
    /// Accepted, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Running.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Done (terminal).
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Ended by an error (terminal).
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Cancelled (terminal).
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Waiting for the client's next message (interrupted).
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused by the agent (terminal).
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waiting for the client to authenticate (interrupted).
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
}

impl TaskState {
    /// Whether nothing changes the task any more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// Whether the task waits for its client (a blocking send returns here).
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }

    /// The ProtoJSON name (`TASK_STATE_WORKING`).
    pub fn name(self) -> &'static str {
        self.status().map_or("TASK_STATE_UNSPECIFIED", TaskStatus::a2a_name)
    }

    /// The engine's status for this state; `None` for `UNSPECIFIED`.
    pub fn status(self) -> Option<TaskStatus> {
        Some(match self {
            TaskState::Unspecified => return None,
            TaskState::Submitted => TaskStatus::Submitted,
            TaskState::Working => TaskStatus::Working,
            TaskState::Completed => TaskStatus::Completed,
            TaskState::Failed => TaskStatus::Failed,
            TaskState::Canceled => TaskStatus::Cancelled,
            TaskState::InputRequired => TaskStatus::InputRequired,
            TaskState::Rejected => TaskStatus::Rejected,
            TaskState::AuthRequired => TaskStatus::AuthRequired,
        })
    }
}

impl From<TaskStatus> for TaskState {
    fn from(status: TaskStatus) -> TaskState {
        match status {
            TaskStatus::Submitted => TaskState::Submitted,
            TaskStatus::Working => TaskState::Working,
            TaskStatus::InputRequired => TaskState::InputRequired,
            TaskStatus::AuthRequired => TaskState::AuthRequired,
            TaskStatus::Completed => TaskState::Completed,
            TaskStatus::Failed => TaskState::Failed,
            TaskStatus::Cancelled => TaskState::Canceled,
            TaskStatus::Rejected => TaskState::Rejected,
        }
    }
}

/// One piece of content: exactly one of text, raw bytes (base64), a URL or
/// JSON data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64 in JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A file by reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Structured data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// A file name for raw or URL content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The media type of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Part {
        Part {
            text: Some(text.into()),
            ..Part::default()
        }
    }

    /// A data part.
    pub fn data(data: Value) -> Part {
        Part {
            data: Some(data),
            media_type: Some("application/json".into()),
            ..Part::default()
        }
    }

    /// How many of the content fields are set (a valid part has one).
    pub(crate) fn contents(&self) -> usize {
        usize::from(self.text.is_some())
            + usize::from(self.raw.is_some())
            + usize::from(self.url.is_some())
            + usize::from(self.data.is_some())
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Chosen by its sender; unique per message.
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it continues, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who sent it.
    pub role: Role,
    /// Its content.
    pub parts: Vec<Part>,
    /// Extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs that apply to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Other tasks it refers to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// An agent's message with `parts`, with a fresh id.
    pub fn agent(parts: Vec<Part>) -> Message {
        Message::new(Role::Agent, parts)
    }

    /// A user's message with `parts`, with a fresh id.
    pub fn user(parts: Vec<Part>) -> Message {
        Message::new(Role::User, parts)
    }

    fn new(role: Role, parts: Vec<Part>) -> Message {
        Message {
            message_id: crate::ids::fresh(),
            context_id: None,
            task_id: None,
            role,
            parts,
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    /// The text of its text parts, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.parts.iter().filter_map(|p| p.text.as_deref()).collect();
        texts.join("\n")
    }

    /// The first data part's value.
    pub fn data(&self) -> Option<&Value> {
        self.parts.iter().find_map(|p| p.data.as_ref())
    }
}

/// Where a task stands, with the agent's word on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// The state.
    pub state: TaskState,
    /// The agent's message about it (a question while input is required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When it was reached (RFC 3339 UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// Something a task produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task.
    pub artifact_id: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its content.
    pub parts: Vec<Part>,
    /// Extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs that apply to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact named `name` holding `parts`, with a fresh id.
    pub fn new(name: impl Into<String>, parts: Vec<Part>) -> Artifact {
        Artifact {
            artifact_id: crate::ids::fresh(),
            name: Some(name.into()),
            description: None,
            parts,
            metadata: None,
            extensions: Vec::new(),
        }
    }
}

/// A task as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-generated, unguessable.
    pub id: String,
    /// The conversation it belongs to.
    pub context_id: String,
    /// Where it stands.
    pub status: Status,
    /// What it produced (left out of lists unless asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// The messages exchanged, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// Extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A change of a task's status, as streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The new status.
    pub status: Status,
    /// Extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A new or grown artifact, as streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The artifact (its new parts, when `append`).
    pub artifact: Artifact,
    /// Whether the parts add to an artifact sent before.
    #[serde(default)]
    pub append: bool,
    /// Whether this is the artifact's last piece.
    #[serde(default)]
    pub last_chunk: bool,
    /// Extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// One item of a stream (and of a push notification): exactly one of a
/// task, a message, a status update or an artifact update. Also the answer
/// of `SendMessage` (a task or a message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The whole task.
    Task(Task),
    /// A message (an agent answering without a task).
    Message(Message),
    /// A status change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact change.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamResponse {
    /// The state this item leaves the task in, when it says.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            StreamResponse::Task(task) => Some(task.status.state),
            StreamResponse::StatusUpdate(update) => Some(update.status.state),
            StreamResponse::Message(_) | StreamResponse::ArtifactUpdate(_) => None,
        }
    }
}

/// How a client wants `SendMessage` served.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SendMessageConfiguration {
    /// The media types the client takes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    /// Where to push the task's updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_push_notification_config: Option<PushConfig>,
    /// How much history the answer carries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Answer once the task exists instead of when it ends or waits.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub return_immediately: bool,
}

/// `SendMessage` and `SendStreamingMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// The tenant, when the agent serves several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The message.
    pub message: Message,
    /// How to serve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The credentials a push notification carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// The HTTP authentication scheme (`Bearer`, `Basic`, ...).
    pub scheme: String,
    /// Its credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// Where a task's updates are pushed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushConfig {
    /// The tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The configuration's id (the server picks one when empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The task.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// The webhook.
    pub url: String,
    /// A token the receiver checks (sent as `X-A2A-Notification-Token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Credentials for the `Authorization` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// `ListTasks`' filters and paging.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListTasksQuery {
    /// The tenant (ignored: one tenant per agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Only this conversation's tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Only tasks in this state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// At most this many (default 50, at most 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// Where the previous page ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
    /// How much history each task carries (none by default in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Only tasks whose status changed after this time (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_timestamp_after: Option<String>,
    /// Whether tasks carry their artifacts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_artifacts: Option<bool>,
}

/// One page of `ListTasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The tasks, newest first.
    pub tasks: Vec<Task>,
    /// The next page's token; empty on the last page.
    pub next_page_token: String,
    /// The page size used.
    pub page_size: i32,
    /// How many tasks match in all.
    pub total_size: i32,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn stream_responses_are_one_key_objects_in_protojson_spelling() {
        let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: Status {
                state: TaskState::InputRequired,
                message: None,
                timestamp: None,
            },
            metadata: None,
        });
        assert_eq!(
            serde_json::to_value(&update).unwrap(),
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}})
        );
        let back: StreamResponse = serde_json::from_value(serde_json::to_value(&update).unwrap()).unwrap();
        assert_eq!(back, update);
    }

    #[test]
    fn every_engine_status_maps_to_a_state_and_back() {
        for status in TaskStatus::ALL {
            let state = TaskState::from(status);
            assert_eq!(state.status(), Some(status));
            assert_eq!(serde_json::to_value(state).unwrap(), status.a2a_name());
            assert_eq!(state.is_terminal(), status.is_terminal());
        }
        assert_eq!(TaskState::Unspecified.status(), None);
    }

    #[test]
    fn a_message_reads_from_the_wire_with_defaults() {
        let message: Message = serde_json::from_value(json!({
            "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}, {"data": {"tool": "echo"}}]
        }))
        .unwrap();
        assert_eq!(message.text(), "hi");
        assert_eq!(message.data(), Some(&json!({"tool": "echo"})));
        assert!(
            serde_json::from_value::<Message>(json!({"messageId": "m", "role": "ROLE_BOSS", "parts": []})).is_err()
        );
    }
}
