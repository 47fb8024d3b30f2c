//! The MCP client of Toolport.
//!
//! - **Both transports**: a spawned server over stdio ([`Client::stdio`]) or
//!   Streamable HTTP ([`Client::http`]).
//! - **Both eras**: `server/discover` at 2026-07-28 first, the `initialize`
//!   handshake when the server does not speak it, or a pinned version
//!   ([`VersionPolicy`]).
//! - **Concurrency**: any number of calls in flight on one client, each
//!   answer routed to its caller by id; a bound on requests in flight and on
//!   HTTP connections.
//! - **No call waits forever**: a default timeout with per-call overrides;
//!   a call that is dropped or times out is cancelled on the server
//!   (`notifications/cancelled`, or closing its stream in 2026-07-28).
//! - **Resilience**: jittered backoff with a give-up for transport failures,
//!   a new session when the old one expired (404), requests that are safe to
//!   repeat sent again after a broken connection, dropped handshake-era
//!   streams resumed with `Last-Event-ID`, a stdio server restarted when it died;
//!   tool calls whose failure says `retryable` (in `_meta` under
//!   `dev.toolport/error`) sent again when they are safe to repeat (an
//!   idempotent or read-only tool, or a call with an idempotency key), with
//!   capped exponential backoff that honours `Retry-After`.
//! - **Caching**: list and read results kept by their `ttlMs` hints in a
//!   bounded cache, forgotten when the server says they changed.
//! - **Tracing**: a `traceparent` in a call's `_meta` also goes out as the
//!   HTTP `traceparent` header, so one trace spans client, gateway and server.
//! - **Input**: one [`ClientHandler`] answers elicitation, sampling and roots
//!   in both eras (server requests, or MRTR `InputRequiredResult` retries).
//! - **Events**: list changes, resource updates and logs as a stream ([`Client::events`]).
//! - **Authorization**: a [`TokenProvider`] hook for bearer tokens and
//!   401/403 challenges (the OAuth flows live in `toolport-auth`).
//!
//! ```no_run
//! use toolport_client::{Client, ServerCommand};
//! # async fn run() -> Result<(), toolport_client::ClientError> {
//! let client = Client::stdio(ServerCommand::new("toolport", ["serve", "--stdio"])).connect().await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(()) }
//! ```

pub mod auth;
mod cache;
mod client;
mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod handler;
mod http;
mod inbound;
mod link;
#[cfg(feature = "auth")]
pub mod oauth;
mod options;
#[cfg(feature = "auth")]
mod pinning;
mod sse;
mod stdio;

pub use auth::{AuthChallenge, AuthDecision, Credentials, StaticToken, TokenProvider};
pub use client::{Client, ClientBuilder, Events, TaskStart, TaskState};
pub use error::ClientError;
pub use handler::{ClientHandler, NoInput};
pub use inbound::ClientEvent;
pub use link::ServerInfo;
pub use options::{Backoff, CallOptions, ClientOptions, IDEMPOTENCY_KEY, Progress, VersionPolicy};
pub use stdio::ServerCommand;
