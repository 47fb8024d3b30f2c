//! The states a task passes through: the union of MCP's task states
//! (2025-11-25 `basic/utilities/tasks`, and the 2026-07-28 tasks extension)
//! and A2A 1.0's `TaskState`, so both protocols map onto one record.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a task stands. Stored as its [`as_str`](TaskStatus::as_str) name.
///
/// MCP knows `working`, `input_required`, `completed`, `failed` and
/// `cancelled`; A2A adds `submitted`, `auth_required` and `rejected` (and
/// spells cancelled `TASK_STATE_CANCELED`). [`TaskStatus::mcp_name`] and
/// [`TaskStatus::a2a_name`] give each protocol's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Accepted, not yet started (A2A `TASK_STATE_SUBMITTED`).
    Submitted,
    /// Running.
    Working,
    /// Waiting for an answer from the requester (MCP input requests, A2A
    /// `TASK_STATE_INPUT_REQUIRED`).
    InputRequired,
    /// Waiting for the requester to authenticate (A2A
    /// `TASK_STATE_AUTH_REQUIRED`).
    AuthRequired,
    /// Finished with a result (terminal). A tool result with `isError` is
    /// still `completed`.
    Completed,
    /// Ended by an error (terminal).
    Failed,
    /// Cancelled by its requester (terminal).
    Cancelled,
    /// Refused by the agent before it started (terminal; A2A only).
    Rejected,
}

impl TaskStatus {
    /// Every status, for tests and for validating stored values.
    pub const ALL: [TaskStatus; 8] = [
        TaskStatus::Submitted,
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::AuthRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
        TaskStatus::Rejected,
    ];

    /// The name stored in the database and used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Submitted => "submitted",
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::AuthRequired => "auth_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Rejected => "rejected",
        }
    }

    /// Whether the task is over: a terminal status never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled | TaskStatus::Rejected
        )
    }

    /// MCP's `TaskStatus` spelling. MCP has no `submitted`, `auth_required`
    /// or `rejected`: they show as `working`, `input_required` and `failed`,
    /// the MCP states a client acts on the same way.
    pub fn mcp_name(self) -> &'static str {
        match self {
            TaskStatus::Submitted | TaskStatus::Working => "working",
            TaskStatus::InputRequired | TaskStatus::AuthRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed | TaskStatus::Rejected => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// A2A 1.0's `TaskState` enum name (ProtoJSON spelling).
    pub fn a2a_name(self) -> &'static str {
        match self {
            TaskStatus::Submitted => "TASK_STATE_SUBMITTED",
            TaskStatus::Working => "TASK_STATE_WORKING",
            TaskStatus::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            TaskStatus::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
            TaskStatus::Completed => "TASK_STATE_COMPLETED",
            TaskStatus::Failed => "TASK_STATE_FAILED",
            TaskStatus::Cancelled => "TASK_STATE_CANCELED",
            TaskStatus::Rejected => "TASK_STATE_REJECTED",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored status name that is not one of [`TaskStatus::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown task status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for TaskStatus {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_status() {
        for status in TaskStatus::ALL {
            assert_eq!(status.as_str().parse::<TaskStatus>(), Ok(status));
            let json = serde_json::to_value(status).unwrap();
            assert_eq!(json, status.as_str());
        }
        assert_eq!("canceled".parse::<TaskStatus>(), Err(UnknownStatus("canceled".into())));
    }

    #[test]
    fn exactly_the_four_ends_are_terminal() {
        let terminal: Vec<_> = TaskStatus::ALL.into_iter().filter(|s| s.is_terminal()).collect();
        assert_eq!(
            terminal,
            [
                TaskStatus::Completed,
                TaskStatus::Failed,
                TaskStatus::Cancelled,
                TaskStatus::Rejected
            ]
        );
        // A terminal state stays terminal in MCP's spelling too.
        for status in TaskStatus::ALL {
            let mcp_terminal = matches!(status.mcp_name(), "completed" | "failed" | "cancelled");
            assert_eq!(mcp_terminal, status.is_terminal(), "{status}");
        }
    }
}
