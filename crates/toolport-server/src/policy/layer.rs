//! The shape every policy has: a layer around a tool call that may refuse
//! it, run it, or run it and look at how it ended.
//!
//! Like tower's `Layer`/`Service` pair in spirit, in the shape of axum's
//! middleware `Next`: a layer gets the call and the rest of the stack, and
//! decides whether and how to go on. Not tower itself, because a call's facts
//! are borrowed from the request (no clone per layer), gates wait inside
//! `call` rather than in `poll_ready`, and a layer that has nothing to do
//! for a call hands it on without a future of its own.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::RequestId;
use toolport_protocol::meta::Meta;
use toolport_protocol::tools::CallToolResult;

use crate::context::Principal;
use crate::error::ToolError;
use crate::tool::ToolEntry;

/// How a tool call ended, as the layers see it.
pub(crate) type CallOutcome = Result<CallToolResult, ToolError>;

/// A tool call on its way through the layers.
pub(crate) type CallFuture<'a> = Pin<Box<dyn Future<Output = CallOutcome> + Send + 'a>>;

/// What the layers know of one tool call. Borrowed from the request; copied
/// down the stack, so a layer may change what the ones inside it see.
#[derive(Clone, Copy)]
pub(crate) struct ToolCall<'a> {
    pub(crate) tool: &'a ToolEntry,
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) principal: Option<&'a Principal>,
    pub(crate) session: Option<&'a str>,
    pub(crate) request_id: &'a RequestId,
    pub(crate) meta: &'a Meta,
    /// The client's cancellation.
    pub(crate) cancel: &'a CancellationToken,
    /// When the server took the request.
    pub(crate) started: Instant,
    /// Set by the gates when the call had to wait for a place: its deadline
    /// then counts from when it got one.
    pub(crate) waited: bool,
}

impl ToolCall<'_> {
    /// The principal's subject; the anonymous caller is `""`, and shares one
    /// bucket and one gate with every other anonymous caller.
    pub(crate) fn subject(&self) -> &str {
        self.principal.map_or("", |p| p.subject.as_str())
    }
}

/// One policy around tool calls.
pub(crate) trait CallLayer: Send + Sync + fmt::Debug {
    /// Refuses the call, or runs it through `next` (the layers inside this
    /// one, then the handler).
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a>;
}

/// The rest of the stack below a layer: the inner layers, then the handler.
pub(crate) struct Next<'a> {
    layers: &'a [Box<dyn CallLayer>],
    handler: CallFuture<'a>,
}

impl<'a> Next<'a> {
    /// The whole stack around `handler`.
    pub(crate) fn new(layers: &'a [Box<dyn CallLayer>], handler: CallFuture<'a>) -> Self {
        Next { layers, handler }
    }

    /// Runs the call through the inner layers and the handler.
    pub(crate) fn run(self, call: ToolCall<'a>) -> CallFuture<'a> {
        match self.layers.split_first() {
            Some((layer, inner)) => layer.call(
                call,
                Next {
                    layers: inner,
                    handler: self.handler,
                },
            ),
            None => self.handler,
        }
    }
}
