//! What the in-process tests of the server share: a context for requests
//! that come with nowhere to send messages back.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;
use toolport_rpc::peer::BoxFuture;
use toolport_rpc::{PeerChannel, RpcError};
use toolport_server::{CallContext, Principal};

/// A client that takes notifications and answers no request.
#[derive(Debug)]
pub struct NullChannel;

impl PeerChannel for NullChannel {
    fn notify(&self, _: toolport_protocol::Notification) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(async { Ok(()) })
    }
    fn request(&self, _: String, _: Option<Value>, _: Duration) -> BoxFuture<'_, Result<Box<RawValue>, RpcError>> {
        Box::pin(async { Err(RpcError::Closed) })
    }
}

/// A request's context: no session, nowhere to talk back, this principal.
pub fn context_of(principal: Option<Principal>, cancel: CancellationToken) -> CallContext {
    CallContext {
        session: Default::default(),
        channel: Arc::new(NullChannel),
        cancel,
        principal,
        session_id: None,
    }
}

/// An anonymous request's context that is never cancelled.
pub fn call_context() -> CallContext {
    context_of(None, CancellationToken::new())
}
