//! What the console shows when the server has it: a gateway's upstreams and
//! the server's tasks. Each is a small trait the part that owns the data
//! implements; without one, the console says the view is not available and
//! works on.

use std::fmt;

use serde::Serialize;
use toolport_http::auth::AuthFuture;
use toolport_server::Principal;

/// One upstream server of a gateway, as its supervisor sees it now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpstreamStatus {
    /// Its configured name.
    pub name: String,
    /// How it is reached: `stdio` or `http`.
    pub transport: String,
    /// `up`, `starting`, `down`, `crash_loop` or `stopped` (a gateway's supervisor states).
    pub state: String,
    /// Why, in a few words, when it is not up (its last error).
    pub detail: Option<String>,
    /// Tools it offers through the gateway.
    pub tools: usize,
    /// When its state last changed, RFC 3339 UTC.
    pub since: Option<String>,
}

/// Reports a gateway's upstreams.
pub trait UpstreamHealth: Send + Sync + fmt::Debug + 'static {
    /// Every upstream, in configuration order.
    fn upstreams(&self) -> AuthFuture<'_, Vec<UpstreamStatus>>;
}

/// One task, as a list of tasks shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSummary {
    /// The task id.
    pub id: String,
    /// Its status (`working`, `input_required`, `completed`, `failed`, `cancelled`).
    pub status: String,
    /// What it runs (the tool), if known.
    pub tool: Option<String>,
    /// Who made it, if authenticated.
    pub principal: Option<String>,
    /// When it was created, RFC 3339 UTC.
    pub created: String,
    /// When it last changed, RFC 3339 UTC.
    pub updated: String,
}

/// Lists the server's tasks.
pub trait TaskSource: Send + Sync + fmt::Debug + 'static {
    /// The most recent tasks (at most `limit`) that `principal` may see;
    /// every caller's when `all`.
    fn tasks<'a>(
        &'a self,
        principal: Option<&'a Principal>,
        all: bool,
        limit: usize,
    ) -> AuthFuture<'a, Vec<TaskSummary>>;
}
