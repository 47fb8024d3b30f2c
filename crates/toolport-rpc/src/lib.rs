//! The JSON-RPC engine under Toolport's MCP server, client and gateway.
//!
//! - [`transport`]: the Transport abstraction, two bounded channels;
//! - [`stdio`]: newline-delimited stdio, for this process and for a child;
//! - [`exchange`]: the in-flight engine: their running requests and ours
//!   waiting for answers, with responses and cancellations routed to them;
//! - [`panic`]: handlers that panic answer an internal error, logged and counted;
//! - [`peer`]: the Peer engine: ids, the pending table, dispatch, cancellation,
//!   timeouts, and [`peer::PeerChannel`], how handlers talk back.
//!
//! ```no_run
//! use toolport_rpc::peer::{connect, PeerOptions, RequestContext, Service};
//! use toolport_protocol::{ErrorObject, Request};
//! use serde_json::value::RawValue;
//!
//! struct Echo;
//! impl Service for Echo {
//!     async fn call(&self, request: Request, _cx: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
//!         Ok(serde_json::value::to_raw_value(&request.params).unwrap())
//!     }
//! }
//! # async fn run() {
//! let transport = toolport_rpc::stdio::own_stdio(toolport_rpc::framing::DEFAULT_MAX_LINE);
//! let (_peer, connection) = connect(transport, PeerOptions::default());
//! connection.serve(Echo).await;
//! # }
//! ```

pub mod exchange;
pub mod framing;
pub mod panic;
pub mod peer;
pub mod pending;
pub mod stdio;
pub mod transport;

pub use peer::{Connection, Peer, PeerChannel, PeerOptions, RequestContext, RpcError, Service, connect};
pub use transport::{Incoming, Outgoing, Transport};
