//! MCP wire types for every supported revision, and the JSON-RPC 2.0 envelope.
//!
//! This crate is pure data: no async, no I/O. It speaks both eras of MCP:
//! the handshake era (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25) and the
//! stateless era (2026-07-28). The types are a superset of every revision; the
//! fields a revision does not know stay `None` and are not serialized, so one
//! set of types serves all of them. What differs by era (`resultType`, cache
//! hints, error codes) is chosen by the server at the edge.
//!
//! ```
//! use toolport_protocol::jsonrpc::{decode, Frame, Message};
//! use toolport_protocol::tools::CallToolRequestParams;
//!
//! let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
//! let Ok(Frame::Single(Message::Request(req))) = decode(line) else { panic!() };
//! let params: CallToolRequestParams = serde_json::from_value(req.params.unwrap()).unwrap();
//! assert_eq!(params.name, "echo");
//! ```

pub mod annotations;
pub mod capabilities;
pub mod completion;
pub mod content;
pub mod elicitation;
pub mod error;
pub mod jsonrpc;
pub mod lifecycle;
pub mod logging;
pub mod meta;
pub mod mrtr;
pub mod param_headers;
pub mod progress;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod roots;
pub mod sampling;
pub mod subscriptions;
pub mod tasks;
pub mod tools;
pub mod version;

pub use error::{ErrorCode, ErrorObject};
pub use jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId, Response};
pub use version::{Era, ProtocolVersion};
