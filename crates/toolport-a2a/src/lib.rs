//! A2A 1.0 beside MCP.
//!
//! - [`types`]: the A2A data model in its JSON form.
//! - [`A2aService`]: the operations (send, stream, get, list, cancel,
//!   subscribe, push configurations) over an [`Agent`], with every task a
//!   record of the durable task engine ([`TaskBook`]).
//! - [`A2aMount`]: the JSON-RPC and HTTP+JSON bindings and the Agent Card,
//!   served beside the MCP endpoint of `toolport serve --a2a`.
//! - [`ToolSkills`]: every MCP tool of a server as an A2A skill.
//! - [`A2aClient`]: a client of both bindings.

mod agent;
mod book;
mod card;
mod client;
mod error;
mod ids;
mod jsonrpc;
mod mount;
mod push;
mod rest;
mod service;
mod skills;
mod sse;
mod time;
mod tls;
pub mod types;

pub use agent::{Agent, AgentError, BoxFuture, Caller, FnAgent, TaskContext, agent_fn};
pub use book::TaskBook;
pub use card::{CardConfig, CardSigner, canonical_payload};
pub use client::{A2aClient, Binding, ClientError};
pub use error::{A2aError, ERROR_DOMAIN};
pub use ids::fresh as fresh_id;
pub use mount::{A2aMount, AGENT_CARD_PATH, JSONRPC_PATH, REST_PATH};
pub use push::PushPolicy;
pub use service::A2aService;
pub use skills::ToolSkills;
pub use types::{
    AgentCard, AgentSkill, Artifact, ListTasksQuery, ListTasksResponse, Message, Part, PushConfig, Role,
    SendMessageConfiguration, SendMessageRequest, Status, StreamResponse, Task, TaskState,
};
