//! MCP tasks on the durable engine of `toolport-tasks`, in both revisions:
//! 2025-11-25's `basic/utilities/tasks` (the `tasks` capability, `params.task`
//! on `tools/call`, `tasks/get|result|list|cancel`) and 2026-07-28's
//! extension `io.modelcontextprotocol/tasks` (negotiated per request,
//! `tasks/get|update|cancel`, `notifications/tasks` on listen streams).
//!
//! The engine keeps the record; this module runs the tool behind it
//! (`run.rs`), answers the methods (`methods.rs`), shapes records for each
//! revision (`wire.rs`) and follows tasks on listen streams (`listen.rs`).
//! What a running handler shares with them is in `task_state.rs`.
//! A tool opts in with [`ToolBuilder::task_support`](crate::ToolBuilder::task_support);
//! its handler is the same as a plain tool's.

mod listen;
mod methods;
mod run;
mod wire;

use serde_json::json;
use toolport_protocol::ErrorObject;
use toolport_protocol::capabilities::ClientCapabilities;
use toolport_protocol::tasks::EXTENSION;

use crate::context::Principal;
use crate::error::ToolError;

use crate::server::ServerBuilder;
use crate::task_state::TaskRuntime;

pub(crate) use self::listen::TaskFollow;
pub(crate) use self::run::AsTask;

/// The owner of a caller's tasks: the authenticated subject, or one shared
/// owner for every unauthenticated caller (who can then see each other's
/// tasks; the server binds loopback by default).
pub fn owner_of(principal: Option<&Principal>) -> String {
    match principal {
        Some(p) if !p.subject.is_empty() => format!("sub:{}", p.subject),
        _ => "anonymous".to_owned(),
    }
}

/// Whether a 2026-07-28 request declared the tasks extension.
pub(crate) fn declares_extension(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(EXTENSION))
}

/// -32021 naming the tasks extension.
pub(crate) fn extension_required(why: &str) -> ErrorObject {
    let required = ClientCapabilities {
        extensions: Some([(EXTENSION.to_owned(), json!({}))].into_iter().collect()),
        ..Default::default()
    };
    let mut error = ToolError::missing_capability_error(&required);
    error.message = format!("Missing required client capability: {why} needs the extension {EXTENSION}");
    error
}

impl ServerBuilder {
    /// Runs tools built with
    /// [`ToolBuilder::task_support`](crate::ToolBuilder::task_support) as
    /// durable tasks on `engine`, in both revisions: the 2025-11-25 `tasks`
    /// capability and methods, and the 2026-07-28 extension
    /// `io.modelcontextprotocol/tasks`.
    pub fn tasks(mut self, engine: toolport_tasks::TaskEngine) -> Self {
        let runtime = TaskRuntime::new(engine);
        self.extensions.retain(|e| e.id() != EXTENSION);
        self.extensions.push(methods::extension(runtime.clone()));
        self.tasks = Some(runtime);
        self
    }
}
