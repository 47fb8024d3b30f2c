//! The Toolport MCP server framework.
//!
//! A tool is a plain `async fn` with a typed argument struct; resources and
//! prompts likewise. One [`Server`] answers both eras of MCP: the handshake
//! era (2024-11-05 … 2025-11-25, `initialize` then requests on a session) and
//! the stateless era (2026-07-28, every request self-describing). The same
//! handler code serves both, including asking the user for input
//! ([`RequestContext::elicit`]): a request to the client in the handshake era,
//! an `InputRequiredResult` and a retry in 2026-07-28.
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolport_server::{tool, Server};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs { a: i64, b: i64 }
//!
//! #[tokio::main]
//! async fn main() {
//!     let server = Server::builder("calculator", "1.0.0")
//!         .tool(tool("add").description("Adds two integers").handler(|args: AddArgs| async move {
//!             (args.a + args.b).to_string()
//!         }))
//!         .build()
//!         .expect("valid definitions");
//!     server.serve_stdio().await;
//! }
//! ```

pub mod activity;
pub mod admission;
pub mod audit;
mod cache;
pub mod completion;
mod context;
mod demand;
mod dispatch;
mod error;
mod events;
mod extension;
#[doc(hidden)]
pub mod fuzzing;
mod input;
mod listen;
mod methods;
mod metrics;
#[cfg(feature = "otel")]
mod otel;
pub mod policy;
mod prompt;
mod registry;
mod resource;
pub mod schema;
mod serve;
mod server;
mod session;
pub mod state;
mod task_state;
mod tasks;
mod tool;
pub mod uri_template;

pub use admission::{Admitted, Authorizer, Forbidden, Refusal, RoutingHeaders, TransportFacts};
pub use context::{Credential, INPUT_TIMEOUT, Principal, RequestContext};
pub use demand::DemandChange;
pub use dispatch::{CallContext, RequestEra, request_era};
pub use error::{ERROR_META, Failure, ResourceError, ToolError};
pub use events::ServerEvent;
pub use extension::{Extension, MethodHandler, MethodResult};
pub use input::InputRequired;
pub use prompt::{IntoPromptResult, PromptBuilder, PromptEntry, prompt};
pub use registry::{DefinitionError, Entry, Registry};
pub use resource::{IntoContents, ResourceEntry, ResourceRequest, TemplateEntry};
pub use serve::ServerConnection;
pub use server::{CacheHints, Server, ServerBuilder, ServerOptions};
pub use session::{Negotiated, Session};
/// The owner a caller's tasks are kept under (its subject, or one owner for
/// every unauthenticated caller).
pub use tasks::owner_of as task_owner;
pub use tool::{
    ArgsOnly, BoxFuture, IntoToolOutput, Json, NoArgs, TaskToolBuilder, ToolBuilder, ToolEntry, ToolHandler,
    WithContext, tool,
};
pub use toolport_protocol::tasks::TaskSupport;
pub use toolport_tasks::TaskEngine;

/// The README's example compiles as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
