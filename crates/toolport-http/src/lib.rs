//! Streamable HTTP for both eras of MCP (`basic/transports/streamable-http`).
//!
//! One endpoint (default `POST/GET/DELETE /mcp` on 127.0.0.1:8080) decides per
//! request which era it serves:
//!
//! - **2026-07-28**: POST only; `MCP-Protocol-Version`, `Mcp-Method` and
//!   `Mcp-Name` must mirror the body (400 `-32020` otherwise); no sessions;
//!   JSON or SSE answers; closing an answer stream cancels its request.
//! - **handshake era** (2025-03-26 … 2025-11-25): `initialize` creates a
//!   session (`Mcp-Session-Id`, 128 random bits) once it succeeded; later
//!   requests need it (400 without, 404 when unknown or expired); GET opens
//!   the server-to-client stream; SSE events carry ids and are recorded so a
//!   dropped stream resumes from `Last-Event-ID`; DELETE ends the session.
//!
//! Every request passes Origin and Host checks (403), header (431) and body
//! (413) limits, Content-Type (415), Accept (406) and, when an
//! [`Authenticator`] protects the endpoint, authentication (401) before it is
//! read; each JSON-RPC request is then authorized (403).
//!
//! Beside the endpoint: `/health` (the process answers), `/ready` (it should
//! get traffic: not draining, and every [`ReadinessCheck`] passes) and
//! `/metrics` (with the process's own metrics and build info), and whatever
//! a [`Mount`] serves (the web console). [`BoundServer::serve`] drains on shutdown: `/ready` fails at
//! once, the server serves on for [`HttpConfig::drain_delay`], then stops
//! accepting, ends standalone streams and gives in-flight requests
//! [`HttpConfig::shutdown_grace`] to finish.

mod answer;
pub mod auth;
mod body;
pub mod config;
mod endpoint;
#[doc(hidden)]
pub mod fuzzing;
pub mod guard;
pub mod headers;
mod live;
pub mod mount;
mod operations;
mod outbox;
mod process;
pub mod ready;
mod replicas;
mod reply;
mod request_body;
mod serve;
mod sessionless;
mod sse;
mod state;
pub mod store;
mod topics;

pub use auth::{Authenticator, Denial, Document};
pub use config::{HttpConfig, ResponseMode};
pub use mount::{Access, LiveView, Mount, MountBody, MountRequest, Mounts, SessionSummary};
pub use ready::ReadinessCheck;
pub use serve::{BoundServer, HttpServer, LATENCY_BUCKETS};
pub use state::MetricsRender;
